"""A run matrix as Kubernetes Indexed Jobs: the manifest, on paper (no cluster runs it here).

There is no Docker engine in a pod, so the pod *is* the target: its image is
the agent-built image and the plugin checks it as ``local://``.  Nothing of
the harness comes from that image: an init container copies pytest-reb and
its own interpreter out of the harness image into an ``emptyDir`` that the
verifying container mounts read-only at ``/opt/reb``, and the matrix row of
each index comes from a ConfigMap, also read-only.

A pod template has one image, so there is one Indexed Job per agent-built
image, and one completion index per (repository, target) pair of that image
(an image that serves several repositories has several indices).  Index *i*
reads ``<job>-<i>.toml`` and writes its run to ``<claim>/<job>/<i>`` on a
shared PersistentVolumeClaim; ``reb merge`` joins those runs afterwards.
GPUs are ``nvidia.com/gpu`` limits from the pair's tiers, ``/dev/shm`` is a
memory ``emptyDir`` (NCCL and data loaders need more than the 64 MiB default),
``activeDeadlineSeconds`` is the longest pair's time limit, and a
NetworkPolicy denies the pods all traffic, as ``--reb-network=none`` does.

Weaker than the Docker path, and said so in docs/scaling.md: the harness runs
in the same container as the image under test.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_reb.cluster.plan import Pair, Plan

#: Where the harness image keeps pytest-reb with an interpreter of its own.
HARNESS = "/opt/reb"
MATRIX_MOUNT = "/etc/reb/matrix"
OUT_MOUNT = "/reb-out"
#: Checkout root of pytest-reb: modules under it are in the harness image at ``HARNESS``.
ROOT = Path(__file__).resolve().parents[2]
INDEX_ANNOTATION = "metadata.annotations['batch.kubernetes.io/job-completion-index']"


class K8sError(ValueError):
    """A matrix that cannot be written as Indexed Jobs, with what to change."""


@dataclass(frozen=True)
class K8sOptions:
    """What the manifest needs beyond the plan."""

    name: str = "reb"
    harness_image: str = "pytest-reb-harness:latest"
    claim: str = "reb-outcomes"
    namespace: str = "default"
    python: str = f"{HARNESS}/bin/python"
    pytest_args: tuple[str, ...] = ()
    memory: str = "16Gi"
    shm: str = "8Gi"


def _dns_name(text: str) -> str:
    """An RFC 1123 label (Job and ConfigMap names): lower case, digits and '-'."""
    name = re.sub(r"[^a-z0-9-]+", "-", text.lower()).strip("-")
    return name[:52].rstrip("-") or "reb"


def _row(pair: Pair, report: str | None) -> str:
    """The one-row matrix of an index: the pair's repository and agent, on ``local://``."""
    fields = {"repo": pair.repo.name, "agent": pair.target.agent, "host": "local://",
              "report": report}
    return "[[target]]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in fields.items() if v)


def _module_path(module: Path) -> str:
    try:
        return f"{HARNESS}/{module.resolve().relative_to(ROOT)}"
    except ValueError:
        raise K8sError(f"{module} is not in pytest-reb's tree, so not in the harness image; "
                       "put it there (repos/) and build the harness image") from None


def by_image(plan: Plan) -> dict[str, list[Pair]]:
    """The plan's pairs grouped by agent-built image, in plan order."""
    groups: dict[str, list[Pair]] = {}
    for task in plan.tasks:
        if len(task.pairs) != 1:
            raise K8sError("a pod runs in one agent-built image, so each index is one pair; "
                           "leave --shards out")
        [pair] = task.pairs
        if pair.target.image is None:
            raise K8sError(f"{pair.key}: a Kubernetes pod needs an image row, not "
                           f"{pair.target.url}")
        groups.setdefault(pair.target.image, []).append(pair)
    return groups


