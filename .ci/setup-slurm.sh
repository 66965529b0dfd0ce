#!/usr/bin/env bash
# Make this Debian machine able to start the one-machine Slurm cluster that
# tests/test_cluster_slurm.py runs (tests/support/slurmcluster.py): Debian's slurm-wlm
# (slurmctld, slurmd, the clients) and munge. Only installs; it starts nothing
# and configures nothing: the tests bring their own slurm.conf, munge key and
# socket under a temp folder. Idempotent and silent when already in place. Run as root.
set -euo pipefail
export PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"

missing=()
for bin in slurmctld slurmd sbatch munged mungekey; do
    command -v "$bin" >/dev/null 2>&1 || missing+=("$bin")
done
((${#missing[@]})) || exit 0

[[ $(id -u) == 0 ]] || { echo "setup-slurm: must run as root to install slurm-wlm munge" >&2; exit 1; }
echo "setup-slurm: installing slurm-wlm munge (missing: ${missing[*]})" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq || { echo "setup-slurm: apt-get update failed" >&2; exit 1; }
# policy-rc.d 101: the packages' scripts must not start the system's munge or slurm services
policy=/usr/sbin/policy-rc.d
if [[ ! -e $policy ]]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy"
    trap 'rm -f "$policy"' EXIT
fi
apt-get install -y -qq slurm-wlm munge >/dev/null ||
    { echo "setup-slurm: apt-get install slurm-wlm munge failed" >&2; exit 1; }
