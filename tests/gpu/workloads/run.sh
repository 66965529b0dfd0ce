#!/usr/bin/env bash
# The repository's training script, as a README tells users to start it.
set -euo pipefail
cd "$(dirname "$0")"
python train.py --steps 2 "$@"
