"""C0's import checker against pyright run whole: the same diagnostics, and how much faster.

C0 runs its JSON analysis through ``pytest_reb/pyramid/probes/c0_checker.js``, pyright's CLI
with its checker visiting import statements only.  For each folder given (a checkout), this
runs pyright both ways with C0's pinned rules (``c0_pyright.PINNED_RULES``) over it,
interleaved, against an interpreter's environment (this one by default), and prints each
way's wall and CPU time, whether the two rules C0 counts (``reportMissingImports``,
``reportMissingModuleSource``) came out the same, file, line, column and message, and what
the checker said it ran (``imports``, or ``full: <why>`` where it fell back to pyright
whole); it exits 1 where they differed.

    python bench/c0_checker.py CHECKOUT [CHECKOUT ...] [--python PATH] [--repeat N]

The folders are analysed where they are (the config goes in a temporary folder beside
nothing of theirs), so a checkout inside an interpreter's ``site-packages`` should be copied
out first: pyright treats files on the search path as library code.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

from common import ROOT, machine, measure, median, table

sys.path.insert(0, str(ROOT))

from pytest_reb.pyramid.c0_imports import CHECKER, CHECKER_FILE, NODE, PYRIGHT
from pytest_reb.pyramid.c0_pyright import MISSING_RULE, PINNED_RULES, SOURCE_RULE
from pytest_reb.targets import LocalTarget

Diagnostic = tuple[str, int, int, str, str]


def counted(path: Path) -> list[Diagnostic]:
    data = json.loads(path.read_text())
    return sorted((d["file"], d["range"]["start"]["line"], d["range"]["start"]["character"],
                   d["rule"], d["message"]) for d in data["generalDiagnostics"]
                  if d.get("rule") in (MISSING_RULE, SOURCE_RULE))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkouts", nargs="+", type=Path)
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    host = LocalTarget(gpus=[])  # the host's node and pyright, which the targets mount
    node, pyright = host.tool(NODE), host.tool(PYRIGHT)
    rows, differ = [], False
    with tempfile.TemporaryDirectory(prefix="reb-c0-checker-") as tmp:
        work = Path(tmp)
        (work / CHECKER_FILE).write_text(CHECKER)
        for checkout in args.checkouts:
            config = {**PINNED_RULES, "include": [os.path.relpath(checkout.resolve(), work)]}
            (work / "c.json").write_text(json.dumps(config))
            common = [pyright, "-p", "c.json", "--outputjson", "--level", "error",
                      "--pythonpath", args.python]
            ways = {"whole": [node, *common], "imports": [node, CHECKER_FILE, *common]}
            times: dict[str, list[tuple[float, float]]] = {w: [] for w in ways}
            found: dict[str, list[Diagnostic]] = {}
            for _ in range(args.repeat):
                for way, argv in ways.items():
                    out = work / f"{way}.json"
                    shell = ["sh", "-c", 'exec "$@" > "$0" 2> "$0.err"', str(out), *argv]
                    times[way].append(measure(shell, cwd=work, ok=(0, 1)))
                    found[way] = counted(out)
            said = (work / "imports.json.err").read_text().strip().splitlines()[-1:]
            checker = said[0].removeprefix("REB_C0_CHECKER ") if said else "nothing said"
            same = found["whole"] == found["imports"]
            differ |= not same
            files = json.loads((work / "whole.json").read_text())["summary"]["filesAnalyzed"]
            whole = [median([t[i] for t in times["whole"]]) for i in (0, 1)]
            lean = [median([t[i] for t in times["imports"]]) for i in (0, 1)]
            rows.append((checkout.name, files, len(found["whole"]), "same" if same else "DIFFER",
                         checker, whole[0], lean[0], whole[0] / lean[0], whole[1] / lean[1]))
            for d in sorted(set(found["whole"]) ^ set(found["imports"]))[:20]:
                print(("whole only: " if d in found["whole"] else "imports only: ") + str(d))
    print(f"C0's import checker against pyright whole, {args.repeat} interleaved run(s) each, "
          f"interpreter {args.python}; {machine()}")
    print(table(["checkout", "files", "diagnostics", "counted rules", "checker", "whole s",
                 "imports s", "wall x", "CPU x"], rows))
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
