#!/usr/bin/env bash
# The GPU tiers on a machine with NVIDIA GPUs and no Docker: the demo through
# --reb-host=local://, then the CPU-fallback negative. Output to $OUT (or /tmp).
# Needs pydantic (and testinfra) importable: see docs/gpu.md for the wheels.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/reb-gpu}
mkdir -p "$out"
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
# The demo's checkout at its pinned commit (the integrity verdict needs a real one; demo/tinynet
# is only its source). Made where the package's dependencies are installed, then carried:
#   python -m pytest_reb.loop.demo checkout .demo-checkout
demo=${REB_DEMO_CHECKOUT:-$PWD/.demo-checkout}
[ -d "$demo/.git" ] || { echo "no demo checkout at $demo: run 'python -m pytest_reb.loop.demo checkout .demo-checkout' first" >&2; exit 2; }
py=$(command -v python3)
nvidia-smi -L
"$py" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "gpus", torch.cuda.device_count())'
common=(-p pytest_reb.plugin.hooks -p no:cacheprovider --rootdir "$PWD" --reb-host=local://
        --reb-python "$py" --reb-repo-dir "$demo" -v -rA)
# A truthful report of this machine's interpreter, as an agent that checked would write it.
"$py" - "$out/report.json" <<'PY'
import json, platform, sys, torch
json.dump({"python_path": sys.executable, "python_version": platform.python_version(),
           "torch_version": torch.__version__, "cuda_available": torch.cuda.is_available(),
           "gpu_count": torch.cuda.device_count(), "ddp_expected_ok": None, "env_tool": "none",
           "env_name": None, "notes": "written by docs/gpu_run.sh"}, open(sys.argv[1], "w"))
PY
echo "=== demo: C1-C5 on this machine (C0 needs node, which does not travel)"
"$py" -m pytest "${common[@]}" --reb-outdir "$out/demo" -m "not c0" \
    --agent-report "$out/report.json" demo/test_demo__tinynet.py
echo "=== negative: a 'GPU' entrypoint that stays on the CPU (strict must fail, compat pass)"
"$py" -m pytest "${common[@]}" --noconftest --reb-allow-commit-mismatch --reb-outdir "$out/fallback" -m "c3 or c4" \
    tests/gpu/fallback_tinynet.py
"$py" -m pytest "${common[@]}" --noconftest --reb-allow-commit-mismatch --reb-outdir "$out/fallback-compat" -m "c3 or c4" --reb-compat \
    tests/gpu/fallback_tinynet.py
echo "=== evidence"
for f in "$out"/*/*/outcomes.jsonl; do
    "$py" - "$f" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    o = json.loads(line)
    ev = o["evidence"]
    print(o["repo"], o["tier"], o["status"], o["category"], "strict", o["strict"], "compat", o["compat"],
          "holders", ev.get("gpu_holders"), (ev.get("observed") or {}).get("devices"))
PY
done
