"""Copy a Sana training YAML, turning an empty ``resume_from`` value into ``latest``.

Reproduces the official harness helper that ran before Sana's C3/C4 training step:
``configs/sana_config/1024ms/Sana_600M_img1024.yaml`` is copied to ``{out}/config_patched.yaml``
and the key ``resume_from`` whose value is empty (or ``null``/``~``/``none``) becomes
``resume_from: latest``; a ``resume_from`` that holds a nested mapping, or a real value, is left
alone. Text editing, not a YAML round trip, so every other byte of the config stays as it was.

Usage: patch_train_config.py SOURCE.yaml DEST.yaml     (stdlib only)
"""

import re
import sys
from pathlib import Path

_KEY = re.compile(r"^(?P<indent>[ \t]*)resume_from:(?P<value>[^#\r\n]*)(?P<comment>#[^\r\n]*)?"
                  r"(?P<eol>\r?\n?)$")
_EMPTY = ("", "null", "~", "none")


def _indent(line):
    return len(line) - len(line.lstrip(" \t"))


def patch(text):
    """``text`` with each empty, non-nested ``resume_from:`` value set to ``latest``."""
    lines = text.splitlines(keepends=True)
    for i, line in enumerate(lines):
        match = _KEY.match(line)
        if not match or match.group("value").strip().lower() not in _EMPTY:
            continue
        following = [x for x in lines[i + 1:] if x.strip() and not x.lstrip().startswith("#")]
        if following and _indent(following[0]) > len(match.group("indent")):
            continue  # resume_from holds a nested mapping: keep it
        comment = match.group("comment")
        lines[i] = (match.group("indent") + "resume_from: latest"
                    + (" " + comment.strip() if comment else "") + match.group("eol"))
    return "".join(lines)


def main(argv):
    if len(argv) != 2:
        sys.exit(__doc__)
    source, dest = Path(argv[0]), Path(argv[1])
    with open(source, encoding="utf-8", newline="") as fh:  # line ends kept as they are
        text = fh.read()
    dest.parent.mkdir(parents=True, exist_ok=True)
    with open(dest, "w", encoding="utf-8", newline="") as fh:
        fh.write(patch(text))
    print(f"[patch_train_config] {source} -> {dest}")


if __name__ == "__main__":
    main(sys.argv[1:])
