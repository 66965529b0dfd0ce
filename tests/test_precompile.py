"""Bytecode compiled before an image's first stage (``pytest_reb/targets/precompile.py``).

What must hold: what is compiled is what runs at import time (module-level imports followed
through the interpreter's search path as its path finder would, not a function's, not one
under ``if TYPE_CHECKING:``); each kept file is the host's compile of the bytes it read,
checked by hash, exactly as ``bytecode.store`` makes it; nothing is compiled for another
Python version or under our mounts; the same sources in another image are linked, not
compiled again; and on the demo image the sources are read where nothing of the image ran,
and a stage then compiles next to nothing of ``import torch``.
"""

from __future__ import annotations

import importlib.util
import marshal
import os
import sys
import sysconfig
import time
from pathlib import Path
from typing import Any

import pytest
from support.importscan import by_dis

from pytest_reb.targets import bytecode, precompile
from pytest_reb.targets.hostview import HostView

EXT = precompile.EXTENSIONS[0]
PY = f"{sys.version_info[0]}.{sys.version_info[1]}"


def _tree(root: Path, files: dict[str, str]) -> HostView:
    """Files under ``root``, each source its own (one object per source's digest)."""
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(f"# {rel}\n{text}" if rel.endswith(".py") else text)
    return HostView(str(root))


def _code(text: str) -> Any:
    return compile(text, "m.py", "exec", dont_inherit=True)


def test_imports_of_counts_only_what_runs_at_import() -> None:
    code = _code(
        "import a.b\nfrom c import d, e\nfrom . import f\nfrom ..g import h as i\n"
        "from j import *\ntry:\n    import k\nexcept ImportError:\n    k = None\n"
        "class C:\n    import l\n    def m(self):\n        import n\n"
        "def o():\n    import p\n"
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import q\nelse:\n    import r\n"
        "import typing\nif typing.TYPE_CHECKING:\n    import s\n"
        "x = [__import__('t') for _ in ()]\n")
    assert sorted(precompile.imports_of(code)) == sorted([
        ("a.b", 0, []), ("c", 0, ["d", "e"]), ("", 1, ["f"]), ("g", 2, ["h"]), ("j", 0, []),
        ("k", 0, []), ("l", 0, []), ("typing", 0, ["TYPE_CHECKING"]), ("r", 0, []),
        ("typing", 0, [])])


def test_imports_of_reads_the_opcodes_as_dis_does() -> None:
    """Over this Python's standard library, the opcode reading finds what ``dis`` finds."""
    std = Path(sysconfig.get_paths()["stdlib"])
    files = sorted(std.glob("*.py"))[:400] + sorted((std / "asyncio").glob("*.py"))
    checked = 0
    for file in files:
        code = bytecode.compiled(file.read_bytes(), str(file), 0)
        if code is None:
            continue
        assert sorted(precompile.imports_of(code)) == sorted(by_dis(code)), file
        checked += 1
    assert checked > 150


@pytest.mark.parametrize(("importer", "package", "name", "level"), [
    ("a.b.c", False, "d", 1), ("a.b.c", False, "", 1), ("a.b.c", False, "d", 2),
    ("a.b", True, "d", 1), ("a.b", True, "", 2), ("a", True, "x.y", 1),
    ("a.b.c", False, "d", 0)])
def test_a_relative_import_names_what_python_resolves(importer: str, package: bool,
                                                      name: str, level: int) -> None:
    pkg = importer if package else importer.rpartition(".")[0]
    want = importlib.util.resolve_name("." * level + name, pkg) if level else name
    assert precompile.absolute(importer, package, name, level) == want


def test_a_relative_import_beyond_the_top_package_names_nothing() -> None:
    assert precompile.absolute("a.b", False, "x", 2) is None
    assert precompile.absolute("__main__", False, "x", 1) is None


