"""An entrypoint edited to exit 0 early: an integrity finding, and strict C1 fails.

- ``entrypoint-edited``: ``train.py`` prints the success marker and exits 0 first.  Strict
  C1 fails ``integrity``; ``--reb-compat`` passes it (the official rule: exit 0 and the
  marker); both record the finding ``modified train.py`` with its diff.

The check itself (``pytest_reb.evidence.integrity``) is also run directly against the
demo image to show what it reports for each kind of edit, and that it needs
no ``git`` in the target (the demo image has none).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from support.hostile import demo_target, run_reb
from support.images import demo_module

from pytest_reb.evidence import integrity
from pytest_reb.targets import DockerTarget

pytestmark = pytest.mark.container

REPO = "/data/project/repo"
EDIT = 'import sys; print("TRAIN_OK"); sys.exit(0)'


@pytest.mark.parametrize("mode", ["strict", "compat"])
def test_entrypoint_edited_to_exit_early(pytester: pytest.Pytester, mode: str,
                                         hostile: Callable[[str], str],
                                         image_commit: str) -> None:
    args = ["-m", "c1"] + (["--reb-compat"] if mode == "compat" else [])
    run = run_reb(pytester, hostile("entrypoint-edited"),
                  {"test_demo__tinynet": demo_module(image_commit)}, *args)
    c1 = run["c1"]
    [edit] = c1.findings
    assert (edit["kind"], edit["path"]) == ("modified", "train.py")
    assert f"+{EDIT}" in edit["diff"]
    assert (c1.strict, c1.compat) == (False, True)  # exit 0 and TRAIN_OK: the official pass
    if mode == "strict":
        assert (c1.status, c1.category) == ("failed", "integrity")
        assert "train.py" in c1.message and "pinned commit" in c1.message
        run.result.stdout.fnmatch_lines(["*C1 integrity: the entrypoint train.py is not the "
                                         "pinned commit's*"])
    else:
        assert (c1.status, c1.category) == ("passed", None)


@pytest.fixture(scope="module")
def target(demo_image: str) -> Iterator[DockerTarget]:
    yield from demo_target(demo_image, "tests-integrity")


def found_after(target: DockerTarget, commit: str, script: str) -> dict[str, dict[str, Any]]:
    """The findings (by path) after ``script`` ran in the checkout; the container goes with
    them, so the next test gets a fresh one."""
    assert target.exec(["sh", "-c", f"cd {REPO} && {script}"], timeout=15).exit_code == 0
    try:
        return {f["path"]: f for f in integrity.check(target, REPO, commit)}
    finally:
        target.close()


def kinds(found: dict[str, dict[str, Any]]) -> dict[str, str]:
    return {path: f["kind"] for path, f in found.items()}


def test_intact_checkout_has_no_finding_and_git_is_not_needed(target: DockerTarget,
                                                             image_commit: str) -> None:
    assert target.exec(["sh", "-c", "command -v git"], timeout=15).exit_code != 0
    assert integrity.check(target, REPO, image_commit) == []


def test_each_kind_of_edit(target: DockerTarget, image_commit: str) -> None:
    got = found_after(target, image_commit, (
        "printf 'x\\n' >> tinynet/model.py && rm README.md "
        "&& chmod 755 configs/tiny.yaml && ln -sf /etc/passwd requirements.txt "
        "&& rm -r tinynet/__pycache__ 2>/dev/null; touch untracked.py "
        "&& mkdir -p checkpoints && head -c 4096 /dev/urandom > checkpoints/vits.pth"))
    assert kinds(got) == {
        "README.md": "deleted", "configs/tiny.yaml": "mode_changed",
        "requirements.txt": "type_changed", "tinynet/model.py": "modified",
        "untracked.py": "untracked"}  # a top-level module shadows `import untracked`;
    # the weights an agent downloads into the checkout are data: no finding
    assert got["tinynet/model.py"]["diff"].endswith("+x")
    assert "now a symlink" in got["requirements.txt"]["detail"]


def test_an_environment_inside_the_checkout_is_not_walked(target: DockerTarget,
                                                          image_commit: str,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """An agent's venv or conda env in the checkout, under any name, is the environment's,
    not untracked code: a torch install there ran the walk past its bound and made an honest
    checkout unverifiable.  A package that carries the marker, or a skipped folder's name, is
    still a package."""
    monkeypatch.setattr(integrity, "MAX_WALK", 50)
    got = found_after(target, image_commit, (
        "mkdir -p agent-env/lib/site conda/conda-meta torch "
        "&& touch agent-env/pyvenv.cfg agent-env/lib/site/conftest.py conda/conftest.py "
        "&& for i in $(seq 60); do touch agent-env/lib/site/m$i.py; done "
        "&& touch torch/__init__.py torch/pyvenv.cfg && mkdir venv && touch venv/__init__.py"))
    # top-level packages shadow `import torch` and the standard library's `venv`
    assert kinds(got) == {"torch": "untracked", "venv": "untracked"}


def test_a_dependency_cloned_into_the_checkout_brings_no_probe_file(target: DockerTarget,
                                                                    image_commit: str) -> None:
    """An agent clones a dependency into the checkout to install it: its pyproject.toml,
    setup.cfg and conftest.py sit in folders of no tracked file, where neither pytest nor
    pyright reads them for a stage.  Its sitecustomize.py still counts (the path may reach
    it), and so do configs at the root or beside tracked files."""
    got = found_after(target, image_commit, (
        "mkdir -p deps/somelib/tests && touch deps/somelib/pyproject.toml deps/somelib/setup.cfg "
        "deps/somelib/tests/conftest.py deps/somelib/sitecustomize.py "
        "pytest.ini tinynet/conftest.py"))
    assert kinds(got) == {"deps/somelib/sitecustomize.py": "untracked",
                          "pytest.ini": "untracked", "tinynet/conftest.py": "untracked"}


def test_doctored_object_store_and_missing_commit(target: DockerTarget,
                                                  image_commit: str) -> None:
    moved, found = integrity.check(target, REPO, "0" * 40)
    assert (moved["kind"], moved["path"]) == ("head_moved", ".git/HEAD")
    assert found["kind"] == "unverifiable" and "not in the checkout's object store" in \
        found["detail"]
    # replace the pinned commit's loose object by another commit's bytes
    obj = f"{REPO}/.git/objects/{image_commit[:2]}/{image_commit[2:]}"
    script = (f"set -e; test -f {obj}; chmod u+w {obj}; "
              f"cp $(ls -d {REPO}/.git/objects/??/* | grep -v {image_commit[2:]} | head -1) {obj}")
    res = target.exec(["sh", "-c", script], timeout=15)
    if res.exit_code != 0:
        pytest.skip(f"the demo checkout's commit is packed: {res.stderr.strip()}")
    try:
        [found] = [f for f in integrity.check(target, REPO, image_commit)
                   if f["kind"] == "unverifiable"]
        assert "does not hash to its name" in found["detail"]
    finally:
        target.close()


def test_target_without_a_host_view_uses_its_own_git(image_commit: str) -> None:
    """A target the host cannot see into (ssh://...): the check asks the target's own git."""

    class Fake:
        exit_code, timed_out, stdout, stderr = 127, False, "", "git: not found"

    calls: list[list[str]] = []

    class Target:
        def exec(self, argv: list[str], **kw: Any) -> Fake:
            calls.append(argv)
            return Fake()

        @contextlib.contextmanager
        def frozen_view(self, devices: Any = ()) -> Iterator[None]:
            yield None  # the host cannot see its files

    [found] = integrity.check(Target(), REPO, image_commit)  # type: ignore[arg-type]
    assert found["kind"] == "unverifiable" and "its git could not compare" in found["detail"]
    assert calls[0][:1] == ["git"] and "core.fsmonitor=false" in calls[0]


def test_our_shim_mount_is_not_an_untracked_file(demo_image: str, image_commit: str,
                                                 tmp_path: Path) -> None:
    """The shim folder pytest-reb mounts at ``benchmark_scripts`` holds a sitecustomize.py;
    the walk must not take it for the image's (real run of long-context-attention: strict C0
    failed ``integrity`` on an honest image).  The image's own folder there is still walked."""
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "sitecustomize.py").write_text("# ours\n")
    for own in (False, True):
        for t in demo_target(demo_image, f"tests-integrity-shim-{int(own)}"):
            if own:
                script = f"mkdir -p {REPO}/benchmark_scripts && touch {REPO}/benchmark_scripts/x.py"
                script += f" {REPO}/benchmark_scripts/sitecustomize.py"
                assert t.exec(["sh", "-c", script], timeout=15).exit_code == 0
                got = integrity.check(t, REPO, image_commit)
                assert [(f["kind"], f["path"]) for f in got] == [
                    ("untracked", "benchmark_scripts/sitecustomize.py")]
            else:
                assert t.mount(str(shim), f"{REPO}/benchmark_scripts") is not None
                assert t.mounted() == {f"{REPO}/benchmark_scripts"}
                assert integrity.check(t, REPO, image_commit) == []
