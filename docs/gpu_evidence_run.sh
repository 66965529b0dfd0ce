#!/usr/bin/env bash
# The evidence rules on a machine with one NVIDIA GPU and no Docker (--reb-host=local://):
#   1. the demo C1-C5 strict (C4: insufficient_hardware with one GPU)
#   2. long-context-attention C2 C3 strict (checkout at the pinned commit under
#      .realrun/long-context-attention, never committed)
#   3. the GPU fakes of tests/gpu/fake_entries.py as C3 runs: strict must fail them
#      with no_gpu_compute, and each outcome keeps the official (compat) verdict: pass
#   4. the time the sampling adds to a C3-like run, with against without, alternating
# Output to $OUT (or /tmp/reb-evidence). Needs pydantic and testinfra importable (see
# docs/gpu.md) and a C compiler, or REB_WITNESS_LIB naming a built witness library.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/reb-evidence}
runs=/tmp/reb-evidence-runs
mkdir -p "$out" "$runs"
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
# The demo's checkout at its pinned commit (the integrity verdict needs a real one; demo/tinynet
# is only its source). Made where the package's dependencies are installed, then carried:
#   python -m pytest_reb.loop.demo checkout .demo-checkout
demo=${REB_DEMO_CHECKOUT:-$PWD/.demo-checkout}
[ -d "$demo/.git" ] || { echo "no demo checkout at $demo: run 'python -m pytest_reb.loop.demo checkout .demo-checkout' first" >&2; exit 2; }
py=$(command -v python3)
nvidia-smi -L
common=(-p pytest_reb.plugin.hooks -p no:cacheprovider --rootdir "$PWD" --reb-host=local://
        --reb-python "$py" -v -rA)
"$py" - "$out/report.json" <<'PY'
import json, platform, sys, torch
json.dump({"python_path": sys.executable, "python_version": platform.python_version(),
           "torch_version": torch.__version__, "cuda_available": torch.cuda.is_available(),
           "gpu_count": torch.cuda.device_count(), "ddp_expected_ok": None, "env_tool": "none",
           "env_name": None, "notes": "written by docs/gpu_evidence_run.sh"}, open(sys.argv[1], "w"))
PY
echo "=== demo: C1-C5 strict"
"$py" -m pytest "${common[@]}" --reb-repo-dir "$demo" --reb-outdir "$runs/demo" \
    -m "not c0" --agent-report "$out/report.json" demo/test_demo__tinynet.py 2>&1 | tail -25
echo "=== long-context-attention: C2 C3 strict"
"$py" -m pytest "${common[@]}" --reb-repo-dir "$PWD/.realrun/long-context-attention" \
    --reb-outdir "$runs/lca" -m "c2 or c3" repos/test_feifeibear__long_context_attention.py \
    2>&1 | tail -12
for fake in context elementwise matmul alloc loop100; do
    echo "=== fake: $fake (C3)"
    REB_GPU_FAKE=$fake "$py" -m pytest "${common[@]}" --noconftest --reb-allow-commit-mismatch \
        --reb-repo-dir "$demo" --reb-outdir "$runs/fake-$fake" -m c3 \
        tests/gpu/fakes_tinynet.py 2>&1 | grep -E "PASSED|FAILED|^C3 "
done
echo "=== sampling overhead (production watch and witness vs none)"
"$py" tests/gpu/measure_compute.py "$out/overhead.json" --overhead-only --repeat 5
echo "=== outcomes"
cat "$runs"/*/*/outcomes.jsonl > "$out/outcomes.jsonl"
"$py" - "$out/outcomes.jsonl" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    o = json.loads(line)
    ev = o["evidence"]
    comp = {g: (v.get("gpm") or {}).get("sm_active_ms") for g, v in (ev.get("gpu_compute") or {}).items()
            if g.isdigit()}
    wit = ev.get("witness") or {}
    print(o["repo"], o["tier"], o["status"], o["category"], "strict", o["strict"], "compat",
          o["compat"], "sm_active_ms", comp, "mem", ev.get("gpu_memory"),
          "witness", [(p["pid"], bool(p["reached"]), p["end"]) for p in wit.get("processes", [])],
          "|", o["message"][:160])
PY
