"""What an image's content alone decides is read once per image id, never once per run.

On the demo image with the real engine: the checkout's commit (collection) and
the checkout against its pinned tree before any command ran (every tier's
integrity verdict) and C2's extension sweep are kept by the image's id; a second
target of the same image gets the same answers without reading the image again.
What is incomplete is not kept, and the check after a command ran still looks at
the container.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from types import SimpleNamespace

import pytest

from pytest_reb.evidence import integrity
from pytest_reb.loop.demo.images import ENV_PYTHON
from pytest_reb.pyramid import ext_sweep
from pytest_reb.targets import DockerTarget, ImageRef, Limits, checkout_commit, imagecache

pytestmark = pytest.mark.container

CHECKOUT = "/data/project/repo"


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    return tmp_path / "pytest-reb"


def target(image: str) -> DockerTarget:
    return DockerTarget(image, run_id="tests-imagecache", gpus=[], limits=Limits())


def test_the_pre_run_check_is_made_once_per_image(demo_image: str, demo_commit: str,
                                                  cache: Path) -> None:
    first = target(demo_image)
    try:
        walked = integrity.before_any_run(first, CHECKOUT, demo_commit)
    finally:
        first.close()
    assert walked.tree is not None and len(list((cache / "integrity").glob("*.json"))) == 1
    second = target(demo_image)
    try:
        read = integrity.before_any_run(second, CHECKOUT, demo_commit)
        # a command changes the checkout: the check after it looks, it is never kept
        second.exec(["/.reb/busybox", "sh", "-c", f"echo x >> {CHECKOUT}/train.py"], timeout=30)
        after = integrity.examine(second, CHECKOUT, demo_commit)
    finally:
        second.close()
    assert dataclasses.asdict(read) == dataclasses.asdict(walked)
    assert any(f["path"] == "train.py" for f in after.findings)
    assert not any(f["path"] == "train.py" for f in read.findings)


def test_an_unverifiable_check_is_not_kept(demo_image: str, demo_commit: str,
                                           cache: Path) -> None:
    t = target(demo_image)
    try:
        seen = integrity.before_any_run(t, "/nowhere", demo_commit)
    finally:
        t.close()
    assert [f["kind"] for f in seen.findings] == ["unverifiable"]
    assert not (cache / "integrity").exists()


def test_the_checkout_commit_is_read_once_per_image(demo_image: str, demo_commit: str,
                                                    cache: Path, docker_client: object) -> None:
    assert checkout_commit(ImageRef(demo_image), CHECKOUT) == demo_commit
    [kept] = (cache / "checkout-commit").glob("*.json")
    image = docker_client.images.get(demo_image).id  # type: ignore[attr-defined]
    assert imagecache.load("checkout-commit", image, (CHECKOUT, _digest())) == demo_commit
    assert checkout_commit(ImageRef(demo_image), "/nowhere") is None  # nothing kept for it
    assert len(list((cache / "checkout-commit").glob("*.json"))) == 1 and kept.exists()


def _digest() -> str:
    from pytest_reb.targets import git

    return git._DIGEST


def test_the_extension_sweep_is_made_once_per_image_and_cards(demo_image: str,
                                                              cache: Path) -> None:
    """A complete sweep is kept; the same image on other cards is swept again."""
    def sweep(seen: dict) -> dict:
        t = target(demo_image)
        try:
            ctx = SimpleNamespace(python=ENV_PYTHON, checkout=CHECKOUT, target=t)
            return ext_sweep.run(ctx, gpus_seen=seen)  # type: ignore[arg-type]
        finally:
            t.close()

    first = sweep({"gpu_count": 0})
    assert first["ran"] and first["loaded"] > 0 and "cached" not in first
    again = sweep({"gpu_count": 0})
    assert again.pop("cached") is True
    assert again == first
    other = sweep({"gpu_count": 1, "devices": [{"capability": "9.0"}]})
    assert "cached" not in other and len(list((cache / "ext-sweep").glob("*.json"))) == 2


def test_a_sweep_cut_short_is_not_kept() -> None:
    assert not ext_sweep.complete({"loaded": ["a"], "not_tried": ["b"]})
    assert not ext_sweep.complete({"error": "the probe broke"})
    assert ext_sweep.complete({"loaded": [], "failed": [], "not_tried": []})


def test_the_report_is_read_once_per_image(demo_image: str, cache: Path) -> None:
    """The report at the official path is the image's content: a second target of the image
    takes the kept bytes without a container."""
    from pytest_reb.plugin.session import _image_report
    from pytest_reb.selfreport import MAX_REPORT_BYTES

    first = target(demo_image)
    try:
        read = _image_report(first, MAX_REPORT_BYTES + 1)
    finally:
        first.close()
    assert read is not None and b"python_path" in read
    second = target(demo_image)
    second.read_file = lambda *a, **k: pytest.fail("the kept report was read again")  # type: ignore
    try:
        assert _image_report(second, MAX_REPORT_BYTES + 1) == read
        assert second._containers == {}  # no container was started for it
    finally:
        second.close()
    assert len(list((cache / "report").glob("*.json"))) == 1
