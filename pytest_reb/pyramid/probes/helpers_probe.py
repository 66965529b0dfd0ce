"""Runner for stages with ``helpers``: start them, wait for their values, run, clean up.

Runs inside the target with the standard library only, under the report's
interpreter, as one command, so the host's timeout, GPU evidence and
leftover-process sweep cover the helpers and the commands alike.  Argument:
one JSON object with ``helpers`` (``argv``, ``export``, ``ready``,
``ready_within``) and ``runs`` (``argv``, ``env``, ``cwd``; started together
once every helper is ready).  Exit status: the first failing run's, 0 when
all succeed, 97 when a helper never became ready (it says why on stderr).
Helper output is copied to stderr with a ``[helper N]`` prefix so a failed
stage shows it.
"""

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time

NOT_READY = 97


def _watch(index, proc, pattern, found):
    """Copy the helper's lines to stderr; the first match of ``pattern`` is its value."""
    for raw in proc.stdout:
        line = raw.decode(errors="replace").rstrip("\n")
        sys.stderr.write(f"[helper {index}] {line}\n")
        sys.stderr.flush()
        if index not in found:
            match = re.search(pattern, line)
            if match:
                found[index] = match.group(1) if match.groups() else match.group(0)


def _stop(proc):
    """The helper and everything it started, TERM then KILL."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, sig)
        try:
            proc.wait(timeout=5)
            return
        except subprocess.TimeoutExpired:
            continue


def main():
    spec = json.loads(sys.argv[1])
    # A TERM (the in-target timeout) unwinds through ``finally``, so helpers never outlive us.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    helpers, runs, found, exports = [], [], {}, {}
    try:
        for i, helper in enumerate(spec["helpers"]):
            proc = subprocess.Popen(helper["argv"], stdout=subprocess.PIPE,
                                    stderr=subprocess.STDOUT, start_new_session=True)
            helpers.append(proc)
            threading.Thread(target=_watch, args=(i, proc, helper["ready"], found),
                             daemon=True).start()
            deadline = time.monotonic() + float(helper["ready_within"])
            while i not in found and proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.1)
            if i not in found:
                why = (f"exited with {proc.returncode}" if proc.poll() is not None else
                       f"printed no line matching {helper['ready']!r} within "
                       f"{helper['ready_within']}s")
                sys.stderr.write(f"reb: helper {helper['argv'][:3]} {why}\n")
                return NOT_READY
            exports[helper["export"]] = found[i]
        for run in spec["runs"]:
            env = {**os.environ, **run["env"], **exports}
            try:
                runs.append(subprocess.Popen(run["argv"], env=env, cwd=run["cwd"] or None,
                                             start_new_session=True))
            except OSError as exc:  # the words the host's categories know
                sys.stderr.write(f"reb: cannot start {run['argv'][0]}: {exc} "
                                 "(executable file not found)\n")
                return 127
        codes = [proc.wait() for proc in runs]
        return next((code for code in codes if code != 0), 0)
    finally:
        for proc in [*runs, *helpers]:  # their process groups too, even once they exited
            _stop(proc)


if __name__ == "__main__":
    sys.exit(main())
