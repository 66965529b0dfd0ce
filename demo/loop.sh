#!/usr/bin/env bash
# The benchmark loop on the demo repository, from a fresh Debian machine (as root):
# task image -> two scripted agents -> verification of their committed images -> table.
#   bash demo/loop.sh            (REB_GPUS=none to give the agents no GPU)
set -euo pipefail
cd "$(dirname "$0")/.."

bash .ci/setup-docker.sh
# install the package unless this checkout is already the one Python imports
python3 -c 'import sys, pytest_reb; sys.exit(not pytest_reb.__file__.startswith(sys.argv[1]))' \
    "$PWD/" 2>/dev/null \
    || python3 -m pip install -q -e . 2>&1 | grep -v -e '^WARNING: Running pip as' >&2 || true
reb() { python3 -m pytest_reb.loop.cli "$@"; }
out=reports/loop/$(date +%Y%m%d-%H%M%S)

# 1. the starting image: base + demo/tinynet at its pinned commit + task text and contract
reb task build reb/tinynet
# the wheels the scripted agents install from, offline (a read-only mount, never in the image)
python3 -c 'from pytest_reb.loop.demo.images import ensure_wheelhouse; ensure_wheelhouse()'

# 2. two agents work in containers of it; each result is committed and gets a matrix row
for agent in tinynet minimal; do
    reb agent run --agent "scripted-$agent" --repo reb/tinynet --out "$out" \
        --command "bash /opt/reb-agent/agents/setup-$agent.sh {repo} {report_path}" \
        --mount demo/agents:/opt/reb-agent/agents --mount .cache/wheels:/opt/reb-agent/wheels \
        --gpus "${REB_GPUS:-all}" --budget 1800
done

# 3. verification of the committed images, without network (C2-C4 fail without a GPU: rc 1)
python3 -m pytest demo --reb-matrix "$out/matrix.jsonl" --reb-outdir "$out/verify" \
    -p no:benchmark -q "$@" || [ $? -le 1 ]

# 4. the master table with the efficiency columns
reb table "$(ls -d "$out"/verify/*/ | tail -1)" --agent-runs "$out" --out "$out/table"
