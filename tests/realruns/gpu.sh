#!/usr/bin/env bash
# Real runs on a machine with an NVIDIA GPU and no Docker (--reb-host=local://):
#   feifeibear/long-context-attention C2 C3 C4 (torch only, no assets; our sitecustomize shim)
#   DepthAnything/Depth-Anything-V2   C1 C2 C3 (the demo image from the checkout, the hub
#                                      checkpoint replaced by a random-init stand-in)
# The checkouts at the pinned commits are expected under .realrun/ (git-ignored, never
# committed); the machine's own python3 with torch is the environment under test.
# Logs and outcome records go to $OUT (or /tmp/reb-real).
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/reb-real}
runs=/tmp/reb-real-runs
mkdir -p "$out" "$runs"
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
py=$(command -v python3)
nvidia-smi -L
"$py" -c 'import torch, torchvision; print("torch", torch.__version__, "cuda", torch.version.cuda,
"gpus", torch.cuda.device_count(), "torchvision", torchvision.__version__)'
# Not installed there: load the plugin from this checkout.
plugin=()
"$py" -c 'import importlib.metadata as m, sys
sys.exit(any(e.name == "reb" for e in m.entry_points(group="pytest11")))' && plugin=(-p pytest_reb.plugin.hooks)
common=("${plugin[@]}" -p no:cacheprovider --rootdir "$PWD" --reb-host=local://
        --reb-python "$py" -v -rA)

echo "=== long-context-attention: C2 C3 C4"
"$py" -m pytest "${common[@]}" --reb-repo-dir "$PWD/.realrun/long-context-attention" \
    --reb-outdir "$runs/lca" -m "c2 or c3 or c4" \
    repos/test_feifeibear__long_context_attention.py 2>&1 | tee "$out/lca.log"

echo "=== Depth-Anything-V2: stand-in checkpoint into a fresh cache, then C1 C2 C3"
"$py" tests/realruns/standin.py dav2-model "$py" "$PWD/.realrun/Depth-Anything-V2" \
    "$runs/assets" 2>&1 | tee "$out/dav2.log"
"$py" -m pytest "${common[@]}" --reb-repo-dir "$PWD/.realrun/Depth-Anything-V2" \
    --reb-assets "$runs/assets" --reb-outdir "$runs/dav2" -m "c1 or c2 or c3" \
    repos/test_DepthAnything__Depth_Anything_V2.py 2>&1 | tee -a "$out/dav2.log"

cat "$runs"/lca/*/outcomes.jsonl > "$out/lca-outcomes.jsonl"
cat "$runs"/dav2/*/outcomes.jsonl > "$out/dav2-outcomes.jsonl"
cp "$runs/assets/manifests/DepthAnything__Depth-Anything-V2.json" "$out/dav2-assets.json"
