"""The C0 tier for real on this machine: ``LocalTarget``, the host's node and pyright, and a
bare venv as the environment under test (no Docker); interpreters that do not exist, lie
or hang.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from support.c0 import local_ctx
from support.repomodules import write_tree as tree

from pytest_reb.pyramid.c0_imports import imports_total, probe

SAMPLE = {
    "train.py": "import os\nimport yaml\nfrom pkg.model import Net\n"
                "import definitely_absent_xyz.sub\n",
    "pkg/__init__.py": "from .model import Net\n",
    "pkg/model.py": "import json\nimport definitely_absent_xyz\n",
    "tests/test_model.py": "import pkg\nfrom six.moves import range\n",
}


def listing(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() if p.is_file() else b"<dir>"
            for p in sorted(root.rglob("*"))}


def test_local_strict_lists_missing_and_stub_only_names(tmp_path: Path, bare_python: str) -> None:
    repo = tree(tmp_path / "repo", SAMPLE)
    before = listing(repo)
    o = probe(local_ctx(repo, bare_python, total=imports_total(repo)))
    assert (o.status, o.category, o.strict, o.compat) == ("failed", "deps", False, True)
    ev = o.evidence
    assert ev["missing"] == ["definitely_absent_xyz", "six", "yaml"]
    assert ev["missing_official"] == ["definitely_absent_xyz"]
    assert ev["missing_count"] == 3 and ev["imports_total"] == 6 and ev["figure"] == "3/6"
    assert ev["bound"] is True and ev["targets"] == ["pkg", "tests", "train.py"]
    assert ev["files_analyzed"] == 4 and ev["pyright_version"]
    assert ev["pyright_checker"] == "imports"  # probes/c0_checker.js patched pyright's checker
    assert ev["missing_where"]["yaml"].endswith("train.py:2")
    assert o.message == ("3 of 6 imports unresolved: definitely_absent_xyz, six, yaml; "
                         "pyright analysed 4 files")
    assert listing(repo) == before  # nothing written into the checkout
    # its own scratch folder is gone (others' may exist: tests run in parallel)
    assert o.evidence["scratch"].startswith("/tmp/reb-c0-")
    assert not Path(o.evidence["scratch"]).exists()


def test_the_hint_names_what_the_environment_metadata_says(tmp_path: Path,
                                                           bare_python: str) -> None:
    """The driver asks the interpreter's metadata about the names that may be missing, in
    the analysis's own exec: a name an installed distribution provides is hinted by it."""
    site = next(Path(bare_python).parents[1].glob("lib/python*/site-packages"))
    (site / "yaml_stubs_only-1.0.dist-info").mkdir()
    (site / "yaml_stubs_only-1.0.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: yaml-stubs-only\nVersion: 1.0\n")
    (site / "yaml_stubs_only-1.0.dist-info" / "top_level.txt").write_text("yaml\n")
    try:
        repo = tree(tmp_path / "repo", {"train.py": "import yaml\n"})
        o = probe(local_ctx(repo, bare_python, total=1))
    finally:
        shutil.rmtree(site / "yaml_stubs_only-1.0.dist-info")
    assert o.evidence["missing"] == ["yaml"]
    assert "install yaml-stubs-only into" in o.diagnosis[0]["hint"]


def test_local_compat_counts_the_official_way_and_passes(tmp_path: Path, bare_python: str) -> None:
    repo = tree(tmp_path / "repo", SAMPLE)
    o = probe(local_ctx(repo, bare_python, compat=True, total=6))
    assert (o.status, o.category, o.strict, o.compat) == ("passed", None, False, True)
    assert o.evidence["missing"] == ["definitely_absent_xyz"] and o.evidence["missing_count"] == 1


def test_a_bundle_that_counts_nothing_gives_compat_its_zero_and_strict_the_names(
        tmp_path: Path, bare_python: str) -> None:
    """Four official bundles' name regex matches no pyright message (docs/real-runs.md):
    their official count is 0 on any environment, so compat's is too; strict is unchanged."""
    repo = tree(tmp_path / "repo", SAMPLE)
    why = "its regex matches no pyright message"
    o = probe(local_ctx(repo, bare_python, compat=True, total=6, counts_none=why))
    assert (o.status, o.compat) == ("passed", True)
    assert o.evidence["missing_count"] == 0 and o.evidence["missing_official"] == []
    assert o.evidence["missing_by_the_rule"] == ["definitely_absent_xyz"]
    assert o.evidence["official_counts_none"] == why
    o = probe(local_ctx(repo, bare_python, total=6, counts_none=why))
    assert o.evidence["missing"] == ["definitely_absent_xyz", "six", "yaml"] and not o.strict


def test_an_installed_package_is_not_missing(tmp_path: Path, bare_python: str) -> None:
    """The host's own interpreter has PyYAML and six: only the absent name remains."""
    repo = tree(tmp_path / "repo", SAMPLE)
    o = probe(local_ctx(repo, sys.executable, total=6))
    assert o.evidence["missing"] == ["definitely_absent_xyz"]


def test_zero_missing_passes_both_verdicts(tmp_path: Path, bare_python: str) -> None:
    repo = tree(tmp_path / "repo", {"src/lib/__init__.py": "import json\nfrom lib import x\n",
                                    "src/lib/x.py": "", "tests/t.py": "import lib\n"})
    o = probe(local_ctx(repo, bare_python, total=2))
    assert (o.status, o.strict, o.compat) == ("passed", True, True), o.message
    assert o.evidence["targets"] == ["src", "tests"] and o.evidence["missing_count"] == 0
    assert o.message.startswith("0 of 2 imports unresolved; pyright ")


