"""A run matrix as Kubernetes objects a user applies as they are (no cluster runs them here).

There is no Docker engine in a pod, so the pod *is* the target: its image is
the agent-built image and the plugin checks it as ``local://``.  Nothing of
the harness comes from that image: an init container copies pytest-reb and
its own interpreter out of the harness image into an ``emptyDir`` that the
verifying container mounts read-only at ``/opt/reb``, and the matrix row of
each index comes from a ConfigMap, also read-only.  ``reb image build``
(``harness.py``) makes that image: its interpreter brings its own loader and
libraries, runs with ``-I`` (the image's ``PYTHONPATH`` and user site stay
out), and the Job's environment names its prebuilt witness and its git.

A pod template has one image, so there is one Indexed Job per agent-built
image, and one completion index per (repository, target) pair of that image
(an image that serves several repositories has several indices).  Every
name carries the run's id (``<name>-<run id>``), so a second run never
collides with the first, and each writes under its own folder of the claim.
Index *i* reads ``<job>-<i>.toml`` and writes its run to
``<claim>/<run>/<job>/<i>``; the claim is a PersistentVolumeClaim of the
manifest (``ReadWriteMany``: pods on several nodes write to it) unless
``--claim`` names one that exists.  Kubernetes has no dependency between
Jobs, so the merge Job starts with the others and waits on the claim for
every index's ``summary.json`` (pytest wrote it: every verdict is in), then
joins them with ``reb merge``'s code into ``<claim>/<run>/merged``; at its
deadline it merges what there is and fails naming what is missing.
A Job fails only on an infrastructure error: pytest ending 1 (a tier did not pass) is a
verdict, recorded like any other, so the index ends ``Complete`` as a Slurm task does
(``VERDICTS``).  Tiers are planned per node as for ``reb slurm`` (``--node-gpus``): no pod
asks for more GPUs than a node has, and a tier that needs more ends
``insufficient_hardware`` as on one such machine.  ``--registry`` names every image where
the cluster pulls it from (``push_script`` writes the ``docker push`` lines).
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
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_reb.loop.cluster.plan import Pair, Plan
from pytest_reb.report import merge as merging

#: Where the harness image keeps pytest-reb with an interpreter of its own
#: (``reb image build``, ``pytest_reb.loop.cluster.harness``).
HARNESS = "/opt/reb"
#: The witness library the harness image holds prebuilt (pods have no C compiler).
WITNESS_LIB = f"{HARNESS}/witness/libreb_witness.so"
#: Its git, which the integrity check reads the checkout's objects with (an image may have none).
GIT = f"{HARNESS}/bin/git"
#: ``-I``: the agent-built image's ``PYTHONPATH``, ``PYTHONHOME`` and user site stay out of
#: the harness's interpreter, with no variable set that the commands it starts would inherit.
ISOLATED = "-I"
MATRIX_MOUNT = "/etc/reb/matrix"
OUT_MOUNT = "/reb-out"
INDEX_ANNOTATION = "metadata.annotations['batch.kubernetes.io/job-completion-index']"
#: The merge Job's deadline past the longest index's: its own start, the merge.
MERGE_SLACK = 600


class K8sError(ValueError):
    """A matrix that cannot be written as Indexed Jobs, with what to change."""


@dataclass(frozen=True)
class K8sOptions:
    """What the manifest needs beyond the plan."""

    run: str  # the run's id, in every name: two runs never collide
    name: str = "reb"
    harness_image: str = "pytest-reb-harness:latest"
    claim: str | None = None  # an existing claim; None: the manifest makes <name>-<run>
    claim_size: str = "20Gi"
    storage_class: str | None = None
    namespace: str = "default"
    python: str = f"{HARNESS}/bin/python"
    pytest_args: tuple[str, ...] = ()
    memory: str = "16Gi"
    shm: str = "8Gi"
    #: the cluster's registry (``registry.example/team``): every image the pods run is named
    #: there, where the cluster pulls it from (``push_script`` puts them there)
    registry: str | None = None

    def pulled(self, image: str) -> str:
        """``image`` as the cluster pulls it: under ``registry`` when one is given."""
        return f"{self.registry.rstrip('/')}/{image}" if self.registry else image


def _dns_name(text: str, most: int = 52) -> str:
    """An RFC 1123 label (Job and ConfigMap names): lower case, digits and '-'."""
    name = re.sub(r"[^a-z0-9-]+", "-", text.lower()).strip("-")
    return name[:most].rstrip("-") or "reb"


def run_name(opts: K8sOptions) -> str:
    """``<name>-<run id>``: short enough that ``<job>-<index>`` pod host names stay labels."""
    return f"{_dns_name(opts.name, 20)}-{_dns_name(opts.run, 24)}"


def _row(pair: Pair, report: str | None) -> str:
    """The one-row matrix of an index: the pair's repository and agent, on ``local://``."""
    fields = {"repo": pair.repo.name, "agent": pair.target.agent, "host": "local://",
              "report": report}
    return "[[target]]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in fields.items() if v)


