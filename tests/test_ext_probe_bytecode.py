"""The sweep's servers read the host's bytecode folder first, then the image's current files.

The host runs the sweep with ``PYTHONPYCACHEPREFIX`` at a folder of its own, so what one
server compiles the next reads; Python then looks nowhere else, and an image whose
installer compiled everything would be compiled again.  ``image_bytecode_too`` lets a
server read the image's ``__pycache__`` file where the folder has none and Python would
take it as current, and never write beside the image's sources.  Each case here is told
apart by what the module's code says: the same source, three different code objects.
"""

from __future__ import annotations

import importlib._bootstrap_external as external
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from pytest_reb.pyramid import ext_sweep
from pytest_reb.targets import bytecode

PROBES = Path(__file__).resolve().parents[1] / "pytest_reb" / "pyramid" / "probes"
SOURCE = 'WHO = "source"\n'
#: The demo image's environment (its report's ``python_path``), which has numpy.
DEMO_PYTHON = "/opt/envs/tinynet/bin/python"


def pyc(path: Path, code_of: str, *, source: Path, mtime_shift: int = 0) -> bytes:
    """A timestamp bytecode file for ``source`` whose code is ``code_of``'s."""
    st = source.stat()
    data = external._code_to_timestamp_pyc(compile(code_of, str(source), "exec"),
                                           int(st.st_mtime) + mtime_shift, st.st_size)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(bytes(data))
    return bytes(data)


def image_pyc(source: Path) -> Path:
    return source.parent / "__pycache__" / f"{source.stem}.{sys.implementation.cache_tag}.pyc"


def prefix_pyc(prefix: Path, source: Path) -> Path:
    """Where Python keeps it under a prefix: the source's folder, without ``__pycache__``."""
    return prefix / str(source.parent).lstrip("/") / image_pyc(source).name


def test_the_host_folder_first_then_a_current_image_file_and_nothing_written_beside_it(
        tmp_path: Path) -> None:
    site, prefix = tmp_path / "site", tmp_path / "prefix"
    site.mkdir()
    prefix.mkdir()
    for name in ("current", "stale", "kept", "bare"):
        (site / f"{name}.py").write_text(SOURCE)
    pyc(image_pyc(site / "current.py"), 'WHO = "image"\n', source=site / "current.py")
    stale = pyc(image_pyc(site / "stale.py"), 'WHO = "image"\n', source=site / "stale.py",
                mtime_shift=-7)
    pyc(image_pyc(site / "kept.py"), 'WHO = "image"\n', source=site / "kept.py")
    pyc(prefix_pyc(prefix, site / "kept.py"), 'WHO = "host"\n', source=site / "kept.py")
    script = ("import json, sys; sys.path[:0] = [sys.argv[1], sys.argv[2]]\n"
              "import ext_probe; ext_probe.image_bytecode_too()\n"
              "import current, stale, kept, bare\n"
              "print(json.dumps({m.__name__: m.WHO for m in (current, stale, kept, bare)}))\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    done = subprocess.run([sys.executable, "-c", script, str(PROBES), str(site)],
                          env={**env, "PYTHONPYCACHEPREFIX": str(prefix)},
                          capture_output=True, text=True, timeout=60, check=True)
    assert json.loads(done.stdout.splitlines()[-1]) == {
        "current": "image", "stale": "source", "kept": "host", "bare": "source"}
    assert image_pyc(site / "stale.py").read_bytes() == stale  # not written anew
    assert not image_pyc(site / "bare.py").exists()
    assert prefix_pyc(prefix, site / "stale.py").exists()  # compiled once, into the folder
    assert prefix_pyc(prefix, site / "bare.py").exists()
    assert not prefix_pyc(prefix, site / "current.py").exists()


def test_the_sweeps_fresh_interpreters_read_a_current_image_file_too(tmp_path: Path) -> None:
    """A load decided in a fresh interpreter and ``pip check`` start with ``BOOT``: the same
    reading (pip's own bytecode, which an installer compiles, is not compiled again)."""
    spec = importlib.util.spec_from_file_location("ext_probe_under_test", PROBES / "ext_probe.py")
    assert spec is not None and spec.loader is not None
    probe = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(probe)
    site, prefix = tmp_path / "site", tmp_path / "prefix"
    site.mkdir()
    (site / "current.py").write_text(SOURCE)
    pyc(image_pyc(site / "current.py"), 'WHO = "image"\n', source=site / "current.py")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    done = subprocess.run([sys.executable, "-c", probe.BOOT + "import current; print(current.WHO)"],
                          env={**env, "PYTHONPYCACHEPREFIX": str(prefix), "PYTHONPATH": str(site)},
                          capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.split() == ["image"]
    assert "ext_probe" not in done.stderr


def test_without_a_host_folder_python_is_left_as_it_is(tmp_path: Path) -> None:
    script = ("import sys; sys.path.insert(0, sys.argv[1]); import ext_probe\n"
              "import _frozen_importlib_external as e; before = e.cache_from_source\n"
              "ext_probe.image_bytecode_too(); print(e.cache_from_source is before)\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPYCACHEPREFIX"}
    done = subprocess.run([sys.executable, "-c", script, str(PROBES)], env=env,
                          capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.split() == ["True"]


@pytest.mark.container
def test_a_sweep_in_a_container_writes_only_its_own_folder_and_leaves_none(
        tmp_path: Path, demo_image: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The host side (``ext_sweep._swept``): the sweep's interpreters get a bytecode folder
    of their own in the container, and it is gone when the sweep ends."""
    from pytest_reb.targets import DockerTarget

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    target = DockerTarget(demo_image, run_id="sweep-bytecode-test")
    try:
        made = target.exec(["/bin/sh", "-c", "mkdir -p /tmp/co && echo 'import numpy' > "
                            "/tmp/co/main.py"], timeout=60)
        assert made.exit_code == 0, made.output
        ctx = SimpleNamespace(target=target, python=DEMO_PYTHON)
        spec = {"checkout": "/tmp/co", "per_module": 60, "deadline": 120, "jobs": 2}
        res = ext_sweep._swept(ctx, spec)  # type: ignore[arg-type]
        obs = ext_sweep.parse(res.stdout)
        assert obs is not None and any(m.startswith("numpy.") for m in obs["loaded"]), res.output
        assert obs["failed"] == []
        left = target.exec(["/bin/sh", "-c", f"ls -A {bytecode.PYCACHE_DIR} 2>/dev/null"],
                           timeout=30)
        assert left.stdout.strip() == "", left.output
    finally:
        target.close()
