"""Task images: the starting point of an agent run, made from a clone or a mirror."""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest

from pytest_reb import spec
from pytest_reb.loop import task
from pytest_reb.loop.demo.checkout import demo_commit
from pytest_reb.selfreport import REQUIRED_KEYS


def test_the_schema_and_the_text_share_the_nine_keys() -> None:
    schema = task.report_schema()
    assert schema["required"] == list(REQUIRED_KEYS)
    props: Any = schema["properties"]
    assert props["env_tool"]["enum"] == ["conda", "uv", "pip", "poetry", "venv", "none"]
    assert props["gpu_count"]["type"] == ["integer", "null"]
    text = task.task_text(task.Task("owner/name", "a" * 40))
    assert "a" * 40 in text and "/opt/scimlopsbench/report.json" in text
    for rule in ("Do not edit", "ONE Python interpreter", "Claim nothing", "background"):
        assert rule in text
    assert all(f"`{key}`" in text for key in REQUIRED_KEYS)


def test_the_44_are_selected_by_name_or_all() -> None:
    every = task.select([], every=True)
    assert len(every) == 44 and task.DEMO_REPO not in {t.repo for t in every}
    [one] = task.select(["kyegomez/visionmamba"])
    assert one.repo == "kyegomez/VisionMamba" and len(one.commit) == 40
    with pytest.raises(task.TaskError, match="no repository module for no/such"):
        task.select(["no/such"])


def test_building_an_unknown_repository_is_a_usage_error(
        capsys: pytest.CaptureFixture[str]) -> None:
    from pytest_reb.loop.cli import main as reb

    assert reb(["task", "build", "no-such/repo"]) == 2
    assert capsys.readouterr().err == "reb task build: no repository module for no-such/repo\n"


