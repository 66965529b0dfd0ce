#!/usr/bin/env bash
# The GPU machine (no Docker, no network), from the repository root: the honest workload family
# and the two attacks as strict C3 (tests/gpu/run_family.py) and the launcher tests
# (tests/test_witness_gpu_launchers.py), then C2/C3 strict and compat of the real repositories
# named in REPOS_FILE beside the official stages (tests/realruns/gpu_repos.py), JOBS at a time
# (COMPAT_RUN=0: the compat verdicts of the strict run's own observations only).
# Carried beside it (docs/real-runs.md): WHEELS (pydantic, testinfra and docker for CPython 3.12:
# what pytest-reb needs that the machine lacks), POOL (tests/realruns/gpu_wheels.py: each
# repository's missing packages, installed into a venv of its own), PACKS
# (tests/realruns/gpu_pack.py pack PACKS OWNER/NAME...) and BUNDLES (the release's scripts/
# folder: git archive HEAD scripts | tar -x -C BUNDLES).  FAMILY=0 leaves the first two out.
# Records go to $OUT/fam/family.jsonl and $OUT/rep/repos.jsonl, a line per outcome as it comes.
set -u
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/reb-gpu-family}
python3 -m pip install -q --no-index --no-deps --no-compile "${WHEELS:?}"/*.whl
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 \
    NVSHMEM_DISABLE_NVLS=1
# The lent machine's own start-up hook (an egress CA; no distribution owns it), trusted by digest.
trust=""
for f in $(find /opt /usr -name '_sandboxing_egress_ca.pth' 2>/dev/null); do
    trust="$trust --reb-trust-hook $(sha256sum "$f" | cut -d' ' -f1)"; done
# pytest-reb's runs get it as options of their own (gpu_repos.py: REB_GPU_PYTEST_ARGS), not as
# PYTEST_ADDOPTS, which a repository's own pytest (a stage's test node) would also read.
export REB_GPU_PYTEST_ARGS="$trust"
nvidia-smi -L
# The honest family, the launcher tests and the repositories run side by side: every GPU
# stage (pytest-reb's, the official bundle's, the launcher tests' under the same lock
# file) holds the GPU's lease, so no two overlap on the GPU.  The two attacks edit the
# machine's own site folder, so they run alone, after everything else.
lease=/tmp/reb-gpu-leases/gpu-0.lock
mkdir -p "$(dirname "$lease")"
if [ "${FAMILY:-1}" = 1 ]; then
    honest=$(python3 -c 'import sys; sys.path.insert(0, "tests/gpu")
from workloads_repo import WORKLOADS; print(" ".join(WORKLOADS))')
    ( export PYTEST_ADDOPTS="$trust"
      timeout "${FAMILY_S:-290}" python3 tests/gpu/run_family.py "$out/fam" ${FAMILY_NAMES:-$honest} \
        --budget-s "$(( ${FAMILY_S:-290} - 40 ))" > "$out/family.log" 2>&1
      timeout "${LAUNCHERS_S:-150}" python3 -c 'import filelock, subprocess, sys
with filelock.FileLock(sys.argv[1]): sys.exit(subprocess.call(sys.argv[2:]))' \
        "$lease" python3 -m pytest -p no:cacheprovider -q -rA \
        tests/test_witness_gpu_launchers.py > "$out/launchers.log" 2>&1 ) &
fi
if [ -n "${REPOS_FILE:-}" ]; then
    # No network here: the hub libraries read their caches (the stand-ins') without asking.
    HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_DATASETS_OFFLINE=1 timeout "${REPOS_S:-380}" python3 tests/realruns/gpu_repos.py "$out/rep" "${PACKS:?}" \
        "${BUNDLES:?}" $(cat "$REPOS_FILE") ${POOL:+--wheels "$POOL"} --jobs "${JOBS:-1}" \
        $([ "${COMPAT_RUN:-1}" = 1 ] || echo --no-compat-run) \
        --budget-s "$(( ${REPOS_S:-380} - 90 ))" > "$out/repos.log" 2>&1
    grep '^==' "$out/repos.log"
fi
wait
[ "${FAMILY:-1}" = 1 ] || exit 0
[ -n "${FAMILY_NAMES:-}" ] || PYTEST_ADDOPTS="$trust" timeout "${ATTACKS_S:-90}" python3 tests/gpu/run_family.py \
    "$out/fam" attack_borrowed_name attack_edited_optimizer >> "$out/family.log" 2>&1
grep '^==' "$out/family.log"
grep -E '^(PASSED|FAILED|ERROR)|passed|failed' "$out/launchers.log" | tail -12
