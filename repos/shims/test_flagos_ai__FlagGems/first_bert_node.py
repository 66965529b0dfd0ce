"""Find the first collected test_accuracy_bert node of FlagGems and write its id to a file.

Reproduces the collection half of the official generated driver (``_single_gpu_impl.py``):
``<this python> -m pytest --collect-only -q examples/model_bert_test.py -k test_accuracy_bert``
in the current folder (the checkout), then the first output line containing
``::test_accuracy_bert`` is the node id (for example
``examples/model_bert_test.py::test_accuracy_bert[How are you today?-torch.float16]``). The stage
then runs ``{python} -m pytest -q {file:OUT}``: only that node, the driver's second half.

A failed collection, or no matching node, exits 16 as the driver did, which fails the stage
before its run. Run it with the report's interpreter (pytest comes from the environment under
test; the official pip-install pre-flight is not reproduced).

Usage: first_bert_node.py OUT_FILE     (stdlib only)
"""

import subprocess
import sys
from pathlib import Path

COLLECT = ["--collect-only", "-q", "examples/model_bert_test.py", "-k", "test_accuracy_bert"]
NO_NODE = 16


def first_node(output):
    """The first node id in pytest's ``--collect-only -q`` output, or None."""
    for line in output.splitlines():
        if "::test_accuracy_bert" in line.strip():
            return line.strip()
    return None


def main(argv):
    if len(argv) != 1:
        sys.exit(__doc__)
    command = [sys.executable, "-m", "pytest", *COLLECT]
    print("[first_bert_node] " + " ".join(command), flush=True)
    proc = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True)
    print(proc.stdout, end="", flush=True)
    node = first_node(proc.stdout) if proc.returncode == 0 else None
    if node is None:
        print(f"[first_bert_node] no test_accuracy_bert node (pytest exit {proc.returncode})")
        return NO_NODE
    out = Path(argv[0])
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(node + "\n", encoding="utf-8")
    print(f"[first_bert_node] {node}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
