#!/usr/bin/env bash
# Real run on a machine with two NVIDIA GPUs and no Docker (--reb-host=local://):
#   ZhengYinan-AIR/Diffusion-Planner C1 C2 C3 C4 (one epoch of a tiny model on the one-sample
#   set our setup step make_sample.py writes; no assets to prepare)
# Expects, made by tests/realruns/diffusion_planner.py and docs/real-runs.md:
#   .realrun/Diffusion-Planner   the checkout (16cffef: the pinned commit is not public, and
#                                training fails at the public HEAD in the repository's code)
#   .realrun/nuplan-devkit/nuplan  nuplan-devkit's package (on no index; pure Python for the
#                                  one module the training path imports)
#   /tmp/site on PYTHONPATH      wandb, mmengine and their missing needs, from .whl/ (the
#                                machine's python3 has torch, timm, tensorboard, tqdm, numpy)
# Stage timeouts are scaled by 0.15 (C1/C3 90 s, C4 180 s) so a hang cannot eat the lease.
# Logs and outcome records go to $OUT (or /tmp/reb-real).
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/reb-real}
runs=/tmp/reb-real-runs
mkdir -p "$out" "$runs"
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 \
    NVSHMEM_DISABLE_NVLS=1 WANDB_SILENT=true
cp -r .realrun/nuplan-devkit/nuplan /tmp/site/
py=$(command -v python3)
nvidia-smi -L
"$py" -c 'import torch, timm, tensorboard, wandb, mmengine, nuplan.common.actor_state.vehicle_parameters
print("torch", torch.__version__, "gpus", torch.cuda.device_count(), "timm", timm.__version__,
"tensorboard", tensorboard.__version__, "wandb", wandb.__version__, "mmengine", mmengine.__version__)'
plugin=()
"$py" -c 'import importlib.metadata as m, sys
sys.exit(any(e.name == "reb" for e in m.entry_points(group="pytest11")))' && plugin=(-p pytest_reb.plugin.hooks)

echo "=== Diffusion-Planner: C1 C2 C3 C4"
"$py" -m pytest "${plugin[@]}" -p no:cacheprovider --rootdir "$PWD" --reb-host=local:// \
    --reb-python "$py" -v -rA --reb-timeout-scale 0.15 \
    --reb-repo-dir "$PWD/.realrun/Diffusion-Planner" --reb-outdir "$runs/dp" \
    -m "c1 or c2 or c3 or c4" repos/test_ZhengYinan_AIR__Diffusion_Planner.py 2>&1 \
    | tee "$out/dp.log"
cat "$runs"/dp/*/outcomes.jsonl > "$out/dp-outcomes.jsonl"
