"""``reb k8s``: the Indexed Job manifest, validated by the official ``kubernetes`` client's models.

No Kubernetes cluster runs here, so the manifest is checked on paper: every
item deserializes into its model (``V1Job``, ``V1ConfigMap``,
``V1NetworkPolicy``; a missing required field raises), serializes back to
exactly what we wrote (a misspelt key would be dropped by the model and show
as a difference), and carries what the issue asks: one completion index per
pair, ``nvidia.com/gpu`` limits, ``/dev/shm`` in memory, the agent-built
image as the pod image with our harness and rows mounted read-only, and
deadlines from the stage timeouts.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest

from pytest_reb.cli import main as reb
from pytest_reb.cluster import k8s

kubernetes = pytest.importorskip("kubernetes", reason="pip install -e '.[test]' installs it")
from kubernetes.client import ApiClient  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DEMO_MODULE = ROOT / "demo" / "test_demo__tinynet.py"
MODELS = {"Job": "V1Job", "ConfigMap": "V1ConfigMap", "NetworkPolicy": "V1NetworkPolicy"}


def validated(item: dict[str, Any]) -> Any:
    """The item as its client model; it must serialize back to exactly the item."""
    client = ApiClient()
    model = client.deserialize(json.dumps(item), MODELS[item["kind"]], "application/json")
    assert client.sanitize_for_serialization(model) == item
    return model


@pytest.fixture
def manifest(tmp_path: Path) -> dict[str, Any]:
    """Three demo rows: two agents' images, one of them with a report file of its own."""
    (tmp_path / "alpha.json").write_text('{"python_path": "/opt/envs/tinynet/bin/python"}')
    (tmp_path / "m.toml").write_text(
        '[[target]]\nrepo = "reb/tinynet"\nagent = "alpha"\nimage = "bench/tiny:alpha"\n'
        'report = "alpha.json"\n'
        '[[target]]\nrepo = "reb/tinynet"\nagent = "beta"\nimage = "bench/tiny:beta"\n'
        '[[target]]\nrepo = "reb/tinynet"\nagent = "gamma"\nimage = "bench/tiny:beta"\n')
    out = tmp_path / "jobs.json"
    assert reb(["k8s", str(tmp_path / "m.toml"), "--modules", str(DEMO_MODULE), "--tiers",
                "c1,c4", "--out", str(out), "--name", "Tiny_Net"]) == 0
    return json.loads(out.read_text())  # type: ignore[no-any-return]


def test_every_item_validates_against_the_client_models(manifest: dict[str, Any]) -> None:
    assert manifest["kind"] == "List"
    kinds = [item["kind"] for item in manifest["items"]]
    assert kinds == ["NetworkPolicy", "ConfigMap", "Job", "Job"]
    for item in manifest["items"]:
        validated(item)


def test_one_indexed_job_per_image_one_index_per_pair(manifest: dict[str, Any]) -> None:
    jobs = [validated(i) for i in manifest["items"] if i["kind"] == "Job"]
    assert [j.metadata.name for j in jobs] == ["tiny-net-0", "tiny-net-1"]
    assert [(j.spec.completion_mode, j.spec.completions, j.spec.parallelism)
            for j in jobs] == [("Indexed", 1, 1), ("Indexed", 2, 2)]
    assert [json.loads(j.metadata.annotations["reb.pairs"]) for j in jobs] == [
        ["reb/tinynet|alpha@bench/tiny:alpha"],
        ["reb/tinynet|beta@bench/tiny:beta", "reb/tinynet|gamma@bench/tiny:beta"]]
    for job in jobs:
        pod = job.spec.template.spec
        [verify] = pod.containers
        assert verify.image == job.metadata.annotations["reb.image"]  # the agent-built image
        assert verify.resources.limits["nvidia.com/gpu"] == "2"  # demo C4: torchrun over 2
        # task 120 + pair 180 + C1 300 + C4 600: the plan's time limit of the pair
        assert job.spec.active_deadline_seconds == 1200
        mounts = {m.name: m for m in verify.volume_mounts}
        assert mounts["harness"].read_only and mounts["harness"].mount_path == k8s.HARNESS
        assert mounts["matrix"].read_only and mounts["dshm"].mount_path == "/dev/shm"
        volumes = {v.name: v for v in pod.volumes}
        assert volumes["dshm"].empty_dir.medium == "Memory"
        assert volumes["harness"].empty_dir is not None
        assert volumes["outcomes"].persistent_volume_claim.claim_name == "reb-outcomes"
        [copy] = pod.init_containers  # the harness comes from its own image, not the agent's
        assert copy.image == "pytest-reb-harness:latest"
        assert verify.command[0] == f"{k8s.HARNESS}/bin/python"
        assert verify.security_context.capabilities.drop == ["ALL"]
        assert not verify.security_context.allow_privilege_escalation
        assert pod.restart_policy == "Never" and pod.automount_service_account_token is False
        [index] = [e for e in verify.env if e.name == "REB_INDEX"]
        assert "job-completion-index" in index.value_from.field_ref.field_path
        name = job.metadata.name
        assert f"{k8s.MATRIX_MOUNT}/{name}-$(REB_INDEX).toml" in verify.command
        assert f"{k8s.OUT_MOUNT}/{name}/$(REB_INDEX)" in verify.command
        assert "c1 or c4" in verify.command


def test_each_index_has_its_row_on_local_host(manifest: dict[str, Any]) -> None:
    config = validated(manifest["items"][1])
    rows = {key: tomllib.loads(text)["target"] for key, text in config.data.items()
            if key.endswith(".toml")}
    assert sorted(rows) == ["tiny-net-0-0.toml", "tiny-net-1-0.toml", "tiny-net-1-1.toml"]
    [alpha] = rows["tiny-net-0-0.toml"]
    assert alpha == {"repo": "reb/tinynet", "agent": "alpha", "host": "local://",
                     "report": f"{k8s.MATRIX_MOUNT}/tiny-net-0-0.report.json"}
    assert json.loads(config.data["tiny-net-0-0.report.json"])["python_path"]
    assert [r[0]["agent"] for k, r in sorted(rows.items())][1:] == ["beta", "gamma"]
    policy = validated(manifest["items"][0])
    assert policy.spec.policy_types == ["Ingress", "Egress"]
    assert policy.spec.ingress is None and policy.spec.egress is None  # no traffic at all
    assert policy.spec.pod_selector.match_labels["reb.run"] == "tiny-net"


def test_what_a_pod_cannot_do_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                         ) -> None:
    (tmp_path / "m.toml").write_text('[[target]]\nrepo = "reb/tinynet"\nhost = "ssh://gpu"\n')
    assert reb(["k8s", str(tmp_path / "m.toml"), "--modules", str(DEMO_MODULE)]) == 2
    assert "needs an image row" in capsys.readouterr().err
    (tmp_path / "m.toml").write_text('[[target]]\nrepo = "reb/tinynet"\nimage = "a"\n'
                                     '[[target]]\nrepo = "reb/tinynet"\nagent = "b"\n'
                                     'image = "b"\n')
    assert reb(["k8s", str(tmp_path / "m.toml"), "--modules", str(DEMO_MODULE),
                "--shards", "1"]) == 2
    assert "each index is one pair" in capsys.readouterr().err
    outside = tmp_path / "test_me__x.py"
    outside.write_text(DEMO_MODULE.read_text())
    assert reb(["k8s", str(tmp_path / "m.toml"), "--modules", str(outside)]) == 2
    assert "not in pytest-reb's tree" in capsys.readouterr().err
