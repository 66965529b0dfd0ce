"""Bytecode kept per image (``pytest_reb/targets/bytecode.py``): the host compiles what a stage
compiled for itself, and the next stages start from it.

What must hold: a kept file is only ever a faster read of its source (the host's own
compile, checked by hash, so a changed source is compiled again, never served stale);
what a stage wrote is used for its names only (forged bytecode there never becomes the
kept file); nothing is written outside the image's folder; and on the demo image a second
C1 compiles nothing of its own while giving the same verdict.
"""

from __future__ import annotations

import hashlib
import io
import json
import marshal
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from support.images import demo_module

from pytest_reb.targets import bytecode
from pytest_reb.targets.hostview import HostView

TAG = bytecode.TAG


def _stage_file(root: Path, prefix: str, source: str, data: bytes, opt: str = "") -> Path:
    """A file a stage's interpreter would have written for ``source`` under ``prefix``."""
    where = root / prefix.lstrip("/") / source.lstrip("/")
    where = where.with_name(f"{where.name[:-3]}.{TAG}{opt}.pyc")
    where.parent.mkdir(parents=True, exist_ok=True)
    where.write_bytes(data)
    return where


def _target(tmp_path: Path) -> tuple[HostView, Path, str]:
    """A target's root on this host, with an environment's sources and a stage folder."""
    root = tmp_path / "root"
    for rel, text in {"env/pkg/__init__.py": "", "env/pkg/mod.py": "VALUE = 'from source'\n",
                      "env/pkg/opt.py": "assert False\n", "opt/reb/probes/p.py": "x = 1\n",
                      "env/pkg/big.py": "x = 1\n" * 10}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return HostView(str(root)), root, "/tmp/reb-pycache-test/stage"


def test_only_this_pythons_regular_files_are_names(tmp_path: Path) -> None:
    view, root, prefix = _target(tmp_path)
    good = bytecode.MAGIC + b"\0" * 12
    _stage_file(root, prefix, "/env/pkg/mod.py", good)
    _stage_file(root, prefix, "/env/pkg/opt.py", good, ".opt-1")
    _stage_file(root, prefix, "/env/pkg/__init__.py", b"\x00\x00\r\n" + b"\0" * 12)  # not ours
    other = root / prefix.lstrip("/") / "env/pkg/old.cpython-39.pyc"
    other.write_bytes(good)
    (root / prefix.lstrip("/") / "env/pkg/mod.cpython-311.pyc.12345").write_bytes(good)
    os.symlink("/opt/reb/bytecode/env/pkg/big.pyc",
               root / prefix.lstrip("/") / f"env/pkg/big.{TAG}.pyc")  # a kept one: a link
    assert sorted(bytecode.written(view, prefix)) == [("/env/pkg/mod.py", 0),
                                                      ("/env/pkg/opt.py", 1)]
    assert bytecode.written(view, "/tmp/none") == []


def test_kept_bytecode_is_the_hosts_compile_never_the_stages(tmp_path: Path) -> None:
    view, root, prefix = _target(tmp_path)
    forged = bytecode.pyc(b"VALUE = 'forged'\n", "/env/pkg/mod.py", 0)
    assert forged is not None
    _stage_file(root, prefix, "/env/pkg/mod.py", forged)
    kept = tmp_path / "kept"
    kept.mkdir()
    names = bytecode.wanted(bytecode.written(view, prefix), kept, ["/opt/reb"])
    items = bytecode.harvest(view, names)
    assert items == [("/env/pkg/mod.py", 0, b"VALUE = 'from source'\n")]
    assert bytecode.store(kept, items) == 1
    data = (kept / bytecode.pyc_name("/env/pkg/mod.py", 0)).read_bytes()
    assert data[:4] == bytecode.MAGIC and int.from_bytes(data[4:8], "little") == 0b11
    space: dict[str, Any] = {}
    exec(marshal.loads(data[16:]), space)  # our own compile of our own source
    assert space["VALUE"] == "from source"
    # kept already: not read nor compiled again
    assert bytecode.wanted([("/env/pkg/mod.py", 0)], kept, []) == []


def test_our_mounts_oversize_and_missing_sources_are_left_out(tmp_path: Path,
                                                              monkeypatch: Any) -> None:
    view, _root, _prefix = _target(tmp_path)
    monkeypatch.setattr(bytecode, "MAX_SOURCE", 20)
    names = [("/opt/reb/probes/p.py", 0), ("/env/pkg/big.py", 0), ("/env/pkg/gone.py", 0),
             ("/env/pkg/__init__.py", 0)]
    got = bytecode.harvest(view, bytecode.wanted(names, tmp_path / "kept", ["/opt/reb/"]))
    assert [g[0] for g in got] == ["/env/pkg/__init__.py"]


