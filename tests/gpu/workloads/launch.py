"""A launcher that runs the training script in a child interpreter (subprocess.run or os.system)."""

import argparse
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
p = argparse.ArgumentParser()
p.add_argument("--via", choices=["subprocess", "os.system"], default="subprocess")
a = p.parse_args()
argv = [sys.executable, str(HERE / "train.py"), "--steps", "2"]
if a.via == "subprocess":
    code = subprocess.run(argv, check=False).returncode
else:
    code = os.waitstatus_to_exitcode(os.system(" ".join(argv)))
sys.exit(code)
