#!/usr/bin/env bash
# Make this Debian machine able to build and run pytest-reb's local images:
# Debian's docker.io (no registry is reachable, so images are made locally),
# debootstrap (to make the base image), a static busybox (the tools pytest-reb runs
# inside a container instead of the image's own), and a dockerd that answers.
# Idempotent and silent when everything is already in place. Run as root.
set -euo pipefail

log=/tmp/dockerd.log
export PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"

die() {
    echo "setup-docker: $*" >&2
    exit 1
}

missing=()
command -v docker >/dev/null 2>&1 || missing+=(docker.io)
command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
# Debian's plain busybox is dynamic (it would load the image's libc): the static one.
dpkg-query -W -f='${Status}' busybox-static 2>/dev/null | grep -q 'ok installed' ||
    missing+=(busybox-static)

if ((${#missing[@]})); then
    # docker.io may be listed twice.
    mapfile -t packages < <(printf '%s\n' "${missing[@]}" | sort -u)
    [[ $(id -u) == 0 ]] || die "must run as root to install ${packages[*]}"
    echo "setup-docker: installing ${packages[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq || die "apt-get update failed"
    apt-get install -y -qq "${packages[@]}" >/dev/null || die "apt-get install ${packages[*]} failed"
fi

docker info >/dev/null 2>&1 && exit 0

# A dockerd that is still starting gets the same 60 s; only start one if none runs.
# (/proc rather than pgrep: procps is not on a minimal Debian.)
started=""
if ! grep -qsx dockerd /proc/[0-9]*/comm; then
    [[ $(id -u) == 0 ]] || die "must run as root to start dockerd"
    echo "setup-docker: starting dockerd (log: $log)" >&2
    nohup dockerd >>"$log" 2>&1 &
    started=$!
fi

for _ in $(seq 60); do
    docker info >/dev/null 2>&1 && exit 0
    if [[ -n $started ]] && ! kill -0 "$started" 2>/dev/null; then
        die "dockerd exited at start: $(tail -n 1 "$log")"
    fi
    sleep 1
done
die "dockerd did not answer 'docker info' within 60 s; see $log"