def manifest(plan: Plan, opts: K8sOptions) -> dict[str, Any]:
    """A ``v1 List``: the NetworkPolicy, the ConfigMap of rows, one Indexed Job per image."""
    run = _dns_name(opts.name)
    labels = {"app.kubernetes.io/name": "pytest-reb", "reb.run": run}
    data: dict[str, str] = {}
    jobs = []
    seconds = {p.key: t.seconds for t in plan.tasks for p in t.pairs}
    gpus = {p.key: t.gpus for t in plan.tasks for p in t.pairs}
    modules = [_module_path(m) for m in plan.modules]
    for n, (image, pairs) in enumerate(by_image(plan).items()):
        job = f"{run}-{n}"
        for i, pair in enumerate(pairs):
            report = None
            if pair.target.report:
                data[f"{job}-{i}.report.json"] = Path(pair.target.report).read_text()
                report = f"{MATRIX_MOUNT}/{job}-{i}.report.json"
            data[f"{job}-{i}.toml"] = _row(pair, report)
        jobs.append(_job(job, image, pairs, labels, opts, modules,
                         gpus=max(gpus[p.key] for p in pairs),
                         deadline=max(seconds[p.key] for p in pairs), plan=plan))
    meta = {"namespace": opts.namespace, "labels": labels}
    policy = {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
              "metadata": {"name": f"{run}-no-network", **meta},
              "spec": {"podSelector": {"matchLabels": labels},
                       "policyTypes": ["Ingress", "Egress"]}}
    config = {"apiVersion": "v1", "kind": "ConfigMap",
              "metadata": {"name": f"{run}-matrix", **meta}, "data": data}
    return {"apiVersion": "v1", "kind": "List", "items": [policy, config, *jobs]}


def _job(name: str, image: str, pairs: list[Pair], labels: dict[str, str], opts: K8sOptions,
         modules: list[str], *, gpus: int, deadline: int, plan: Plan) -> dict[str, Any]:
    argv = [opts.python, "-m", "pytest", *modules,
            "--reb-matrix", f"{MATRIX_MOUNT}/{name}-$(REB_INDEX).toml",
            "--reb-outdir", f"{OUT_MOUNT}/{name}/$(REB_INDEX)", "-m", plan.marker_expression(),
            f"--reb-timeout-scale={plan.timeout_scale:g}", "-p", "no:cacheprovider",
            *opts.pytest_args]
    limits = {"memory": opts.memory, **({"nvidia.com/gpu": str(gpus)} if gpus else {})}
    verify = {
        "name": "verify", "image": image, "imagePullPolicy": "IfNotPresent",
        "command": argv, "workingDir": "/",
        "env": [{"name": "REB_INDEX", "valueFrom": {"fieldRef": {"fieldPath": INDEX_ANNOTATION}}},
                {"name": "PYTHONDONTWRITEBYTECODE", "value": "1"}],
        "resources": {"limits": limits, "requests": {"cpu": "1", "memory": opts.memory}},
        "securityContext": {"allowPrivilegeEscalation": False, "privileged": False,
                            "capabilities": {"drop": ["ALL"]}},
        "volumeMounts": [
            {"name": "harness", "mountPath": HARNESS, "readOnly": True},
            {"name": "matrix", "mountPath": MATRIX_MOUNT, "readOnly": True},
            {"name": "dshm", "mountPath": "/dev/shm"},
            {"name": "outcomes", "mountPath": OUT_MOUNT}],
    }
    copy = {"name": "harness", "image": opts.harness_image, "imagePullPolicy": "IfNotPresent",
            "command": ["cp", "-a", f"{HARNESS}/.", "/harness/"],
            "volumeMounts": [{"name": "harness", "mountPath": "/harness"}],
            "securityContext": {"allowPrivilegeEscalation": False,
                                "capabilities": {"drop": ["ALL"]}}}
    volumes = [{"name": "harness", "emptyDir": {}},
               {"name": "matrix", "configMap": {"name": f"{labels['reb.run']}-matrix"}},
               {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": opts.shm}},
               {"name": "outcomes", "persistentVolumeClaim": {"claimName": opts.claim}}]
    return {
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": name, "namespace": opts.namespace,
                     "labels": labels, "annotations": {
                         "reb.image": image, "reb.pairs": json.dumps([p.key for p in pairs])}},
        "spec": {
            "completionMode": "Indexed", "completions": len(pairs), "parallelism": len(pairs),
            "backoffLimit": 0, "activeDeadlineSeconds": deadline,
            "template": {
                "metadata": {"labels": labels},
                "spec": {"restartPolicy": "Never", "automountServiceAccountToken": False,
                         "enableServiceLinks": False, "initContainers": [copy],
                         "containers": [verify], "volumes": volumes}}},
    }