def test_the_finder_looks_as_the_path_finder_does(tmp_path: Path) -> None:
    view = _tree(tmp_path, {
        "one/pkg/__init__.py": "", "one/pkg/sub.py": "", "one/pkg.py": "",
        f"one/fast{EXT}": "", "one/fast.py": "", "one/ns/a.py": "", "two/ns/b.py": "",
        "two/pkg/__init__.py": "", "two/mod.py": ""})
    find = precompile.Finder(view, ["/one", "/two"]).find
    assert find("pkg").file == "/one/pkg/__init__.py"  # the package before the module
    assert find("pkg.sub").file == "/one/pkg/sub.py"
    assert find("fast").file is None and not find("fast").folders  # the extension wins
    assert find("ns").file is None and find("ns.b").file == "/two/ns/b.py"  # namespace
    assert find("mod").file == "/two/mod.py"
    assert find("missing") is None and find("mod.sub") is None


def _env(tmp_path: Path) -> tuple[HostView, list[str]]:
    """A target's root: an interpreter of this Python's version, its standard library, a
    site folder, a checkout with an entry script, and one of our mounts."""
    lib = f"usr/lib/python{PY}"
    view = _tree(tmp_path / "root", {
        f"{lib}/os.py": "", f"{lib}/encodings/__init__.py": "from . import aliases\n",
        f"{lib}/encodings/aliases.py": "", f"{lib}/encodings/utf_8.py": "",
        f"{lib}/json/__init__.py": "from .decoder import X\n", f"{lib}/json/decoder.py": "X = 1\n",
        f"{lib}/site-packages/torch/__init__.py":
            "import json\nfrom torch import nn\nfrom typing import TYPE_CHECKING\n"
            "if TYPE_CHECKING:\n    import typing_only\n"
            "def lazy():\n    import only_when_called\n",
        f"{lib}/site-packages/torch/nn.py": "from . import functional as F\n",
        f"{lib}/site-packages/torch/functional.py": "Y = 2\n",
        f"{lib}/site-packages/typing_only.py": "", f"{lib}/site-packages/only_when_called.py": "",
        "repo/mounted/__init__.py": "",
        "repo/train.py": "import torch\nimport helper\nimport mounted\n",
        "repo/helper.py": "import broken\n", f"{lib}/site-packages/broken.py": "def (:\n",
        "opt/reb/probe.py": ""})
    (tmp_path / "root/usr/bin").mkdir(parents=True)
    os.symlink(f"python{PY}", tmp_path / "root/usr/bin/python3")
    (tmp_path / f"root/usr/bin/python{PY}").write_text("")
    return view, ["/repo/train.py"]


def _compile(view: HostView, kept: Path, scripts: list[str]) -> dict[str, int]:
    path = precompile.search_path(view, "/usr/bin/python3", scripts)
    return precompile.compile_closure(view, kept, path, [*precompile.STARTUP,
                                                         *precompile.ROOTS],
                                      scripts, ["/repo/mounted"], bytecode.learned(kept))


def _kept(kept: Path) -> set[str]:
    return {"/" + str(p.relative_to(kept)).split(f".{bytecode.TAG}")[0] + ".py"
            for p in kept.rglob("*.pyc")}


def test_the_closure_compiles_what_import_time_reaches_and_nothing_else(tmp_path: Path) -> None:
    view, scripts = _env(tmp_path)
    kept = tmp_path / "cache" / "image"
    kept.mkdir(parents=True)
    done = _compile(view, kept, scripts)
    lib, site = f"/usr/lib/python{PY}", f"/usr/lib/python{PY}/site-packages"
    assert _kept(kept) == {
        f"{lib}/encodings/__init__.py", f"{lib}/encodings/aliases.py",
        f"{lib}/encodings/utf_8.py", f"{lib}/json/__init__.py", f"{lib}/json/decoder.py",
        f"{site}/torch/__init__.py", f"{site}/torch/nn.py", f"{site}/torch/functional.py",
        "/repo/helper.py"}  # not the script (run, never imported), the mount, nor broken.py
    assert done["compiled"] == len(_kept(kept))
    for source in _kept(kept):  # each the host's compile of the bytes it read, checked
        text = view.read(source)
        assert text is not None
        kept_file = kept / bytecode.pyc_name(source, 0)
        assert kept_file.read_bytes() == bytecode.pyc(text, source, 0)
        assert int.from_bytes(kept_file.read_bytes()[4:8], "little") == bytecode.CHECKED_HASH
    assert not list(kept.parent.rglob(".new-*"))


