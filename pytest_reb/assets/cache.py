"""The content-addressed asset cache on this host: objects, per-repository views, manifests.

See the package docstring for the layout.  Preparing an asset fetches it into
a staging folder (``fetchers``), stores each file once by digest and links it
into the repository's view at the asset's declared ``dest``; the manifest
records what is ready, what failed and why.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import tempfile
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from pytest_reb.assets.fetchers import CHUNK, AssetError, CheckoutCopy, fetch
from pytest_reb.spec import Asset, Repo

#: The manifest copy inside each view.
VIEW_MANIFEST = ".reb-manifest.json"


def default_cache() -> Path:
    """``$REB_ASSETS``, else ``$XDG_CACHE_HOME/pytest-reb/assets`` (``~/.cache`` by default)."""
    if os.environ.get("REB_ASSETS"):
        return Path(os.environ["REB_ASSETS"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "pytest-reb" / "assets"


def slug(repo: Repo | str) -> str:
    """``owner/name`` -> ``owner__name``: the name of a repository's view and manifest."""
    name = repo.name if isinstance(repo, Repo) else repo
    return re.sub(r"[^0-9A-Za-z_.-]", "_", name.replace("/", "__"))


@dataclass
class Prepared:
    """What happened to one asset in a preparation: ``ready``, ``failed`` or ``kept``."""

    asset: Asset
    status: str
    detail: str = ""

    def line(self) -> str:
        return f"{self.status:6} {self.asset.kind:9} {self.asset.name}: {self.detail}".rstrip(": ")


def _files(root: Path) -> Iterator[Path]:
    """Every file under ``root`` (symlinks followed: a hub cache links snapshots to blobs)."""
    for dirpath, _, names in os.walk(root, followlinks=True):
        for name in sorted(names):
            path = Path(dirpath) / name
            if path.is_file():
                yield path


