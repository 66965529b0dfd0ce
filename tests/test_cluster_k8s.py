"""``reb k8s``: the manifest set a user applies, validated by the Kubernetes schemas and client.

No Kubernetes cluster runs here (none is installable without downloads), so
the manifest is checked on paper, twice: every item validates strictly
against the published OpenAPI schemas of Kubernetes 1.27 to the newest
(``kubernetes-validate``: unknown fields, wrong types, missing required
fields fail), and deserializes into the official ``kubernetes`` client's model
and serializes back to exactly what we wrote.  It carries what the issue
asks: the claim, one completion index per pair, the merge Job that waits for
every index, names unique per run, ``nvidia.com/gpu`` limits, ``/dev/shm`` in
memory, the agent-built image as the pod image with our harness and rows
mounted read-only, and deadlines from the stage timeouts.  The merge Job's
command runs here for real, on folders laid out as the claim would be.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest

from pytest_reb.loop.cli import main as reb
from pytest_reb.loop.cluster import k8s

kubernetes = pytest.importorskip("kubernetes", reason="pip install -e '.[test]' installs it")
kubernetes_validate = pytest.importorskip("kubernetes_validate",
                                          reason="pip install -e '.[test]' installs it")
from kubernetes.client import ApiClient  # noqa: E402

from pytest_reb.outcome import Outcome, OutcomeLog  # noqa: E402
from pytest_reb.report import merge as merging  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DEMO_MODULE = ROOT / "demo" / "test_demo__tinynet.py"
MODELS = {"Job": "V1Job", "ConfigMap": "V1ConfigMap", "NetworkPolicy": "V1NetworkPolicy",
          "PersistentVolumeClaim": "V1PersistentVolumeClaim"}
#: The oldest Kubernetes still common on clusters, and the newest the schemas know.
VERSIONS = ("1.27", "1.30", "1.33", kubernetes_validate.utils.latest_version())


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


def test_every_item_validates_against_the_schemas_and_client_models(
        manifest: dict[str, Any]) -> None:
    assert manifest["kind"] == "List"
    kinds = [item["kind"] for item in manifest["items"]]
    assert kinds == ["NetworkPolicy", "PersistentVolumeClaim", "ConfigMap", "Job", "Job", "Job"]
    for item in manifest["items"]:
        validated(item)
        for version in VERSIONS:
            kubernetes_validate.validate(item, version, strict=True)
    with pytest.raises(kubernetes_validate.ValidationError):  # the check has teeth
        job = json.loads(json.dumps(manifest["items"][3]))
        job["spec"]["completionMode"] = 3
        kubernetes_validate.validate(job, VERSIONS[-1], strict=True)


def run_of(manifest: dict[str, Any]) -> str:
    return manifest["items"][0]["metadata"]["labels"]["reb.run"]  # type: ignore[no-any-return]


def test_names_are_unique_per_run_and_the_claim_is_made(tmp_path: Path,
                                                        manifest: dict[str, Any]) -> None:
    run = run_of(manifest)
    assert run.startswith("tiny-net-") and len(run) > len("tiny-net-") + 12
    names = [i["metadata"]["name"] for i in manifest["items"]]
    assert names == [f"{run}-no-network", f"{run}-outcomes", f"{run}-matrix", f"{run}-0",
                     f"{run}-1", f"{run}-merge"]
    assert all(len(n) <= 52 for n in names)  # <job>-<index> pod host names stay labels
    claim = validated(manifest["items"][1])
    assert claim.spec.access_modes == ["ReadWriteMany"]
    assert claim.spec.resources.requests == {"storage": "20Gi"}
    (tmp_path / "m.toml").write_text('[[target]]\nrepo = "reb/tinynet"\nimage = "a"\n')
    again = tmp_path / "again.json"
    assert reb(["k8s", str(tmp_path / "m.toml"), "--modules", str(DEMO_MODULE), "--out",
                str(again), "--name", "Tiny_Net", "--claim", "shared"]) == 0
    second = json.loads(again.read_text())
    assert run_of(second) != run
    assert "PersistentVolumeClaim" not in [i["kind"] for i in second["items"]]
    volumes = [v for i in second["items"] if i["kind"] == "Job"
               for v in i["spec"]["template"]["spec"]["volumes"] if v["name"] == "outcomes"]
    assert [v["persistentVolumeClaim"]["claimName"] for v in volumes] == ["shared", "shared"]


def test_the_merge_job_waits_for_every_index(manifest: dict[str, Any]) -> None:
    run = run_of(manifest)
    merge = validated(manifest["items"][-1])
    [box] = merge.spec.template.spec.containers
    assert box.image == "pytest-reb-harness:latest" and merge.spec.completion_mode is None
    cmd = box.command
    assert cmd[:7] == [f"{k8s.HARNESS}/bin/python", "-I", "-m", "pytest_reb.loop.cli", "k8s",
                       "--merge", f"{k8s.OUT_MOUNT}/{run}"]
    assert cmd[cmd.index("--wait-for") + 1:] == [f"{run}-0/0", f"{run}-1/0", f"{run}-1/1"]
    # it waits past the longest index's deadline, and its own deadline is later still
    assert 1200 < int(cmd[cmd.index("--timeout") + 1]) < merge.spec.active_deadline_seconds


def test_one_indexed_job_per_image_one_index_per_pair(manifest: dict[str, Any]) -> None:
    jobs = [validated(i) for i in manifest["items"] if i["kind"] == "Job"]
    jobs = jobs[:-1]  # the merge Job is tested below
    run = run_of(manifest)
    assert [j.metadata.name for j in jobs] == [f"{run}-0", f"{run}-1"]
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
        assert volumes["outcomes"].persistent_volume_claim.claim_name == f"{run}-outcomes"
        [copy] = pod.init_containers  # the harness comes from its own image, not the agent's
        assert copy.image == "pytest-reb-harness:latest"
        # the harness's own interpreter, isolated from the image's PYTHONPATH and user site
        # and pytest run so that a failed tier is a verdict, not a failed Job
        assert verify.command[:4] == [f"{k8s.HARNESS}/bin/python", "-I", "-c", k8s.VERDICTS]
        assert verify.resources.requests["memory"] == "16Gi"
        [lib] = [e for e in verify.env if e.name == "REB_WITNESS_LIB"]  # prebuilt: no compiler
        assert lib.value == k8s.WITNESS_LIB
        assert verify.security_context.capabilities.drop == ["ALL"]
        assert not verify.security_context.allow_privilege_escalation
        assert pod.restart_policy == "Never" and pod.automount_service_account_token is False
        [index] = [e for e in verify.env if e.name == "REB_INDEX"]
        assert "job-completion-index" in index.value_from.field_ref.field_path
        name = job.metadata.name
        assert f"{k8s.MATRIX_MOUNT}/{name}-$(REB_INDEX).toml" in verify.command
        assert f"{k8s.OUT_MOUNT}/{run}/{name}/$(REB_INDEX)" in verify.command
        assert "c1 or c4" in verify.command


def test_each_index_has_its_row_on_local_host(manifest: dict[str, Any]) -> None:
    run = run_of(manifest)
    config = validated(manifest["items"][2])
    rows = {key: tomllib.loads(text)["target"] for key, text in config.data.items()
            if key.endswith(".toml")}
    assert sorted(rows) == [f"{run}-0-0.toml", f"{run}-1-0.toml", f"{run}-1-1.toml"]
    [alpha] = rows[f"{run}-0-0.toml"]
    assert alpha == {"repo": "reb/tinynet", "agent": "alpha", "host": "local://",
                     "report": f"{k8s.MATRIX_MOUNT}/{run}-0-0.report.json"}
    assert json.loads(config.data[f"{run}-0-0.report.json"])["python_path"]
    assert [r[0]["agent"] for k, r in sorted(rows.items())][1:] == ["beta", "gamma"]
    policy = validated(manifest["items"][0])
    assert policy.spec.policy_types == ["Ingress", "Egress"]
    assert policy.spec.ingress is None and policy.spec.egress is None  # no traffic at all
    assert policy.spec.pod_selector.match_labels["reb.run"] == run


def test_a_gpu_less_cluster_a_registry_and_memory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """``--node-gpus 0``: no pod asks for a GPU, every tier is planned (C5 too) and the short
    ones are named; ``--registry`` names every image there and writes the push lines."""
    (tmp_path / "m.toml").write_text(
        '[[target]]\nrepo = "reb/tinynet"\nagent = "alpha"\nimage = "reb-agent-env:a-1"\n')
    monkeypatch.chdir(ROOT)
    out = tmp_path / "jobs.json"
    assert reb(["k8s", str(tmp_path / "m.toml"), "--modules", str(DEMO_MODULE), "--out",
                str(out), "--node-gpus", "0", "--registry", "registry.example/team/",
                "--memory", "8Gi"]) == 0
    printed = capsys.readouterr()
    assert "C4 needs 2 GPU(s), a node has 0: ends insufficient_hardware" in printed.err
    push = tmp_path / "jobs.push.sh"
    assert f"sh {push}" in printed.out
    assert push.read_text().splitlines()[3:] == [
        "docker tag reb-agent-env:a-1 registry.example/team/reb-agent-env:a-1",
        "docker push registry.example/team/reb-agent-env:a-1",
        "docker tag pytest-reb-harness:latest registry.example/team/pytest-reb-harness:latest",
        "docker push registry.example/team/pytest-reb-harness:latest"]
    items = json.loads(out.read_text())["items"]
    [job, merge] = [validated(i) for i in items if i["kind"] == "Job"]
    [verify] = job.spec.template.spec.containers
    assert verify.image == "registry.example/team/reb-agent-env:a-1"
    assert job.spec.template.spec.init_containers[0].image == \
        "registry.example/team/pytest-reb-harness:latest"
    assert merge.spec.template.spec.containers[0].image.startswith("registry.example/team/")
    assert "nvidia.com/gpu" not in verify.resources.limits
    assert verify.resources.limits["memory"] == verify.resources.requests["memory"] == "8Gi"
    assert "c0 or c1 or c2 or c3 or c4 or c5" in verify.command


def test_a_failed_tier_ends_the_index_well_and_an_error_fails_it(tmp_path: Path) -> None:
    """The pod's command, run here with real pytest: exit 1 (a verdict) becomes 0, a usage
    error (4) or nothing collected (5) stays, and fails the Job."""
    import subprocess
    import sys

    (tmp_path / "test_x.py").write_text("def test_no():\n    assert False\n")

    def pod(*args: str) -> int:
        return subprocess.run([sys.executable, "-I", "-c", k8s.VERDICTS, *args, "-q",
                               "-p", "no:cacheprovider"], cwd=tmp_path, capture_output=True,
                              check=False).returncode

    assert pod("test_x.py") == 0
    assert pod("test_x.py", "--no-such-option") == 4
    assert pod("test_x.py", "-k", "nothing_matches") == 5


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
    assert "not under the working directory" in capsys.readouterr().err


def test_the_merge_command_joins_the_finished_indices(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """What the merge Job runs, on a claim's layout: two indices finished, one never did."""
    root = tmp_path / "claim" / "run"
    for index, status in (("job-0/0", "passed"), ("job-1/0", "failed")):
        raw = tmp_path / "raw" / index
        OutcomeLog(raw / "outcomes.jsonl").append(Outcome(
            repo="reb/tinynet", target=index, tier="c1", status=status,  # type: ignore[arg-type]
            strict=status == "passed", compat=status == "passed", agent="a"))
        merging.write([raw], root / index / "20260101-000000-abcdef")  # a finished pytest run
    argv = ["k8s", "--merge", str(root), "--timeout", "0", "--wait-for", "job-0/0", "job-1/0"]
    assert reb(argv) == 0
    assert "merged 2 index run(s)" in capsys.readouterr().out
    merged = json.loads((root / "merged" / "summary.json").read_text())
    assert merged["totals"]["c1"]["passed"] == 1 and merged["totals"]["c1"]["failed"] == 1
    (root / "merged" / "summary.json").unlink()
    (root / "merged" / "outcomes.jsonl").unlink()
    assert reb([*argv, "job-1/1"]) == 1  # waited 0 s for it, merged the rest
    assert "index(es) job-1/1 wrote no summary.json" in capsys.readouterr().err