def test_one_source_is_compiled_and_stored_once_for_every_image(tmp_path: Path,
                                                                  monkeypatch: Any) -> None:
    """Two images with the same file (at other paths): one object, linked into both; the
    second image's store compiles nothing."""
    first, second = tmp_path / "bytecode" / "a", tmp_path / "bytecode" / "b"
    first.mkdir(parents=True)
    second.mkdir()
    text = b"import os\nVALUE = 42\n"
    assert bytecode.store(first, [("/opt/envs/one/lib/m.py", 0, text)]) == 1
    monkeypatch.setattr(bytecode, "pyc", lambda *a: pytest.fail("compiled twice"))
    assert bytecode.store(second, [("/usr/lib/python3/m.py", 0, text)]) == 1
    a = first / bytecode.pyc_name("/opt/envs/one/lib/m.py", 0)
    b = second / bytecode.pyc_name("/usr/lib/python3/m.py", 0)
    assert a.stat().st_ino == b.stat().st_ino and a.stat().st_nlink == 3  # + the object
    [obj] = (tmp_path / "bytecode" / "objects").rglob("*.pyc")
    assert obj.name.startswith(hashlib.sha256(text).hexdigest())


def test_nothing_is_written_outside_the_images_folder(tmp_path: Path) -> None:
    kept = tmp_path / "kept"
    kept.mkdir()
    bad = [("/../../escape.py", 0, b"x = 1\n"), ("/a/./b.py", 0, b"x = 1\n"),
           ("relative.py", 0, b"x = 1\n"), ("/a/syntax.py", 0, b"def (:\n")]
    assert bytecode.store(kept, bad) == 0
    assert [p.name for p in tmp_path.iterdir()] == ["kept"]
    assert not any(kept.rglob("*.pyc")) and not any(tmp_path.rglob("*escape*"))


def test_python_loads_a_kept_file_only_for_the_source_it_was_made_from(tmp_path: Path) -> None:
    """The soundness of the whole scheme, asked of the real interpreter: with the prefix
    pointing at the kept files it runs them for an unchanged source, and compiles a source
    changed since (same size, same mtime) itself."""
    src = tmp_path / "lib" / "kmod.py"
    src.parent.mkdir()
    src.write_text("VALUE = 'one'\n")
    kept = tmp_path / "kept"
    kept.mkdir()
    assert bytecode.store(kept, [(str(src), 0, src.read_bytes())]) == 1
    pyc = kept / bytecode.pyc_name(str(src), 0)
    assert pyc.is_file() and oct(pyc.stat().st_mode & 0o777) == "0o644"

    def run() -> subprocess.CompletedProcess[str]:
        env = dict(os.environ, PYTHONPATH=str(src.parent), PYTHONPYCACHEPREFIX=str(kept),
                   PYTHONDONTWRITEBYTECODE="1")
        return subprocess.run([sys.executable, "-v", "-c", "import kmod; print(kmod.VALUE)"],
                              env=env, capture_output=True, text=True, check=True)

    first = run()
    assert first.stdout.strip() == "one" and f"code object from '{pyc}'" in first.stderr
    stat = src.stat()
    src.write_text("VALUE = 'two'\n")
    os.utime(src, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    second = run()
    assert second.stdout.strip() == "two" and f"code object from '{pyc}'" not in second.stderr


def test_the_compile_runs_apart_and_stores_everything(tmp_path: Path) -> None:
    kept = tmp_path / "kept"
    kept.mkdir()
    items = [(f"/env/m{i}.py", 0, f"import json\nX = {i}\n".encode()) for i in range(50)]
    bytecode.spawn(kept, items)
    deadline = time.monotonic() + 60
    while len(list(kept.rglob("*.pyc"))) < 50 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert len(list(kept.rglob("*.pyc"))) == 50
    assert not list(kept.rglob(".new-*"))
    # what each compile imports, beside it: another image links it without compiling
    said = sorted((tmp_path / "objects").rglob("*.imports"))
    assert len(said) == 50 and {p.read_text() for p in said} == {'[["json", 0, []]]'}


# --------------------------------------------------------------------------- real containers


def _c1(folder: Path, name: str, image: str, cache: Path) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "--rootdir", str(folder), "-p", "no:cacheprovider",
         "test_demo__tinynet.py", "--reb-image", image, "-m", "c1",
         "--reb-outdir", str(folder / name)],
        cwd=folder, capture_output=True, text=True, timeout=600,
        env=dict(os.environ, XDG_CACHE_HOME=str(cache)))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    [log] = (folder / name).glob("*/outcomes.jsonl")
    [c1] = [o for o in map(json.loads, log.read_text().splitlines()) if o["tier"] == "c1"]
    return c1  # type: ignore[no-any-return]