def test_the_same_sources_in_another_image_are_linked_not_compiled(tmp_path: Path) -> None:
    view, scripts = _env(tmp_path)
    first, second = tmp_path / "cache" / "one", tmp_path / "cache" / "two"
    first.mkdir(parents=True)
    second.mkdir()
    _compile(view, first, scripts)
    said = list((tmp_path / "cache" / "objects").rglob("*.imports"))
    assert len(said) == len(_kept(first))  # what each compile imports, kept beside it
    stamps = {p: p.stat().st_mtime_ns for p in (tmp_path / "cache" / "objects").rglob("*")}
    time.sleep(0.01)
    _compile(view, second, scripts)
    assert _kept(second) == _kept(first)
    for source in _kept(first):
        one = (first / bytecode.pyc_name(source, 0)).stat()
        two = (second / bytecode.pyc_name(source, 0)).stat()
        assert (one.st_ino, one.st_dev) == (two.st_ino, two.st_dev)  # one object, linked
    assert {p: p.stat().st_mtime_ns for p in stamps} == stamps  # none written again


def test_a_module_a_stage_imported_late_is_compiled_before_the_next_images_first_stage(
        tmp_path: Path) -> None:
    """A module imported inside a function (an optimiser's first step imports
    ``torch._dynamo``) is not in the closure; once a stage of one image compiled it for
    itself, it is learned by name and compiled, from the next image's own file, before that
    image's first stage."""
    view, scripts = _env(tmp_path)
    first, second = tmp_path / "cache" / "one", tmp_path / "cache" / "two"
    first.mkdir(parents=True)
    second.mkdir()
    _compile(view, first, scripts)
    late = f"/usr/lib/python{PY}/site-packages/only_when_called.py"
    assert late not in _kept(first)
    assert bytecode.learn(first, [late, "/repo/helper.py", late]) == 1  # not the checkout's
    assert bytecode.learned(second) == ["only_when_called"]
    assert bytecode.learn(second, [late]) == 0  # known already: the file is left alone
    assert _compile(view, second, scripts)["learned"] == 1  # after the rest
    assert _kept(second) == _kept(first) | {late}
    kept_file = (second / bytecode.pyc_name(late, 0)).read_bytes()
    assert kept_file == bytecode.pyc(view.read(late) or b"", late, 0)



def test_learned_modules_come_after_the_rest_within_their_own_budget(tmp_path: Path,
                                                                     monkeypatch: Any) -> None:
    """Names learned from other images' frameworks never hold a first stage back by more
    than ``LEARNED_BUDGET``: what every stage needs is compiled first, in full."""
    view, scripts = _env(tmp_path)
    kept = tmp_path / "cache" / "image"
    kept.mkdir(parents=True)
    late = f"/usr/lib/python{PY}/site-packages/only_when_called.py"
    bytecode.learn(kept, [late])
    monkeypatch.setattr(precompile, "LEARNED_BUDGET", 0.0)
    done = _compile(view, kept, scripts)
    assert done["learned"] == 0 and late not in _kept(kept)
    assert f"/usr/lib/python{PY}/site-packages/torch/nn.py" in _kept(kept)


@pytest.mark.parametrize(("source", "module"), [
    ("/opt/env/lib/python3.11/site-packages/torch/_dynamo/__init__.py", "torch._dynamo"),
    ("/usr/lib/python3/dist-packages/yaml/nodes.py", "yaml.nodes"),
    ("/usr/lib/python3.11/json/decoder.py", "json.decoder"),
    ("/usr/lib/python3.11/_sysconfigdata__x86_64-linux-gnu.py",
     "_sysconfigdata__x86_64-linux-gnu"),
    ("/data/project/repo/tinynet/model.py", None),
    ("/usr/lib/python3.11/site-packages/__init__.py", None),
    ("/usr/lib/python3.11/site-packages/a b/c.py", None),
    ("/usr/lib/python3.11/site-packages/torch/lib/x.so", None),
])
def test_a_learned_name_is_where_any_interpreter_would_find_the_module(
        source: str, module: str | None) -> None:
    assert bytecode.module_of(source) == module


