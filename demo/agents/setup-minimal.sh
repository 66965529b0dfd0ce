#!/usr/bin/env bash
# A deliberately minimal scripted "agent" for any repository: a venv with numpy only, and an
# honest report. It shows the loop end to end; the environment is incomplete by design, so
# the verdicts name missing dependencies, not the harness.
#   bash setup-minimal.sh [REPO] [REPORT]
# numpy comes from /opt/reb-agent/wheels when such a folder is mounted, else from the index
# (where the index is reached through a proxy, mount its CA bundle at /opt/reb-agent/ca.crt).
set -euo pipefail
repo=${1:-/data/project/repo}
report=${2:-/opt/scimlopsbench/report.json}
env=/opt/envs/minimal
pip_args=(--no-cache-dir --disable-pip-version-check --quiet)
if [ -d /opt/reb-agent/wheels ]; then pip_args+=(--no-index --find-links /opt/reb-agent/wheels); fi
if [ -f /opt/reb-agent/ca.crt ]; then export PIP_CERT=/opt/reb-agent/ca.crt; fi

python3 -m venv "$env"
"$env/bin/pip" install "${pip_args[@]}" numpy
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
