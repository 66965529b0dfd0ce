#!/usr/bin/env bash
# A deliberately minimal scripted "agent" for any repository: a venv with numpy only, and an
# honest report. Run on one of the 44 it shows the loop end to end; the environment is
# incomplete by design, so the verdicts name missing dependencies, not the harness.
#   bash setup-minimal.sh [REPO] [REPORT]
set -euo pipefail
repo=${1:-/data/project/repo}
report=${2:-/opt/scimlopsbench/report.json}
env=/opt/envs/minimal
# where the network reaches the package index only through a proxy, its CA is mounted here
if [ -f /opt/reb-agent/ca.crt ]; then export PIP_CERT=/opt/reb-agent/ca.crt; fi

python3 -m venv "$env"
"$env/bin/pip" install --no-cache-dir --disable-pip-version-check --quiet numpy
"$env/bin/python" - "$report" "$repo" <<'PY'
import json, sys
json.dump({
    "python_path": sys.executable,
    "python_version": sys.version.split()[0],
    "torch_version": None,
    "cuda_available": None,
    "gpu_count": None,
    "ddp_expected_ok": None,
    "env_tool": "venv",
    "env_name": "minimal",
    "notes": f"python3 -m venv; pip install numpy only. The requirements of {sys.argv[2]} "
             "were not installed and nothing of the repository was run.",
}, open(sys.argv[1], "w"), indent=2)
PY
echo "report written to $report"
