"""pytest-reb env-size probe: run by the report's interpreter, mounted read-only.

Prints one line ``REB_ENV_SIZE {json}``: the interpreter's ``sys.prefix``
and the size of the tree under it, walked without following links (the
official env_size stage's walk), with each hard-linked file counted once
(the official walk counted it once per link).  Standard library only; it
must run on any Python 3 a research environment may hold.
"""

import json
import os
import site
import stat
import sys
import time


def walk(root):
    """Apparent bytes, allocated bytes, files, and what could not be read.

    Other filesystems mounted below the prefix (``/proc`` when the prefix
    is ``/``) are not entered.
    """
    seen = set()
    device = os.lstat(root).st_dev
    total = disk = files = links = unreadable = mounts = 0
    stack = [root]
    while stack:
        path = stack.pop()
        try:
            entries = list(os.scandir(path))
        except OSError:
            unreadable += 1
            continue
        for entry in entries:
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                unreadable += 1
                continue
            if stat.S_ISDIR(st.st_mode):
                if st.st_dev == device:
                    stack.append(entry.path)
                else:
                    mounts += 1
                continue
            if st.st_nlink > 1:
                key = (st.st_dev, st.st_ino)
                if key in seen:
                    links += 1
                    continue
                seen.add(key)
            files += 1
            total += st.st_size
            disk += getattr(st, "st_blocks", 0) * 512
    return {"bytes": total, "disk_bytes": disk, "files": files,
            "hardlinks_skipped": links, "unreadable": unreadable,
            "other_filesystems": mounts}


def main():
    start = time.time()
    prefix = os.path.realpath(sys.prefix)
    try:
        packages = list(site.getsitepackages())
    except AttributeError:  # some virtualenv builds lack it
        packages = []
    out = {"executable": sys.executable, "prefix": prefix, "site_packages": packages,
           "version": ".".join(str(v) for v in sys.version_info[:3])}
    if os.path.isdir(prefix):
        out.update(walk(prefix))
    else:
        out["error"] = "sys.prefix is not a directory"
    out["seconds"] = round(time.time() - start, 3)
    print("REB_ENV_SIZE " + json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