def test_learned_names_are_bounded_and_only_names(tmp_path: Path, monkeypatch: Any) -> None:
    kept = tmp_path / "image"
    bytecode.learned_path(kept).parent.mkdir(parents=True, exist_ok=True)
    bytecode.learned_path(kept).write_text("torch.nn\n../../etc\nnot a name\n\nyaml\n")
    assert bytecode.learned(kept) == ["torch.nn", "yaml"]
    monkeypatch.setattr(bytecode, "MAX_LEARNED", 3)
    site = "/env/lib/python3.11/site-packages"
    assert bytecode.learn(kept, [f"{site}/a.py", f"{site}/b.py"]) == 2
    assert len(bytecode.learned(kept)) == 3
    assert bytecode.learn(kept, [f"{site}/c.py"]) == 0


@pytest.mark.parametrize(("max_files", "budget", "compiled"), [(3, 60.0, 3), (10_000, 0.0, 0)])
def test_the_compile_stops_at_its_bounds(tmp_path: Path, max_files: int, budget: float,
                                         compiled: int) -> None:
    """A closure that would not end soon (a hostile image's imports) is cut at ``MAX_FILES``
    or ``BUDGET``: the stages compile the rest for themselves."""
    view, scripts = _env(tmp_path)
    kept = tmp_path / "cache" / "image"
    kept.mkdir(parents=True)
    closure = precompile.Closure(
        precompile.Finder(view, precompile.search_path(view, "/usr/bin/python3", scripts)),
        [], max_files=max_files, budget=budget)
    closure.add("torch")
    worker = precompile._Worker(view.root, kept)
    try:
        closure.run(worker)
    finally:
        worker.close()
    assert closure.compiled == compiled == len(_kept(kept))


def test_nothing_is_compiled_for_another_python_version(tmp_path: Path) -> None:
    other = "3.9" if PY != "3.9" else "3.10"
    view = _tree(tmp_path, {f"usr/lib/python{other}/os.py": "", f"usr/bin/python{other}": ""})
    assert precompile.search_path(view, f"/usr/bin/python{other}", []) == []


def test_a_stage_without_a_compile_begun_does_not_wait(tmp_path: Path) -> None:
    started = time.monotonic()
    assert precompile.wait(tmp_path / "never", 30) is None
    assert precompile.wait(None, 30) is None
    assert time.monotonic() - started < 1


# --------------------------------------------------------------------------- real containers


@pytest.mark.container
def test_on_the_demo_image_a_first_stage_compiles_next_to_nothing_of_torch(
        tmp_path: Path, demo_image: str, monkeypatch: Any) -> None:
    """Compiled before the stage, from sources read in a container where nothing of the image
    ran (a module the target's own container edited first is kept as the image has it), the
    stage's ``import torch`` finds nearly everything it imports already compiled."""
    from pytest_reb.loop.demo.images import ENV_PYTHON, REPO_DIR
    from pytest_reb.targets import DockerTarget

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    target = DockerTarget(demo_image, run_id="precompile-test")
    try:
        assert target.bytecode is not None
        aliases = f"/usr/lib/python{PY}/encodings/aliases.py"
        edited = target.exec(["/bin/sh", "-c", f"echo 'FORGED = 1' >> {aliases}"], timeout=60)
        assert edited.exit_code == 0, edited.output
        target.prepare_bytecode(lambda _fresh: ENV_PYTHON, [f"{REPO_DIR}/train.py"])
        env = target.stage_bytecode("cpu", [])  # waits for the compile
        done = precompile.wait(target.bytecode, 0)
        assert done is not None and done["compiled"] > 900, done
        res = target.exec([ENV_PYTHON, "-c", "import sys, torch; print(len(sys.modules))"],
                          timeout=300, env=env)
        assert res.exit_code == 0, res.output
        view = target.host_view()
        assert view is not None
        folder = bytecode.stage_folder(env)
        assert folder is not None
        compiled_here = bytecode.written(view, folder)
        assert len(compiled_here) < 0.02 * int(res.stdout.split()[-1]), compiled_here[:20]
        kept = (target.bytecode / bytecode.pyc_name(aliases, 0)).read_bytes()
        space: dict[str, Any] = {}
        exec(marshal.loads(kept[16:]), space)  # the image's file, compiled here
        assert "aliases" in space and "FORGED" not in space
    finally:
        target.close()