class AssetCache:
    """A content-addressed asset cache on this host (see the module docstring)."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root).resolve()

    # -- paths

    def view(self, repo: Repo) -> Path:
        return self.root / "views" / slug(repo)

    def manifest_path(self, repo: Repo) -> Path:
        return self.root / "manifests" / f"{slug(repo)}.json"

    def object_path(self, digest: str) -> Path:
        return self.root / "objects" / digest

    @contextlib.contextmanager
    def lock(self, repo: Repo) -> Iterator[None]:
        """One preparer per repository at a time (xdist workers, parallel runs)."""
        from filelock import FileLock

        path = self.root / "locks" / f"{slug(repo)}.lock"
        path.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(str(path)):
            yield

    # -- the manifest

    def manifest(self, repo: Repo) -> dict[str, Any]:
        try:
            data = json.loads(self.manifest_path(repo).read_text())
        except (OSError, ValueError):
            return {"repo": repo.name, "commit": repo.commit, "assets": {}}
        return data if isinstance(data, dict) and isinstance(data.get("assets"), dict) else {
            "repo": repo.name, "commit": repo.commit, "assets": {}}

    def _write_manifest(self, repo: Repo, data: dict[str, Any]) -> None:
        text = json.dumps(data, indent=2, sort_keys=True) + "\n"
        for path in (self.manifest_path(repo), self.view(repo) / VIEW_MANIFEST):
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(path.name + ".tmp")
            tmp.write_text(text)
            tmp.replace(path)

    def _record(self, repo: Repo, asset: Asset, **entry: Any) -> None:
        data = self.manifest(repo)
        data["assets"][asset.name] = {
            "kind": asset.kind, "source": asset.source, "id": asset.id, "url": asset.url,
            "path": asset.path, "dest": asset.dest,
            "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **entry}
        self._write_manifest(repo, data)

    def state(self, repo: Repo, asset: Asset) -> tuple[bool, str]:
        """(ready, why not): ready when recorded so and every file is in the view, unchanged."""
        entry = self.manifest(repo)["assets"].get(asset.name)
        if entry is None:
            return False, "not prepared"
        if entry.get("status") != "ready":
            return False, f"preparing it failed: {entry.get('error', 'unknown reason')}"
        view = self.view(repo)
        for rel, digest in (entry.get("files") or {}).items():
            path = view / rel
            obj = self.object_path(digest)
            if not path.is_file() or not obj.is_file() or path.stat().st_size != obj.stat().st_size:
                return False, f"{rel} is recorded but missing from the view {view}"
        if not entry.get("files"):
            return False, "recorded with no files"
        return True, ""

    # -- storing

    def _store(self, path: Path) -> str:
        digest = hashlib.sha256()
        with open(path, "rb") as fh:
            for chunk in iter(lambda: fh.read(CHUNK), b""):
                digest.update(chunk)
        name = digest.hexdigest()
        obj = self.object_path(name)
        if not obj.exists():
            obj.parent.mkdir(parents=True, exist_ok=True)
            tmp = obj.with_name(f".{name}.{os.getpid()}.tmp")
            shutil.copyfile(path, tmp)
            tmp.chmod(0o444)
            tmp.replace(obj)
        return name

    def _place(self, repo: Repo, asset: Asset, staging: Path) -> dict[str, str]:
        """Store the staged files and link them into the view; ``{view path: digest}``."""
        dest = asset.dest
        found = [(p, p.relative_to(staging).as_posix()) for p in _files(staging)]
        if not found:
            raise AssetError(f"{asset.source} asset {asset.name!r} produced no files")
        single = (len(found) == 1 and not dest.endswith("/")
                  and PurePosixPath(dest).suffix != "")
        entries = {}
        for path, rel in found:
            view_rel = dest if single else f"{dest.rstrip('/')}/{rel}"
            entries[view_rel] = self._store(path)
        view = self.view(repo)
        for view_rel, digest in entries.items():
            target = view / view_rel
            target.parent.mkdir(parents=True, exist_ok=True)
            if target.is_symlink() or target.exists():
                target.unlink()
            try:
                os.link(self.object_path(digest), target)
            except OSError:
                shutil.copyfile(self.object_path(digest), target)
                target.chmod(0o444)
        return entries

    def ingest(self, repo: Repo, name: str, path: Path | str, *, origin: str) -> None:
        """Make a file or folder prepared elsewhere the asset ``name`` (``origin`` says how).

        The stand-in for an asset that cannot be fetched here, a manual download,
        a copy from another cache: anything placed this way is recorded as such.
        """
        asset = next((a for a in repo.assets if a.name == name), None)
        if asset is None:
            raise AssetError(f"{repo.name} declares no asset {name!r}")
        src = Path(path)
        with self.lock(repo), tempfile.TemporaryDirectory(dir=self._tmp()) as tmp:
            staging = Path(tmp) / "staging"
            staging.mkdir()
            if src.is_dir():
                shutil.copytree(src, staging / src.name)
                staging = staging / src.name
            else:
                shutil.copyfile(src, staging / src.name)
            files = self._place(repo, asset, staging)
            self._record(repo, asset, status="ready", files=files, origin=origin)

    def _tmp(self) -> Path:
        path = self.root / "tmp"
        path.mkdir(parents=True, exist_ok=True)
        return path

    # -- preparing

    def prepare(self, repo: Repo, *, network: bool, copy: CheckoutCopy | None = None,
                only: Iterable[Asset] | None = None) -> list[Prepared]:
        """Make every asset of ``repo`` (or ``only`` these) that is not ready yet.

        Without ``network`` only ``repo`` and ``synthetic`` assets are made; the
        others are left as they are.  Failures are recorded with their reason.
        """
        results = []
        self.view(repo).mkdir(parents=True, exist_ok=True)
        with self.lock(repo):
            for asset in (repo.assets if only is None else list(only)):
                ready, _ = self.state(repo, asset)
                if ready:
                    results.append(Prepared(asset, "kept", self._origin(repo, asset)))
                    continue
                if asset.network and not network:
                    continue
                results.append(self._prepare_one(repo, asset, network=network, copy=copy))
        return results

    def _origin(self, repo: Repo, asset: Asset) -> str:
        return str(self.manifest(repo)["assets"].get(asset.name, {}).get("origin", ""))

    def _prepare_one(self, repo: Repo, asset: Asset, *, network: bool,
                     copy: CheckoutCopy | None) -> Prepared:
        origin = {"hf": f"hub {asset.id}", "hf_dataset": f"hub dataset {asset.id}",
                  "modelscope": f"modelscope {asset.id}",
                  "url": str(asset.url), "git": str(asset.url),
                  "repo": f"checkout:{asset.path}",
                  "synthetic": "generated by pytest-reb"}.get(asset.source, asset.source)
        with tempfile.TemporaryDirectory(dir=self._tmp()) as tmp:
            staging = Path(tmp) / "staging"
            staging.mkdir()
            try:
                fetch(asset, staging, network=network, copy=copy)
                files = self._place(repo, asset, staging)
            except AssetError as exc:
                self._record(repo, asset, status="failed", error=str(exc), origin=origin)
                return Prepared(asset, "failed", str(exc))
        self._record(repo, asset, status="ready", files=files, origin=origin)
        return Prepared(asset, "ready", f"{len(files)} file(s) from {origin}")

    def missing(self, repo: Repo, assets: Iterable[Asset]) -> list[tuple[Asset, str]]:
        """Those of ``assets`` that are not ready, each with why."""
        out = []
        for asset in assets:
            ready, why = self.state(repo, asset)
            if not ready:
                out.append((asset, why))
        return out