def _module_path(module: Path) -> str:
    """Where a module is in the harness image: ``reb k8s`` runs in the pytest-reb tree that
    image holds at ``HARNESS``, so a module's path under the working directory is its path
    there (the package does not guess where its own source tree is)."""
    try:
        return f"{HARNESS}/{module.resolve().relative_to(Path.cwd().resolve())}"
    except ValueError:
        raise K8sError(f"{module} is not under the working directory, so not in the harness "
                       f"image's tree at {HARNESS}; run reb k8s from that tree (a pytest-reb "
                       "checkout) with the module in it (repos/)") from None


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
    """A ``v1 List``: NetworkPolicy, claim, ConfigMap of rows, Indexed Jobs, the merge Job."""
    run = run_name(opts)
    claim = opts.claim or f"{run}-outcomes"
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
        jobs.append(_job(job, image, pairs, labels, opts, modules, claim,
                         gpus=max(gpus[p.key] for p in pairs),
                         deadline=max(seconds[p.key] for p in pairs), plan=plan))
    meta = {"namespace": opts.namespace, "labels": labels}
    indices = [f"{j['metadata']['name']}/{i}" for j in jobs
               for i in range(j["spec"]["completions"])]
    deadline = max(j["spec"]["activeDeadlineSeconds"] for j in jobs)
    made = [] if opts.claim else [_claim(claim, meta, opts)]
    policy = {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
              "metadata": {"name": f"{run}-no-network", **meta},
              "spec": {"podSelector": {"matchLabels": labels},
                       "policyTypes": ["Ingress", "Egress"]}}
    config = {"apiVersion": "v1", "kind": "ConfigMap",
              "metadata": {"name": f"{run}-matrix", **meta}, "data": data}
    return {"apiVersion": "v1", "kind": "List",
            "items": [policy, *made, config, *jobs,
                      _merge_job(run, labels, opts, claim, indices, deadline)]}


def _claim(name: str, meta: dict[str, Any], opts: K8sOptions) -> dict[str, Any]:
    spec: dict[str, Any] = {"accessModes": ["ReadWriteMany"],
                            "resources": {"requests": {"storage": opts.claim_size}}}
    if opts.storage_class:
        spec["storageClassName"] = opts.storage_class
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": name, **meta}, "spec": spec}


def _hardened(container: dict[str, Any]) -> dict[str, Any]:
    container["securityContext"] = {"allowPrivilegeEscalation": False, "privileged": False,
                                    "capabilities": {"drop": ["ALL"]}}
    return container


def _merge_job(run: str, labels: dict[str, str], opts: K8sOptions, claim: str,
               indices: list[str], deadline: int) -> dict[str, Any]:
    """The Job that waits for every index's run on the claim and merges them."""
    argv = [opts.python, ISOLATED, "-m", "pytest_reb.loop.cli", "k8s", "--merge",
            f"{OUT_MOUNT}/{run}", "--timeout", str(deadline + MERGE_SLACK // 2),
            "--wait-for", *indices]
    merge = _hardened({
        "name": "merge", "image": opts.pulled(opts.harness_image),
        "imagePullPolicy": "IfNotPresent",
        "command": argv, "workingDir": "/",
        "resources": {"limits": {"memory": "1Gi"}, "requests": {"cpu": "100m",
                                                                "memory": "256Mi"}},
        "volumeMounts": [{"name": "outcomes", "mountPath": OUT_MOUNT}]})
    return {
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": f"{run}-merge", "namespace": opts.namespace, "labels": labels,
                     "annotations": {"reb.indices": json.dumps(indices)}},
        "spec": {
            "completions": 1, "backoffLimit": 0,
            "activeDeadlineSeconds": deadline + MERGE_SLACK,
            "template": {
                "metadata": {"labels": labels},
                "spec": {"restartPolicy": "Never", "automountServiceAccountToken": False,
                         "enableServiceLinks": False, "containers": [merge],
                         "volumes": [{"name": "outcomes",
                                      "persistentVolumeClaim": {"claimName": claim}}]}}},
    }