@pytest.mark.container
def test_a_compile_still_starting_when_the_run_ends_makes_no_container(
        tmp_path: Path, demo_image: str, docker_client: Any, monkeypatch: Any) -> None:
    """The compile's thread is not waited for (a run whose stages never start ends at once):
    a container it would make after the run's end is refused, so none outlives the clean-up
    and the image can go."""
    import threading
    import uuid

    from pytest_reb.loop.demo.images import ENV_PYTHON, REPO_DIR
    from pytest_reb.targets import DockerTarget

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    run = f"precompile-end-{uuid.uuid4().hex[:8]}"
    target = DockerTarget(demo_image, run_id=run)
    gate = threading.Event()

    def python(_fresh: Any) -> str:
        gate.wait(60)  # the report is still being read when the run ends
        return ENV_PYTHON

    target.prepare_bytecode(python, [f"{REPO_DIR}/train.py"])
    target.retire()
    gate.set()
    done = precompile.wait(target.bytecode, 60)
    assert done is not None and "retired" in done.get("error", ""), done
    assert not docker_client.containers.list(all=True, filters={"label": f"reb.run={run}"})


def test_the_host_compiles_for_the_stages_this_run_will_start() -> None:
    """``context.entry_scripts``: the entry scripts of the selected stage tiers that the
    target's GPUs let start; a GPU stage on a machine without one is compiled for nothing."""
    from pytest_reb import Repo, Run, torchrun
    from pytest_reb.pyramid.context import entry_scripts

    repo = Repo("me/three", commit="0" * 40, imports_total=1,
                cpu=Run(["{python}", "cpu.py"], entrypoint="cpu.py"),
                single_gpu=Run(["{python}", "gpu.py"], entrypoint="gpu.py"),
                multi_gpu=torchrun("ddp.py", nproc=4, entrypoint="ddp.py"))
    every = ["/r/cpu.py", "/r/gpu.py", "/r/ddp.py"]
    assert entry_scripts(repo, "/r") == every
    assert entry_scripts(repo, "/r", frozenset({"c1", "c3", "c4"}), 4) == every
    assert entry_scripts(repo, "/r", frozenset({"c1", "c3", "c4"}), 2) == every[:2]
    assert entry_scripts(repo, "/r", frozenset({"c1", "c3", "c4"}), 0) == ["/r/cpu.py"]
    assert entry_scripts(repo, "/r", frozenset({"c3"}), 1) == ["/r/gpu.py"]
    assert entry_scripts(repo, "/r", frozenset(), 8) == []


@pytest.mark.parametrize(("tiers", "gpus", "after"), [
    (frozenset({"c1", "c3", "c4"}), 1, True), (frozenset({"c1", "c4"}), 2, False),
    (frozenset({"c1", "c4"}), 4, True), (frozenset({"c1", "c3"}), 0, False),
    (frozenset({"c1"}), 8, False)])
def test_a_passing_c2_is_swept_only_without_a_gpu_stage_to_follow(
        tiers: frozenset[str], gpus: int, after: bool) -> None:
    """``Context.gpu_stages_after``: a C3 or C4 of the run whose GPUs the target has loads the
    repository's code on the GPU, so an ``auto`` sweep after a passing C2 is needless."""
    from types import SimpleNamespace

    from pytest_reb import Repo, Run, torchrun
    from pytest_reb.pyramid.context import Context

    repo = Repo("me/three", commit="0" * 40, imports_total=1,
                cpu=Run(["{python}", "cpu.py"]), single_gpu=Run(["{python}", "gpu.py"]),
                multi_gpu=torchrun("ddp.py", nproc=4))
    target = SimpleNamespace(gpus=[str(i) for i in range(gpus)])
    ctx = Context(repo=repo, target_name="t", connect=lambda: target,  # type: ignore[arg-type,return-value]
                  read_report=lambda _: None, stage_tiers=tiers)  # type: ignore[arg-type,return-value]
    assert ctx.gpu_stages_after is after