@pytest.mark.container
def test_a_second_stage_compiles_nothing_of_its_own(tmp_path: Path, demo_image: str,
                                                    docker_client: Any,
                                                    monkeypatch: Any) -> None:
    commit = docker_client.images.get(demo_image).labels["reb.demo.commit"]
    (tmp_path / "test_demo__tinynet.py").write_text(demo_module(commit))
    cache = tmp_path / "cache"
    first = _c1(tmp_path, "first", demo_image, cache)
    learned = first["evidence"]["bytecode"]
    assert first["status"] == "passed" and learned["compiled_in_stage"] > 100
    assert 0 < learned["sent_to_host"] <= learned["compiled_in_stage"]
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))  # the runs' own cache folder
    kept = bytecode.kept_dir(docker_client.images.get(demo_image).id)
    assert kept is not None
    deadline = time.monotonic() + 120
    assert learned["compiled_before"] > 900  # torch's imports, compiled before the stage
    while len(list(kept.rglob("*.pyc"))) < \
            learned["compiled_before"] + learned["sent_to_host"] * 0.95 \
            and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not list(kept.rglob("*/opt/reb/*")), "our probes and tools are never kept"
    second = _c1(tmp_path, "second", demo_image, cache)
    assert (second["status"], second["strict"], second["compat"]) == \
        (first["status"], first["strict"], first["compat"])
    assert second["evidence"]["bytecode"]["compiled_in_stage"] < 0.05 * learned["sent_to_host"]
    # another image of the same environment (another agent's, say): its own folder, and yet
    # what the first stage compiled for itself is compiled before its own first stage
    other, _ = docker_client.images.build(
        fileobj=io.BytesIO(f"FROM {demo_image}\nLABEL reb.test.other=1\n".encode()),
        tag=f"reb-test-other-agent:{os.environ.get('REB_SUITE', 'local')}", rm=True)
    try:
        assert bytecode.kept_dir(other.id) != kept
        third = _c1(tmp_path, "third", other.id, cache)
    finally:
        docker_client.images.remove(other.id, force=True)
    assert third["status"] == "passed"
    done = third["evidence"]["bytecode"]
    assert done["compiled_before"] >= learned["compiled_before"] + 0.9 * learned["sent_to_host"]
    assert done["compiled_in_stage"] < 0.05 * learned["sent_to_host"], done


@pytest.mark.container
def test_what_the_host_compiles_is_the_images_file_not_the_stages(
        tmp_path: Path, demo_image: str, monkeypatch: Any) -> None:
    """A stage that edits a module of the environment and imports it: the name is taken,
    the source is read where nothing of the image ran, so the kept file is the image's."""
    from pytest_reb.targets import DockerTarget

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    target = DockerTarget(demo_image, run_id="bytecode-test")
    try:
        assert target.bytecode is not None
        env = target.stage_bytecode("cpu", [])
        module = "/usr/lib/python3.11/colorsys.py"
        res = target.exec(["/bin/sh", "-c", f"echo 'FORGED = 1' >> {module} && "
                           "python3 -c 'import colorsys; print(colorsys.FORGED)'"],
                          timeout=60, env=env)
        assert res.exit_code == 0 and res.stdout.strip() == "1", res.output
        kept = target.keep_bytecode(env, "cpu", [])
        assert kept is not None and kept["sent_to_host"] >= 1  # colorsys, and Python's start
        pyc = target.bytecode / bytecode.pyc_name(module, 0)
        deadline = time.monotonic() + 60
        while not pyc.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        space: dict[str, Any] = {}
        exec(marshal.loads(pyc.read_bytes()[16:]), space)  # the image's colorsys, compiled here
        assert "hls_to_rgb" in space and "FORGED" not in space
        again = target.stage_bytecode("cpu", [])  # the next stage: its own folder, the kept file
        assert again[bytecode.PYCACHE_ENV] != env[bytecode.PYCACHE_ENV]
        res = target.exec(["/bin/sh", "-c", "ls -l \"$P/usr/lib/python3.11\""],
                          timeout=30, env={**again, "P": again[bytecode.PYCACHE_ENV]})
        assert f"colorsys.{bytecode.TAG}.pyc -> {bytecode.MOUNT}/" in res.stdout, res.output
    finally:
        target.close()


@pytest.fixture(autouse=True)
def _no_leftover_workers() -> Any:
    yield
    for proc in bytecode._workers:
        proc.wait(60)
