#!/usr/bin/env bash
# The GPU machine (no Docker, no network), from the repository root: the honest workload family
# and the two attacks as strict C3 (tests/gpu/run_family.py), then C2/C3 strict and compat of the
# real repositories named in REPOS_FILE beside the official stages (tests/realruns/gpu_repos.py).
# Carried beside it (docs/gpu.md): WHEELS (pydantic, testinfra, docker and the repositories'
# missing packages, for CPython 3.12), PACKS (tests/realruns/gpu_pack.py pack PACKS OWNER/NAME...)
# and BUNDLES (the release's scripts/ folder: git archive HEAD scripts | tar -x -C BUNDLES).
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
export PYTEST_ADDOPTS="$trust"
nvidia-smi -L
timeout "${FAMILY_S:-290}" python3 tests/gpu/run_family.py "$out/fam" ${FAMILY_NAMES:-} \
    --budget-s "$(( ${FAMILY_S:-290} - 40 ))" > "$out/family.log" 2>&1
grep '^==' "$out/family.log"
[ -n "${REPOS_FILE:-}" ] || exit 0
timeout "${REPOS_S:-380}" python3 tests/realruns/gpu_repos.py "$out/rep" "${PACKS:?}" \
    "${BUNDLES:?}" $(cat "$REPOS_FILE") --budget-s "$(( ${REPOS_S:-380} - 80 ))" \
    > "$out/repos.log" 2>&1
grep '^==' "$out/repos.log"
