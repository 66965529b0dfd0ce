"""The local images are what every container test stands on: check them by running them.

These build the images on first use (minutes) and reuse them afterwards (seconds).
"""

import io
import json
import re
import tarfile
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest
from docker.errors import DockerException

from pytest_reb.loop import images
from pytest_reb.loop.demo import images as demo
from pytest_reb.loop.demo.checkout import demo_commit, demo_dir, source_root
from pytest_reb.targets.base import labels

pytestmark = pytest.mark.container

TRAIN = [demo.ENV_PYTHON, f"{demo.REPO_DIR}/train.py", "--device", "cpu", "--steps", "3"]


@pytest.fixture(scope="module")
def client() -> Iterator[docker.DockerClient]:
    try:
        client = docker.from_env()
        client.ping()
    except DockerException as exc:
        pytest.skip(f"the Docker daemon does not answer: {exc}")
    yield client
    client.close()


@pytest.fixture(scope="module")
def base_image(client: docker.DockerClient) -> str:
    return images.ensure_base_image(client)


@pytest.fixture(scope="module")
def demo_images(client: docker.DockerClient) -> dict[str, str]:
    return {variant: demo.ensure_demo_image(client, variant) for variant in demo.DEMO_VARIANTS}


def run(client: docker.DockerClient, image: str, command: list[str]) -> tuple[int, str]:
    """Run a command in a fresh offline container; return its exit status and output."""
    container = client.containers.create(
        image, command, labels=labels("tests"), network_mode="none"
    )
    try:
        container.start()
        status = container.wait(timeout=120)["StatusCode"]
        return status, container.logs().decode(errors="replace")
    finally:
        container.remove(force=True, v=True)


def read_file(client: docker.DockerClient, image: str, path: str) -> str:
    """Read a file from an image without running anything in it."""
    container = client.containers.create(image, labels=labels("tests"), network_mode="none")
    try:
        stream, _ = container.get_archive(path)
        with tarfile.open(fileobj=io.BytesIO(b"".join(stream))) as archive:
            member = archive.next()
            assert member is not None and member.isfile(), f"{path} is not a file in {image}"
            handle = archive.extractfile(member)
            assert handle is not None
            return handle.read().decode()
    finally:
        container.remove(force=True, v=True)


def test_base_image_has_python_3_11_and_timeout(client, base_image):
    status, output = run(
        client, base_image, ["sh", "-c", "python3 --version && timeout 5 true && echo TIMEOUT_OK"]
    )
    assert status == 0, output
    assert re.search(r"^Python 3\.11\.\d+$", output, re.MULTILINE), output
    assert "TIMEOUT_OK" in output


def test_base_image_is_aliased(client, base_image):
    assert client.images.get(images.BASE_TAG).id == client.images.get(base_image).id


def test_good_demo_trains_on_cpu(client, demo_images):
    status, output = run(client, demo_images["good"], [*TRAIN, "--out", "/tmp/o"])
    assert status == 0, output
    assert re.search(r"^TRAIN_OK steps=3 loss=\d+\.\d+$", output, re.MULTILINE), output
    assert "Traceback" not in output and "Warning" not in output, output


def test_missing_dep_demo_fails_on_yaml(client, demo_images):
    status, output = run(client, demo_images["missing-dep"], [*TRAIN, "--out", "/tmp/o"])
    assert status != 0, output
    assert "ModuleNotFoundError: No module named 'yaml'" in output
    assert "TRAIN_OK" not in output


@pytest.mark.parametrize("variant", demo.DEMO_VARIANTS)
def test_demo_checkout_is_the_demo_commit(client, demo_images, variant):
    image = demo_images[variant]
    head = read_file(client, image, f"{demo.REPO_DIR}/.git/HEAD").strip()
    assert head == "ref: refs/heads/main"
    commit = read_file(client, image, f"{demo.REPO_DIR}/.git/refs/heads/main").strip()
    assert commit == demo_commit()


def test_the_demo_is_found_in_the_working_directory_never_beside_the_package(
        tmp_path, monkeypatch):
    """An installed package has no demo/: outside a checkout it is one line, not a traceback."""
    monkeypatch.delenv("REB_SOURCE", raising=False)
    assert source_root() == Path.cwd().resolve()
    monkeypatch.chdir(tmp_path)
    with pytest.raises(images.ImageError, match=r"^no demo/tinynet in .*: run from a pytest-reb"):
        demo_commit()
    monkeypatch.setenv("REB_SOURCE", str(Path(__file__).resolve().parent.parent))
    assert re.fullmatch(r"[0-9a-f]{40}", demo_commit())


def test_demo_commit_is_stable():
    assert re.fullmatch(r"[0-9a-f]{40}", demo_commit())
    assert demo_commit() == demo_commit()


@pytest.mark.parametrize("variant", demo.DEMO_VARIANTS)
def test_demo_report_is_the_checked_in_one(client, demo_images, variant):
    image = demo_images[variant]
    in_image = json.loads(read_file(client, image, demo.REPORT_PATH))
    checked_in = json.loads((demo_dir() / "report.json").read_text())
    assert in_image == checked_in, f"demo/report.json differs from {image}'s {demo.REPORT_PATH}"


def test_good_demo_report_is_true(client, demo_images):
    """The good variant's report is what an honest agent writes: it matches the interpreter."""
    report = json.loads((demo_dir() / "report.json").read_text())
    probe = (
        "import json, sys, torch; print(json.dumps({'python_version': sys.version.split()[0],"
        " 'torch_version': torch.__version__, 'cuda_available': torch.cuda.is_available()}))"
    )
    status, output = run(client, demo_images["good"], [report["python_path"], "-c", probe])
    assert status == 0, output
    observed = json.loads(output.strip().splitlines()[-1])
    assert observed == {key: report[key] for key in observed}


def test_demo_aliases(client, demo_images):
    def image_id(tag: str) -> str:
        return client.images.get(tag).id

    assert image_id("reb-demo:latest") == image_id(demo_images["good"])
    assert image_id("reb-demo:good") == image_id(demo_images["good"])
    assert image_id("reb-demo:missing-dep") == image_id(demo_images["missing-dep"])
