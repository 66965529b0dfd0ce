"""GPU launch attribution on a real GPU: honest work is the entrypoint's, injected work is not.

    python tests/gpu/attribution.py OUT.json [--repeat N]

Runs, each as its own process under the witness (``pytest_reb.witness``, the
library of ``REB_WITNESS_LIB`` or built here), with the witness's checkout root
set to a scratch checkout holding the entrypoint:

* the honest micro-workloads of ``micro_workloads.py`` (the compute floor's
  family), and a research-style ``train.py`` that picks ``cuda`` when torch says it
  is there: each must launch from the entrypoint's code path;
* the same ``train.py`` under hostile startup code that does GPU work the
  entrypoint does not: a meta-path finder that bursts matmuls at the entrypoint's
  first import and then makes ``torch.cuda.is_available()`` false (issue 26's false
  pass), the same finder as an exec'd base64 string, a thread a ``sitecustomize``
  starts, and a ``sitecustomize`` that wraps ``ArgumentParser.parse_args`` (which the
  entrypoint calls) with a burst: each must be attributed elsewhere;
* the cost: ``train.py --device cuda --steps 50`` alternately under ``--baseline`` (a
  witness library built before attribution) and the current one.

Prints one line per run and writes the figures to OUT.json (docs/gpu.md).
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from pytest_reb import witness  # noqa: E402
from pytest_reb.witness import observe  # noqa: E402

TRAIN = """\
import argparse, torch
from torch import nn
p = argparse.ArgumentParser()
p.add_argument("--device", default="auto")
p.add_argument("--steps", type=int, default=2)
a = p.parse_args()
device = a.device if a.device != "auto" else ("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)
net = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1)).to(device)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
x, y = torch.randn(64, 16, device=device), torch.randn(64, 1, device=device)
for _ in range(a.steps):
    opt.zero_grad()
    loss = nn.functional.mse_loss(net(x), y)
    loss.backward()
    opt.step()
