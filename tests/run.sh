#!/usr/bin/env bash
# Set up and run pytest-reb's test suite on a fresh Debian machine (as root):
# Docker Engine and debootstrap, Slurm and munge (installed only: the Slurm tests
# start a cluster of their own), the package with its test extras, then the
# tests in parallel. Fails when no test ran (pytest exit 5) and when no
# container test ran: a green run that skipped the real engine is not green.
#
#   bash tests/run.sh           the full suite (what CI runs)
#   bash tests/run.sh --quick   every test that starts no container (a few minutes): the
#                               container tests are left to the full run, and said so
set -uo pipefail
cd "$(dirname "$0")/.."
quick=0
if [ "${1:-}" = "--quick" ]; then quick=1; shift; fi

bash .ci/setup-docker.sh || exit 1
bash .ci/setup-slurm.sh || exit 1
python3 -m pip install -q -e '.[test]' 2>&1 | grep -v -e '^WARNING: Running pip as' -e 'is ignored: it is neither' >&2
# The browser test (tests/test_report_browser.py) opens the HTML pages in headless Chromium.
command -v chromium >/dev/null 2>&1 || { echo "tests/run.sh: installing chromium" >&2
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } ||
        { echo "tests/run.sh: apt-get install chromium failed" >&2; exit 1; }; }
count_file=$(mktemp)
export REB_CONTAINER_COUNT_FILE=$count_file
# Also for the pytest runs the tests start themselves (pytester): no benchmark plugin noise.
export PYTEST_ADDOPTS="-p no:benchmark ${PYTEST_ADDOPTS:-}"

# --dist worksteal: a worker that runs out of tests takes half of another's queue. The
# container tests are collected first (tests/conftest.py): on a fresh machine the worker
# that holds them builds the images while the others run the short tests, which, last in
# the queues, fill the end of the run. xdist's default gives each worker hundreds of tests
# in file order, and both started by waiting for the same base image.
#
# One worker more than the cores: the suite is bound by CPU, but a worker waiting on a
# scheduler, a timeout or a signal leaves its core idle (12 % of a 2-core run with -n 2;
# 3 % with -n 3, and 13 min 50 s instead of 15 min 41 s: docs/performance.md).
workers=$(( $(nproc) + 1 ))
if [ "$quick" -eq 1 ]; then
    python3 -m pytest tests -n "$workers" --dist worksteal -m "not container" "$@"
    rc=$?
    rm -f "$count_file"
    echo "tests/run.sh --quick: container tests not run (bash tests/run.sh runs them)"
    [ "$rc" -eq 5 ] && { echo "tests/run.sh: pytest collected no tests (exit 5): failing" >&2; exit 1; }
    exit "$rc"
fi
python3 -m pytest tests -n "$workers" --dist worksteal "$@"
rc=$?

read -r ran passed <"$count_file" 2>/dev/null || { ran=0; passed=0; }
rm -f "$count_file"
echo "container tests ran: $ran (passed: $passed)"
if [ "$rc" -eq 5 ]; then
    echo "tests/run.sh: pytest collected no tests (exit 5): failing" >&2
    exit 1
fi
if [ "$rc" -eq 0 ] && [ "${ran:-0}" -eq 0 ]; then
    echo "tests/run.sh: no container test ran: failing" >&2
    exit 1
fi
exit "$rc"
