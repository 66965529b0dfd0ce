"""Lay out the two tiny paired datasets the official deep-tempest prepare step built.

The official prepare took two pairs of the repository's ``examples/`` screenshots, each a clean
screenshot (KAIR's ``H`` side) and its gr-tempest capture (the ``L`` side), and copied them as
``sample<i>.png`` into ``mini_1/{H,L}`` (the first pair: CPU and single-GPU stages) and
``mini_2/{H,L}`` (both pairs: the multi-GPU stage, one sample per GPU). This script does the
same from the prepared copy of ``examples/`` (read-only) into an output folder. A missing file
exits 1, failing the stage as the prepare step did (category ``data``).

Usage: make_pairs.py EXAMPLES_DIR OUT_DIR     (stdlib only)
"""

import shutil
import sys
from pathlib import Path

#: (H, L) file names of the pairs the prepare step picked, in order.
PAIRS = [
    ("Screenshot from 2023-08-29 18-08-19.png",
     "Screenshot from 2023-08-29 18-08-19-gr-tempest_screenshot_05-09-2023_21_07_37.png"),
    ("Screenshot from 2023-08-29 18-08-27.png",
     "Screenshot from 2023-08-29 18-08-27-gr-tempest_screenshot_05-09-2023_21_10_14.png"),
]


def main(argv):
    if len(argv) != 2:
        sys.exit(__doc__)
    examples, out = Path(argv[0]), Path(argv[1])
    missing = [str(examples / name) for pair in PAIRS for name in pair
               if not (examples / name).is_file()]
    if missing:
        sys.exit("[make_pairs] expected example files not found: " + ", ".join(missing))
    for mini, count in (("mini_1", 1), ("mini_2", 2)):
        for i, pair in enumerate(PAIRS[:count]):
            for side, name in zip(("H", "L"), pair, strict=True):
                dest = out / mini / side / f"sample{i}.png"
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(examples / name, dest)
    print(f"[make_pairs] wrote {out}/mini_1 (1 pair) and {out}/mini_2 (2 pairs)")


if __name__ == "__main__":
    main(sys.argv[1:])