def push_script(plan: Plan, opts: K8sOptions) -> str:
    """The ``docker tag`` and ``docker push`` lines that put the run's images (every agent-built
    image of the matrix, and the harness image) where ``registry`` names them."""
    if not opts.registry:
        raise K8sError("a push script needs --registry")
    images = [*by_image(plan), opts.harness_image]
    lines = ["#!/bin/sh", "# Made by `reb k8s --registry`: the images its Jobs pull.", "set -eu"]
    for image in images:
        lines += [f"docker tag {image} {opts.pulled(image)}", f"docker push {opts.pulled(image)}"]
    return "\n".join(lines) + "\n"


#: pytest's exit codes that mean "every verdict is in": 0 all passed, 1 some did not. A
#: failed tier is data, so the index succeeds; any other code (interrupted, internal error,
#: usage, nothing collected) is an infrastructure error and fails the Job.
VERDICTS = ("import sys, pytest; rc = int(pytest.main(sys.argv[1:])); "
            "sys.exit(0 if rc in (0, 1) else rc)")


def _job(name: str, image: str, pairs: list[Pair], labels: dict[str, str], opts: K8sOptions,
         modules: list[str], claim: str, *, gpus: int, deadline: int, plan: Plan
         ) -> dict[str, Any]:
    argv = [opts.python, ISOLATED, "-c", VERDICTS, *modules,
            "--reb-matrix", f"{MATRIX_MOUNT}/{name}-$(REB_INDEX).toml",
            "--reb-outdir", f"{OUT_MOUNT}/{labels['reb.run']}/{name}/$(REB_INDEX)",
            "-m", plan.marker_expression(),
            f"--reb-timeout-scale={plan.timeout_scale:g}", "-p", "no:cacheprovider",
            *opts.pytest_args]
    limits = {"memory": opts.memory, **({"nvidia.com/gpu": str(gpus)} if gpus else {})}
    verify = {
        "name": "verify", "image": opts.pulled(image), "imagePullPolicy": "IfNotPresent",
        "command": argv, "workingDir": "/",
        "env": [{"name": "REB_INDEX", "valueFrom": {"fieldRef": {"fieldPath": INDEX_ANNOTATION}}},
                {"name": "PYTHONDONTWRITEBYTECODE", "value": "1"},
                {"name": "REB_WITNESS_LIB", "value": WITNESS_LIB},
                {"name": "REB_GIT", "value": GIT}],
        "resources": {"limits": limits, "requests": {"cpu": "1", "memory": opts.memory}},
        "securityContext": {"allowPrivilegeEscalation": False, "privileged": False,
                            "capabilities": {"drop": ["ALL"]}},
        "volumeMounts": [
            {"name": "harness", "mountPath": HARNESS, "readOnly": True},
            {"name": "matrix", "mountPath": MATRIX_MOUNT, "readOnly": True},
            {"name": "dshm", "mountPath": "/dev/shm"},
            {"name": "outcomes", "mountPath": OUT_MOUNT}],
    }
    copy = {"name": "harness", "image": opts.pulled(opts.harness_image),
            "imagePullPolicy": "IfNotPresent",
            "command": ["cp", "-a", f"{HARNESS}/.", "/harness/"],
            "volumeMounts": [{"name": "harness", "mountPath": "/harness"}],
            "securityContext": {"allowPrivilegeEscalation": False,
                                "capabilities": {"drop": ["ALL"]}}}
    volumes = [{"name": "harness", "emptyDir": {}},
               {"name": "matrix", "configMap": {"name": f"{labels['reb.run']}-matrix"}},
               {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": opts.shm}},
               {"name": "outcomes", "persistentVolumeClaim": {"claimName": claim}}]
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


def merge_indices(root: Path, indices: Sequence[str], *, timeout: float, poll: float = 10.0
                  ) -> tuple[Path, list[str]]:
    """Wait until every index folder under ``root`` holds a finished run, then merge them.

    An index's run is finished when pytest wrote its ``summary.json``.  At
    ``timeout`` what there is is merged; returns (merged folder, indices missing).
    """
    deadline = time.monotonic() + timeout

    def finished(index: str) -> Path | None:
        found = sorted((root / index).glob("[0-9]*/summary.json"))
        return found[-1].parent if found else None

    while True:
        missing = [i for i in indices if finished(i) is None]
        if not missing or time.monotonic() >= deadline:
            break
        time.sleep(poll)
    runs = [run for i in indices if (run := finished(i)) is not None]
    if not runs:
        raise K8sError(f"{root}: no index finished a run within {timeout:g} s")
    target = root / "merged"
    try:
        merging.write(runs, target)
    except merging.MergeError as exc:
        raise K8sError(str(exc)) from None
    return target, missing
