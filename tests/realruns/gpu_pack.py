"""The pinned trees of the real repositories, carried to the GPU machine as git packs.

    python tests/realruns/gpu_pack.py pack DEST OWNER/NAME ... [--max-blob BYTES] [--keep PATH]
                                                                (here: from the fetch mirror)
    python tests/realruns/gpu_pack.py pack-at DEST OWNER/NAME COMMIT  (a stand-in's sources)
    python tests/realruns/gpu_pack.py unpack PACK DEST          (there: a checkout at the pin)

A pack holds the pinned commit and every tree and blob of it, not its history,
so the checkout made from it is at the exact pinned commit (the integrity
verdict reads ``git rev-parse HEAD`` and ``git status``).  A blob the mirror does
not hold (the fetch tool leaves out the largest files) is listed in
``<slug>.missing``; the checkout then leaves those paths out with git's
sparse checkout, so the tree stays clean at the pinned commit.  So is a blob over
``max_blob`` bytes (default 512 KiB) that is not code or configuration, to keep
each call's carried files small.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

MIRROR = Path("/work/.mirror")
#: The largest blob of any kind that travels (512 KiB); code and kept paths travel whatever
#: their size.
MAX_BLOB = 1 << 19
#: Files that always travel, whatever their size: what a stage runs.
CODE = (".py", ".so", ".pth", ".sh", ".json", ".yaml", ".yml", ".toml", ".txt", ".cfg")


def git(*args: str, cwd: Path | None = None, data: bytes | None = None) -> bytes:
    return subprocess.run(["git", *args], cwd=cwd, input=data, check=True,
                          capture_output=True).stdout


def pack(dest: Path, repo: str, commit: str, keep: tuple[str, ...] = (),
         max_blob: int = MAX_BLOB) -> Path:
    """``DEST/<owner>+<name>.pack`` (and ``.commit``, ``.missing``) from the mirror; blobs
    under a path of ``keep`` (the module's repository assets) travel whatever their size."""
    mirror = MIRROR / repo.replace("/", "+") / "repo"
    slug = repo.replace("/", "+")
    listing = subprocess.run(["git", "-C", str(mirror), "rev-list", "--objects", "--no-walk",
                              "--missing=print", commit], capture_output=True, text=True,
                             check=True).stdout.splitlines()
    absent = {line[1:] for line in listing if line.startswith("?")}
    left_out, dropped = [], set()
    for line in git("-C", str(mirror), "ls-tree", "-r", "-l", commit).decode().splitlines():
        meta, path = line.split("\t", 1)
        _mode, kind, sha, size = meta.split()
        big = (kind == "blob" and size.isdigit() and int(size) > max_blob
               and not path.endswith(CODE))
        if sha in absent or not (size.isdigit() or kind != "blob") or (
                big and not path.startswith(keep)):
            left_out.append(path)
            dropped.add(sha)
    present = [line.split()[0] for line in listing
               if not line.startswith("?") and line.split()[0] not in dropped]
    dest.mkdir(parents=True, exist_ok=True)
    data = git("-C", str(mirror), "pack-objects", "--stdout", "-q",
               data="\n".join(present).encode() + b"\n")
    (dest / f"{slug}.pack").write_bytes(data)
    (dest / f"{slug}.commit").write_text(commit + "\n")
    (dest / f"{slug}.missing").write_text("".join(f"{p}\n" for p in left_out))
    return dest / f"{slug}.pack"


def option(args: list[str], name: str, default: str | None) -> str | None:
    """``--name VALUE`` taken out of ``args`` (``default`` where it is not there)."""
    if name not in args:
        return default
    at = args.index(name)
    value = args[at + 1]
    del args[at:at + 2]
    return value


def unpack(pack_file: Path, dest: Path) -> Path:
    """A checkout at the pack's commit in ``dest``, leaving out the paths it lacks."""
    commit = pack_file.with_suffix(".commit").read_text().strip()
    missing = pack_file.with_suffix(".missing").read_text().split("\n")
    missing = [p for p in missing if p]
    dest.mkdir(parents=True, exist_ok=True)
    git("init", "-q", cwd=dest)
    git("index-pack", "--stdin", "--fix-thin", cwd=dest, data=pack_file.read_bytes())
    git("update-ref", "--no-deref", "HEAD", commit, cwd=dest)
    if missing:
        git("config", "core.sparseCheckout", "true", cwd=dest)
        rules = "/*\n" + "".join(f"!/{p}\n" for p in missing)
        (dest / ".git" / "info" / "sparse-checkout").write_text(rules)
    git("read-tree", "-mu", "HEAD", cwd=dest)
    return dest


if __name__ == "__main__":
    what, *rest = sys.argv[1:]
    if what == "pack":
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from standin import ROOT, load_repo

        # --max-blob and --keep: a folder of many big blobs of which the stage reads one
        # (Kokoro-FastAPI's voices: --max-blob 131072 --keep api/src/voices/v1_0/af_heart.pt)
        limit = int(option(rest, "--max-blob", None) or MAX_BLOB)
        extra = []
        while (path := option(rest, "--keep", None)) is not None:
            extra.append(path)
        for repo in rest[1:]:
            mod = next(ROOT.glob(f"repos/test_{repo.replace('/', '__').replace('-', '_')}.py"))
            spec = load_repo(mod)
            keep = tuple(a.path for a in spec.assets or () if a.source == "repo" and a.path)
            print(pack(Path(rest[0]), repo, spec.commit, (*keep, *extra), limit))
    elif what == "pack-at":
        print(pack(Path(rest[0]), rest[1], rest[2]))
    elif what == "unpack":
        print(unpack(Path(rest[0]), Path(rest[1])))
    else:
        raise SystemExit(__doc__)
