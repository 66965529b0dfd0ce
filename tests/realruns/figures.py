"""The real runs in figures: how many of the 44 have a recorded environment, C0 against the
official count, and C1 run on the repository's own code.

    python tests/realruns/figures.py

Read from the records in ``tests/data/realruns/`` (what ``build.py`` kept); C1 "ran" means
the stage ran the repository's code (it passed, or failed for a reason other than a missing
asset or a tier that does not apply).  The README's two lines quote this.
"""

from __future__ import annotations

import json
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "data" / "realruns"
NOT_RUN = {"data", "model", "not_applicable", "missing_report", None}


def main() -> None:
    records = [json.loads(p.read_text()) for p in sorted(DATA.glob("*.json"))]
    c0_official = c1_ran = c1_pass = 0
    for r in records:
        stage = (r.get("official") or {}).get("stages", {}).get("pyright", {})
        if "missing_packages_count" in stage:
            c0_official += 1
        c1 = next((o for o in r["strict"] if o["tier"] == "c1"), None)
        if c1 and (c1["status"] == "passed" or c1["category"] not in NOT_RUN):
            c1_ran += 1
            c1_pass += c1["status"] == "passed"
    print(f"environments recorded: {len(records)} of 44")
    print(f"C0 against the official pyright count: {c0_official}")
    print(f"C1 run on the repository's own code: {c1_ran} (strict pass {c1_pass})")


if __name__ == "__main__":
    main()
