#!/usr/bin/env bash
# A scripted "agent" for demo/tinynet: what an environment-setup agent would do, as a script.
# It makes a venv, installs the requirements offline from a wheel folder mounted read-only,
# checks the CPU entrypoint once, and writes the report from what the interpreter answers.
#   bash setup-tinynet.sh [REPO] [REPORT]     (run by `reb agent run`, see demo/loop.sh)
set -euo pipefail
repo=${1:-/data/project/repo}
report=${2:-/opt/scimlopsbench/report.json}
wheels=${REB_WHEELS:-/opt/reb-agent/wheels}
env=/opt/envs/tinynet

python3 -m venv "$env"
"$env/bin/pip" install --no-index --find-links "$wheels" --no-cache-dir --no-compile \
    --disable-pip-version-check --quiet -r "$repo/requirements.txt" numpy
# the same entrypoint the checks will run, once, outside the repository
"$env/bin/python" "$repo/train.py" --steps 2 --device cpu --out /tmp/tinynet-check

"$env/bin/python" - "$report" <<'PY'
import json, sys
import torch
cuda = torch.cuda.is_available()
json.dump({
    "python_path": sys.executable,
    "python_version": sys.version.split()[0],
    "torch_version": torch.__version__,
    "cuda_available": cuda,
    "gpu_count": torch.cuda.device_count() if cuda else 0,
    "ddp_expected_ok": None,
    "env_tool": "venv",
    "env_name": "tinynet",
    "notes": "python3 -m venv /opt/envs/tinynet; pip install -r requirements.txt numpy from a "
             "read-only wheel folder (CPU torch); train.py --device cpu ran once. No DDP check.",
}, open(sys.argv[1], "w"), indent=2)
PY
echo "report written to $report"