print("device", device, "loss", round(loss.item(), 4))
"""
#: The same training compiled (torch.compile): Triton's kernels, whose launcher finds the
#: driver's entry point with dlsym, and cuBLAS's, found through cuGetProcAddress.
COMPILED = TRAIN.replace("opt = torch.optim", "net = torch.compile(net)\nopt = torch.optim")
BURST = ("import torch\n"
         "m = torch.randn(4096, 4096, device='cuda')\n"
         "for _ in range(20): m = m @ m; m = m / m.norm()\n"
         "torch.cuda.synchronize()\n")
#: At the entrypoint's first import (argparse, before its ``import torch``) the finder
#: imports torch itself, bursts, and hides the GPU: the entrypoint then trains on the CPU.
FINDER = ("import sys\n"
          "class Burst:\n"
          "    def find_spec(self, name, path=None, target=None):\n"
          "        if name == 'argparse':\n"
          "            sys.meta_path.remove(self)\n"
          "            import torch\n"
          + "".join(f"            {line}\n" for line in BURST.splitlines()[1:])
          + "            torch.cuda.is_available = lambda: False\n"
          "sys.meta_path.insert(0, Burst())\n")
HOOKS = {
    "finder_at_import_torch": FINDER,
    "finder_as_exec_string": ("import base64\nexec(base64.b64decode("
                              f"{base64.b64encode(FINDER.encode())!r}))\n"),
    "thread_from_startup": ("import threading\n"
                            "def burst():\n"
                            + "".join(f"    {line}\n" for line in BURST.splitlines())
                            + "threading.Thread(target=burst).start()\n"
                            "import torch\ntorch.cuda.is_available = lambda: False\n"),
    # a library call the entrypoint makes (before it picks its device) does the hook's work
    "wrapped_library_call": ("import argparse\n"
                             "_parse = argparse.ArgumentParser.parse_args\n"
                             "def parse_args(self, *a, **k):\n"
                             + "".join(f"    {line}\n" for line in BURST.splitlines())
                             + "    torch.cuda.is_available = lambda: False\n"
                             "    return _parse(self, *a, **k)\n"
                             "argparse.ArgumentParser.parse_args = parse_args\n"),
}


def run(library: str, checkout: Path, argv: list[str], hooks: Path | None = None) -> dict:
    """One process under the witness: wall time, exit, the attribution verdict and counts."""
    record = checkout.parent / f"witness-{time.monotonic_ns()}.log"
    entry = str(checkout / argv[0])
    exp = witness.expect([sys.executable, *argv], python=sys.executable, entrypoint=None,
                         checkout=str(checkout), cwd=str(checkout), nproc=1, ranks=False,
                         server=False, stopped=False)
    env = {k: v for k, v in os.environ.items() if not k.startswith("REB_")}
    if hooks is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(hooks), env.get("PYTHONPATH")]))
    env.update(witness.env_vars(library, str(record), exp.entries, None, str(checkout),
                                witness.stops_for(exp)))
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, entry, *argv[1:]], cwd=checkout, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    with observe.Observer(observe.Library(library, library),
                          lambda: observe.tree(proc.pid)) as obs:
        try:
            out, err = proc.communicate(timeout=300)
        finally:
            proc.kill()
    wall = time.perf_counter() - start
    res = subprocess.CompletedProcess(argv, proc.returncode, out, err)
    procs = witness.merge([record.read_text() if record.exists() else ""], [obs.seen])
    record.unlink(missing_ok=True)
    main = next((p for p in procs.values() if p.state is not None), None)
    return {"exit": res.returncode, "wall_s": round(wall, 3),
            "out": (res.stdout.strip().splitlines() or [""])[-1][:120],
            "err": res.stderr.strip()[-300:] if res.returncode else "",
            "witnessed": witness.judge(exp, procs), "attribution": witness.attribution(exp, procs),
            "launches": (main.state.launches_own, main.state.launches_other) if main else None,
            "first_other": main.state.launch_other if main else None}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--repeat", type=int, default=5, help="cost runs per library")
    parser.add_argument("--baseline", help="a witness library built before attribution")
    parser.add_argument("--quick", action="store_true",
                        help="two honest workloads, the research-style train.py, the hostile ones")
    args = parser.parse_args()
    library = witness.library_path()
    if library is None:
        raise SystemExit("no witness library: set REB_WITNESS_LIB or install a C compiler")
    results: dict[str, object] = {"python": sys.version.split()[0]}
    with tempfile.TemporaryDirectory() as scratch:
        checkout = Path(scratch) / "checkout"
        checkout.mkdir()
        (checkout / "train.py").write_text(TRAIN)
        (checkout / "train_compiled.py").write_text(COMPILED)
        shutil.copy(Path(__file__).with_name("micro_workloads.py"), checkout)
        honest: dict[str, dict] = {}
        kinds = ("mlp_1step", "transformer_infer_b1") if args.quick else (
            "mlp_1step", "mlp_2steps", "mlp_infer_b1", "conv_1step", "transformer_1step",
            "transformer_infer_b1")
        for kind in kinds:
            for dtype in ("fp32",) if args.quick else ("fp32", "bf16"):
                honest[f"{kind}_{dtype}"] = run(library, checkout,
                                                ["micro_workloads.py", kind, dtype])
        honest["train_auto"] = run(library, checkout, ["train.py"])
        if not args.quick:
            honest["train_compiled"] = run(library, checkout, ["train_compiled.py", "--device",
                                                               "cuda"])
        hostile: dict[str, dict] = {}
        for name, code in HOOKS.items():
            hooks = Path(scratch) / f"hooks-{name}"
            hooks.mkdir()
            (hooks / "sitecustomize.py").write_text(code)
            hostile[name] = run(library, checkout, ["train.py"], hooks)
        for group, found in (("honest", honest), ("hostile", hostile)):
            for name, r in found.items():
                print(f"{group:8s} {name:28s} exit {r['exit']} launches {r['launches']} "
                      f"{'ATTRIBUTED' if r['attribution'] is None else 'not attributed'}"
                      f" | {r['out']} | {r['first_other'] or ''} {r['err']}", flush=True)
        results.update(honest=honest, hostile=hostile)
        if args.baseline:
            cost: dict[str, list[float]] = {"baseline": [], "attribution": []}
            for _ in range(args.repeat):
                for which, lib in (("baseline", args.baseline), ("attribution", library)):
                    cost[which].append(run(lib, checkout, ["train.py", "--device", "cuda",
                                                           "--steps", "50"])["wall_s"])
            med = {k: statistics.median(v) for k, v in cost.items()}
            results["cost"] = {"walls_s": cost, "median_s": med,
                               "ratio": round(med["attribution"] / med["baseline"], 4)}
            print("cost", json.dumps(results["cost"]), flush=True)
    args.out.write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