def test_the_suite_is_found_where_modules_says_never_beside_the_package(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """repos/ and demo/ of the checkout (``$REB_SOURCE``, else the working directory) by
    default; ``--modules`` names others."""
    root = Path(__file__).resolve().parent.parent
    monkeypatch.delenv("REB_SOURCE", raising=False)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(task.TaskError, match=r"^no such module or folder: repos \(--modules"):
        task.select(["reb/tinynet"])
    with pytest.raises(task.TaskError, match=r"^no such module or folder: nowhere "):
        task.select(["reb/tinynet"], modules=[Path("nowhere")])
    (tmp_path / "empty").mkdir()
    with pytest.raises(task.TaskError, match=r"^no repository modules in empty$"):
        task.select(["reb/tinynet"], modules=[Path("empty")])
    [demo] = task.select(["reb/tinynet"], modules=[root / "demo"])
    assert demo.commit == demo_commit_of(root) and demo.module == root / "demo" / (
        "test_demo__tinynet.py")
    assert len(task.select([], every=True, modules=[root / "repos"])) == 44
    monkeypatch.setenv("REB_SOURCE", str(root))
    assert task.select(["reb/tinynet"]) == [demo]  # the checkout named, from anywhere


def demo_commit_of(root: Path) -> str:
    """The demo's pinned commit, made from ``root``'s files (not the working directory's)."""
    from pytest_reb.loop.demo.checkout import make_demo_checkout

    with tempfile.TemporaryDirectory() as scratch:
        return make_demo_checkout(Path(scratch) / "repo", root / "demo" / "tinynet")


def _bare_mirror(tmp_path: Path) -> Path:
    """A bare mirror of the demo repository (its deterministic commit)."""
    from pytest_reb.loop.demo.checkout import make_demo_checkout

    work = tmp_path / "work"
    make_demo_checkout(work)
    mirror = tmp_path / "mirrors" / "reb+tinynet" / "repo"
    mirror.mkdir(parents=True)
    # a push this small arrives as loose objects, one file each, so a test can remove one
    for argv in (["init", "--quiet", "--bare", str(mirror)],
                 ["-C", str(work), "push", "--quiet", str(mirror), "HEAD:refs/heads/main"],
                 ["-C", str(mirror), "symbolic-ref", "HEAD", "refs/heads/main"]):
        subprocess.run(["git", *argv], check=True)
    return mirror


def test_a_commit_the_source_lacks_is_one_clear_error(tmp_path: Path) -> None:
    mirror = _bare_mirror(tmp_path)
    with pytest.raises(task.TaskError, match=r"commit 0{40} of reb/tinynet is not in"):
        task._checkout(task.Task("reb/tinynet", "0" * 40), tmp_path / "out", checkout=None,
                       mirror=mirror)


def test_a_mirror_missing_blobs_of_the_commit_is_refused(tmp_path: Path) -> None:
    """A partial mirror checks out without them; the verifier would blame the agent."""
    mirror = _bare_mirror(tmp_path)
    blob = subprocess.run(["git", "-C", str(mirror), "rev-parse", "HEAD:train.py"],
                          capture_output=True, text=True, check=True).stdout.strip()
    (mirror / "objects" / blob[:2] / blob[2:]).unlink()
    with pytest.raises(task.TaskError, match=r"lacks 1 file\(s\).*train.py"):
        task._checkout(task.Task("reb/tinynet", demo_commit()), tmp_path / "out",
                       checkout=None, mirror=tmp_path / "mirrors")


@pytest.mark.container
def test_task_image_holds_the_checkout_and_the_contract(docker_client: Any,
                                                        tinynet_task: str) -> None:
    from pytest_reb.targets import labels

    script = ("cd /data/project/repo && git -c safe.directory='*' rev-parse HEAD && "
              "git -c safe.directory='*' status --porcelain | wc -l && "
              "python3 -m venv /tmp/v && python3 -m pip --version >/dev/null && "
              "gcc --version >/dev/null && g++ --version >/dev/null && curl --version >/dev/null"
              " && echo TOOLS_OK && cat /opt/scimlopsbench/task.json && echo $SCIMLOPSBENCH_REPORT"
              " && test ! -e /opt/scimlopsbench/report.json && echo NO_REPORT")
    out = docker_client.containers.run(tinynet_task, ["sh", "-c", script], remove=True,
                                       network_mode="none", labels=labels("tests-task")).decode()
    lines = out.splitlines()
    assert lines[:2] == [demo_commit(), "0"]
    assert "TOOLS_OK" in lines and lines[-1] == "NO_REPORT"
    meta = json.loads(out[out.index("{"):out.rindex("}") + 1])
    assert meta["commit"] == demo_commit() and meta["schema"] == spec.SCHEMA_PATH
    image = docker_client.images.get(tinynet_task)
    assert image.labels[task.LABEL_COMMIT] == demo_commit()
    assert image.labels[task.LABEL_REPO] == "reb/tinynet"


def test_a_fetched_mirror_checks_out_detached_at_the_commit(tmp_path: Path) -> None:
    _bare_mirror(tmp_path)
    dest = tmp_path / "out"
    task._checkout(task.Task("reb/tinynet", demo_commit()), dest, checkout=None,
                   mirror=tmp_path / "mirrors")  # the folder of mirrors, as fetched

    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(dest), *args], capture_output=True, text=True,
                              check=True).stdout.strip()

    assert git("rev-parse", "HEAD") == demo_commit() and git("status", "--porcelain") == ""
    assert git("rev-parse", "--abbrev-ref", "HEAD") == "HEAD"  # detached
    assert git("remote", "get-url", "origin") == "https://github.com/reb/tinynet.git"


@pytest.mark.container
def test_task_images_are_cached_by_content(docker_client: Any, tinynet_task: str) -> None:
    [demo] = task.select(["reb/tinynet"])
    before = docker_client.images.get(tinynet_task).id
    assert task.ensure_task_image(docker_client, demo) == tinynet_task
    assert docker_client.images.get(tinynet_task).id == before  # nothing rebuilt