def test_the_repository_config_cannot_hide_missing_imports(tmp_path: Path,
                                                           bare_python: str) -> None:
    repo = tree(tmp_path / "repo", {
        "pyrightconfig.json": '{"include": ["lib"], "reportMissingImports": "none",\n'
                              ' "typeCheckingMode": "strict", "venvPath": ".", "venv": "fake",}',
        "lib/a.py": "import absent_one\n", "other/b.py": "import absent_two\n",
        "fake/lib/python3.11/site-packages/absent_one/__init__.py": "",
    })
    o = probe(local_ctx(repo, bare_python, total=2))
    assert o.evidence["selection"] == "pyrightconfig.json" and o.evidence["targets"] == ["lib"]
    assert o.evidence["missing"] == ["absent_one"] and o.evidence["bound"] is True


def test_a_pyproject_pyright_table_chooses_targets_only(tmp_path: Path, bare_python: str) -> None:
    repo = tree(tmp_path / "repo", {
        "pyproject.toml": "[project]\nname = 'x'\n\n[tool.pyright]\ninclude = ['src']\n"
                          "reportMissingImports = 'none'\n",
        "src/pk/__init__.py": "import gone_a\n", "other/x.py": "import gone_b\n",
    })
    o = probe(local_ctx(repo, bare_python, total=2))
    assert o.evidence["selection"] == "pyproject.toml" and o.evidence["targets"] == ["src"]
    assert "extends" not in o.evidence["config"]
    assert o.evidence["missing"] == ["gone_a"]


def test_hundreds_of_missing_names_survive_the_output_limit(tmp_path: Path,
                                                            bare_python: str) -> None:
    """More than fits in 64 KiB as diagnostics: the driver sends names only, and all arrive."""
    names = [f"missing_module_with_a_long_name_{i:04d}" for i in range(400)]
    repo = tree(tmp_path / "repo", {
        f"package_with_a_long_name_{j}/module_with_a_long_name.py":
            "".join(f"import {n}.sub.deeper\n" for n in names[j::4]) for j in range(4)})
    o = probe(local_ctx(repo, bare_python, total=400))
    assert o.evidence["diagnostics"].get("compact") is True
    assert "truncated" not in o.evidence["diagnostics"]
    assert o.evidence["missing_count"] == 400 and o.evidence["missing"] == sorted(names)


def test_a_relative_interpreter_is_not_bound(tmp_path: Path) -> None:
    """``python3`` runs from PATH, but pyright cannot use it: a failure, never a silent pass."""
    repo = tree(tmp_path / "repo", SAMPLE)
    o = probe(local_ctx(repo, "python3", total=6))
    assert (o.status, o.category, o.strict) == ("failed", "pyright_wrong_interpreter", False)
    assert "only its bundled typeshed" in o.message and o.evidence["bound"] is False
    assert o.evidence["missing_count"] is None  # a count from no environment is no count
    compat = probe(local_ctx(repo, "python3", total=6, compat=True))
    assert (compat.status, compat.evidence["missing_count"]) == ("passed", 1)


def test_an_interpreter_that_does_not_exist(tmp_path: Path) -> None:
    repo = tree(tmp_path / "repo", SAMPLE)
    o = probe(local_ctx(repo, "/nonexistent/bin/python", total=6))
    assert (o.status, o.category, o.strict, o.compat) == (
        "failed", "entrypoint_not_found", False, False)
    assert o.evidence["missing_count"] is None and "/nonexistent/bin/python" in o.message
    compat = probe(local_ctx(repo, "/nonexistent/bin/python", total=6, compat=True))
    assert compat.status == "failed"
    assert compat.evidence["missing_count"] == 0
    assert compat.evidence["counted_as"] == "official: failed run = 0 missing"


def test_no_report_and_no_override_is_missing_report(tmp_path: Path) -> None:
    o = probe(local_ctx(tmp_path, None))
    assert (o.status, o.category) == ("failed", "missing_report")
    assert o.message == "no report at x" and o.evidence["missing_count"] is None


def test_no_checkout_and_an_empty_checkout(tmp_path: Path, bare_python: str) -> None:
    o = probe(local_ctx(tmp_path / "absent", bare_python))
    assert (o.category, o.strict) == ("entrypoint_not_found", False)
    assert "no checkout at" in o.message
    o = probe(local_ctx(tree(tmp_path / "empty", {"README.md": "x"}), bare_python))
    assert o.category == "entrypoint_not_found" and "nothing for pyright" in o.message


def test_an_interpreter_that_lies_about_itself_is_not_bound(tmp_path: Path) -> None:
    """Nonsense in place of sys.path and version: a failure with a reason, not a crash."""
    liar = tmp_path / "python"
    liar.write_text("#!/bin/sh\necho 'REB_C0_PY {\"version\": 3, \"path\": "
                    "[1, \"/usr\", [\"/tmp\", \"yes\"], [\"/\", true, 3]]}'\n")
    liar.chmod(0o755)
    o = probe(local_ctx(tree(tmp_path / "repo", SAMPLE), str(liar)))
    assert (o.status, o.category) == ("failed", "pyright_wrong_interpreter")
    assert "no import directories" in o.message
    assert "pythonVersion" not in o.evidence["config"]


def test_an_interpreter_that_hangs_is_a_timeout(tmp_path: Path) -> None:
    hang = tmp_path / "python"
    hang.write_text("#!/bin/sh\nsleep 30\n")
    hang.chmod(0o755)
    ctx = local_ctx(tree(tmp_path / "repo", SAMPLE), str(hang))
    ctx.target.timeout_scale = 0.02  # 2.4 s for the interpreter
    o = probe(ctx)
    assert (o.status, o.category) == ("failed", "timeout") and "did not answer" in o.message
