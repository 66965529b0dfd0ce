"""What the GPU machine's drivers wrote, trimmed into the suite's test data.

    python tests/gpu/keep_records.py family FAMILY.jsonl DEVICE OUT.json
    python tests/gpu/keep_records.py repos REPOS.jsonl DEVICE OUT.json

``run_family.py`` and ``tests/realruns/gpu_repos.py`` append one line per
outcome as it comes; this keeps of each outcome the verdict and the evidence
the GPU rules read (holders, counters, the witness's summary, the C2 probe's
observation), no output and no logs, and adds to each the device it ran on.
A later outcome of the same workload replaces an earlier one, which is kept
under ``earlier`` (a verdict that changed between runs stays on record); a
repository's later parts replace its earlier ones.  Records of several calls
merge into one file.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

#: Outcome fields kept; the message is cut, the command kept (it names what ran).
FIELDS = ("repo", "tier", "status", "category", "strict", "compat", "exit_code", "timed_out",
          "duration", "command", "message", "workload", "pytest_exit", "skipped", "device")
#: Evidence the GPU rules and the replay read.
EVIDENCE = ("gpu_holders", "gpu_compute", "gpu_memory", "witness", "observed", "assets",
            "gpus_leased", "gpu_evidence_channel")


def trim(o: dict[str, Any]) -> dict[str, Any]:
    kept = {k: o[k] for k in FIELDS if k in o}
    if isinstance(kept.get("message"), str):
        kept["message"] = kept["message"][:600]
    ev = o.get("evidence") or {}
    kept["evidence"] = {k: ev[k] for k in EVIDENCE if k in ev}
    return kept


def family(lines: list[dict[str, Any]], earlier: list[dict[str, Any]]) -> dict[str, Any]:
    """The latest outcome of each workload; the ones it replaced kept under ``earlier``."""
    by_name: dict[str, dict[str, Any]] = {}
    earlier = list(earlier)
    for o in lines:
        if "skipped" in o:  # the call ran out of time before it: no outcome
            continue
        if o["workload"] in by_name:
            earlier.append(by_name[o["workload"]])
        by_name[o["workload"]] = trim(o)
    return {"outcomes": sorted(by_name.values(), key=lambda o: o["workload"]),
            "earlier": sorted(earlier, key=lambda o: o["workload"])}


def repos(lines: list[dict[str, Any]]) -> dict[str, Any]:
    rows: dict[str, dict[str, Any]] = {}
    for line in lines:
        row = rows.setdefault(line["repo"], {"repo": line["repo"], "device": line["device"]})
        part = line.get("part")
        if part in ("strict", "compat"):
            row[part] = [trim({**o, "device": line["device"]}) for o in line[part]]
            for key in ("standin", "environment"):  # what the stand-ins and the venv said
                if key in line:
                    row[key] = line[key]
        elif part == "official":
            row["official"] = {s: v for s, v in line["official"].items()}
        elif "skipped" in line and "strict" not in row:
            row["skipped"] = line["skipped"]
    return {"rows": sorted(rows.values(), key=lambda r: r["repo"].lower())}


def main() -> None:
    what, src, device, dest = sys.argv[1:5]
    lines = [{**json.loads(x), "device": device}
             for x in Path(src).read_text().splitlines() if x.strip()]
    path = Path(dest)
    old = json.loads(path.read_text()) if path.exists() else {}
    if what == "family":
        data = family([*old.get("outcomes", []), *lines], old.get("earlier", []))
    else:
        data = repos(lines)
        kept = {r["repo"]: r for r in old.get("rows", [])}
        # a row a later call ran again is that call's alone: a part it did not reach (the
        # compat run, the official stages) is not an earlier environment's
        kept.update({r["repo"]: r if "strict" in r else {**kept.get(r["repo"], {}), **r}
                     for r in data["rows"]})
        for row in kept.values():
            if "strict" in row:  # it ran in a later call
                row.pop("skipped", None)
        data = {"rows": sorted(kept.values(), key=lambda r: r["repo"].lower())}
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    print(path, len(data.get("outcomes", data.get("rows", []))))


if __name__ == "__main__":
    main()
