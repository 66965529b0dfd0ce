"""Getting one asset's files into an empty staging folder: download, copy or write them.

Each source has its fetcher (hub, ModelScope, url, git, the checkout in the
target, our own synthetic content); ``fetch`` picks it and applies what the
asset declares about turning the fetched files into the expected ones
(``extract``, ``rename``).  Only the network sources need ``--reb-prepare``.
Archives and copies out of images are treated as data: nothing lands outside
the staging folder.
"""

from __future__ import annotations

import contextlib
import gzip
import os
import shutil
import subprocess
import tarfile
import urllib.parse
import urllib.request
import zipfile
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import IO, Any

from pytest_reb.spec import Asset
from pytest_reb.targets import Target, TargetError

#: Download chunk and the per-request socket timeout of ``url`` assets.
CHUNK = 1 << 20
URL_TIMEOUT = 60.0


class AssetError(Exception):
    """An asset cannot be prepared: one line a person can act on."""


#: Copies a repository-relative file or folder of the checkout into a host folder.
CheckoutCopy = Callable[[str, Path], None]


def checkout_copy(target: Target | None, repo_dir: str) -> CheckoutCopy:
    """How to copy from the checkout in ``target`` without running anything there: the
    files themselves where they are this machine's (``local://``), else the target's tar of
    them (a Docker image's, through a never started container)."""
    def copy(rel: str, into: Path) -> None:
        if target is None:
            raise AssetError(f"cannot copy {rel} from the checkout of no target: repository "
                             "assets are copied from a Docker image or a local:// checkout")
        src = target.host_path(f"{repo_dir}/{rel}")
        if src is not None:
            if not src.exists():
                raise AssetError(f"{rel} is not in the checkout {repo_dir}")
            if src.is_dir():
                shutil.copytree(src, into / src.name)
            else:
                shutil.copyfile(src, into / src.name)
            return
        try:
            with target.tar_of(f"{repo_dir}/{rel}") as archive:
                _untar(archive, into)
        except TargetError as exc:
            raise AssetError(f"cannot copy {rel} out of {target.name}: {exc}") from None

    return copy


def _safe_name(name: str) -> str | None:
    path = PurePosixPath(name)
    if path.is_absolute() or ".." in path.parts:
        return None
    return str(path).lstrip("./") or None


def _member_dest(into: Path, name: str) -> Path:
    """Where archive member ``name`` lands in ``into``; one pointing outside it is refused."""
    safe = _safe_name(name)
    if safe is None:
        raise AssetError(f"archive member {name!r} points outside its folder")
    return into / safe


def _copy_member(src: IO[bytes], dest: Path) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    with open(dest, "wb") as out:
        shutil.copyfileobj(src, out, CHUNK)


def _untar(fileobj: Any, into: Path) -> None:
    """Regular files and folders only, never outside ``into``: archives are data."""
    with tarfile.open(fileobj=fileobj) as tar:
        for member in tar:
            dest = _member_dest(into, member.name)
            if member.isdir():
                dest.mkdir(parents=True, exist_ok=True)
            elif member.isfile():
                src = tar.extractfile(member)
                if src is not None:
                    _copy_member(src, dest)


def _unzip(path: Path, into: Path) -> None:
    """Files and folders, never outside ``into``, as for a tar."""
    with zipfile.ZipFile(path) as archive:
        for info in archive.infolist():
            dest = _member_dest(into, info.filename)
            if info.is_dir():
                dest.mkdir(parents=True, exist_ok=True)
            else:
                with archive.open(info) as src:
                    _copy_member(src, dest)


def _extract_all(staging: Path, basename: str) -> None:
    """Unpack every archive (and lone ``.gz`` file) in ``staging`` in place; drop one top
    folder named like the dest."""
    for path in sorted(p for p in staging.iterdir() if p.is_file()):
        name = path.name.lower()
        into = staging / "x"
        into.mkdir(exist_ok=True)
        if name.endswith(".zip"):
            _unzip(path, into)
        elif name.endswith((".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tar.xz")):
            with open(path, "rb") as fh:
                _untar(fh, into)
        elif name.endswith(".gz"):
            # one compressed file (MNIST's idx files): its content under the name less ".gz",
            # since a stage whose code would gunzip it next to itself finds a read-only view
            try:
                with gzip.open(path, "rb") as src:
                    _copy_member(src, into / path.name[:-3])
            except (OSError, EOFError) as exc:
                raise AssetError(f"{path.name} is not a whole gzip file: {exc}") from None
        else:
            continue
        path.unlink()
        top = list(into.iterdir())
        root = top[0] if len(top) == 1 and top[0].is_dir() and top[0].name == basename else into
        for item in list(root.iterdir()):
            item.rename(staging / item.name)
        shutil.rmtree(into)


def _download(url: str, dest: Path) -> None:
    request = urllib.request.Request(url, headers={"User-Agent": "pytest-reb"})
    try:
        with urllib.request.urlopen(request, timeout=URL_TIMEOUT) as resp, \
                open(dest, "wb") as out:
            shutil.copyfileobj(resp, out, CHUNK)
    except (OSError, ValueError) as exc:
        dest.unlink(missing_ok=True)
        raise AssetError(f"download of {url} failed: {exc}") from None


def _fetch_url(asset: Asset, staging: Path) -> None:
    if not asset.url:
        raise AssetError(f"url asset {asset.name!r} names no url")
    if not asset.files:
        _download(asset.url, staging / (
            PurePosixPath(urllib.parse.urlparse(asset.url).path).name or asset.name))
        return
    base = asset.url.rstrip("/") + "/"
    for declared in asset.files:
        url = urllib.parse.urljoin(base, asset.url_paths.get(declared, declared))
        _download(url, staging / PurePosixPath(declared).name)


def _patterns(asset: Asset) -> list[str] | None:
    """File patterns of a hub asset; notes in the reference sometimes follow a pattern."""
    return [f.split()[0] for f in asset.files] or None


def _fetch_hf(asset: Asset, staging: Path) -> None:
    try:
        import huggingface_hub
    except ImportError:
        raise AssetError(f"{asset.source} asset {asset.name!r} ({asset.id}) needs "
                         "huggingface_hub on this machine (pip install huggingface_hub)") from None
    ids = list(asset.hub_ids) or [asset.id]
    if not all(ids) or any("*" in str(i) for i in ids):
        raise AssetError(f"{asset.source} asset {asset.name!r} has no single hub id ({asset.id})")
    for repo_id in ids:
        kw: dict[str, Any] = {"repo_id": repo_id,
                              "allow_patterns": _patterns(asset) or list(asset.hub_files) or None,
                              "repo_type": "dataset" if asset.source == "hf_dataset" else "model"}
        try:
            if asset.hf_cache:
                huggingface_hub.snapshot_download(cache_dir=str(staging), **kw)
            else:
                huggingface_hub.snapshot_download(local_dir=str(staging), **kw)
        except Exception as exc:  # the hub client raises many kinds; each means "not fetched"
            raise AssetError(f"hub download of {repo_id} failed: {type(exc).__name__}: "
                             f"{str(exc)[:300]}") from None
    shutil.rmtree(staging / ".cache", ignore_errors=True)
    with contextlib.suppress(OSError):
        (staging / ".gitattributes").unlink()


def _fetch_modelscope(asset: Asset, staging: Path) -> None:
    """A ModelScope model's files as its own cache holds them: the files and the cache's
    index (``.msc``, ``.mdl``, ``.mv`` where the client writes them), not its temp folder."""
    try:
        from modelscope.hub.snapshot_download import snapshot_download
    except ImportError:
        raise AssetError(f"modelscope asset {asset.name!r} ({asset.id}) needs "
                         "modelscope on this machine (pip install modelscope)") from None
    if not asset.id or "*" in asset.id:
        raise AssetError(f"modelscope asset {asset.name!r} has no single model id ({asset.id})")
    kw: dict[str, Any] = {"local_dir": str(staging)}
    if _patterns(asset):
        kw["allow_file_pattern"] = _patterns(asset)
    try:
        snapshot_download(asset.id, **kw)
    except Exception as exc:  # the client raises many kinds; each means "not fetched"
        raise AssetError(f"modelscope download of {asset.id} failed: {type(exc).__name__}: "
                         f"{str(exc)[:300]}") from None
    shutil.rmtree(staging / "._____temp", ignore_errors=True)


def _fetch_git(asset: Asset, staging: Path) -> None:
    if not asset.url:
        raise AssetError(f"git asset {asset.name!r} names no url")
    clone = staging.parent / "clone"
    try:
        subprocess.run(["git", "clone", "--depth", "1", "--quiet", asset.url, str(clone)],
                       check=True, capture_output=True, text=True, timeout=1800,
                       env={**os.environ, "GIT_TERMINAL_PROMPT": "0"})
    except (OSError, subprocess.SubprocessError) as exc:
        err = getattr(exc, "stderr", "") or exc
        raise AssetError(f"git clone of {asset.url} failed: {str(err).strip()[:300]}") from None
    for rel in asset.files or [p.name for p in clone.iterdir() if p.name != ".git"]:
        src = clone / rel
        if not src.exists():
            raise AssetError(f"{rel} is not in {asset.url}")
        (shutil.copytree if src.is_dir() else shutil.copyfile)(src, staging / src.name)
    shutil.rmtree(clone, ignore_errors=True)


def _fetch_repo(asset: Asset, staging: Path, copy: CheckoutCopy) -> None:
    if not asset.path:
        raise AssetError(f"repo asset {asset.name!r} names no path")
    if asset.files:
        for name in asset.files:
            copy(f"{asset.path.rstrip('/')}/{name}", staging)
        return
    copy(asset.path, staging)
    copied = staging / PurePosixPath(asset.path.rstrip("/")).name
    if copied.is_dir():  # a folder's contents are the asset, not the folder
        for item in list(copied.iterdir()):
            item.rename(staging / item.name)
        copied.rmdir()


def _fetch_synthetic(asset: Asset, staging: Path) -> None:
    """Write the content the module spells out, named as the view expects."""
    content = asset.synthetic
    if content is None or content.text is None:
        why = content.made_by if content is not None else "no generator is written for it"
        raise AssetError(f"synthetic asset {asset.name!r} is not implemented: {why}")
    (staging / (PurePosixPath(asset.dest).name or asset.name)).write_text(content.text)


def fetch(asset: Asset, staging: Path, *, network: bool,
          copy: CheckoutCopy | None = None) -> None:
    """Put the asset's files into ``staging`` (empty): download, copy or generate them."""
    if asset.network and not network:
        raise AssetError(f"{asset.source} asset {asset.name!r} needs the network: "
                         "prepare it with --reb-prepare, or fill the cache elsewhere "
                         "and pass --reb-assets DIR")
    if asset.source in ("hf", "hf_dataset"):
        _fetch_hf(asset, staging)
    elif asset.source == "modelscope":
        _fetch_modelscope(asset, staging)
    elif asset.source == "url":
        _fetch_url(asset, staging)
    elif asset.source == "git":
        _fetch_git(asset, staging)
    elif asset.source == "repo":
        _fetch_repo(asset, staging, copy or checkout_copy(None, ""))
    elif asset.source == "synthetic":
        _fetch_synthetic(asset, staging)
    else:
        raise AssetError(f"{asset.source} asset {asset.name!r} ({asset.id}): fetching from "
                         f"{asset.source} is not implemented")
    if asset.extract:
        _extract_all(staging, PurePosixPath(asset.dest.rstrip("/")).name)
    for old, new in asset.rename.items():
        for path in staging.rglob(old):
            path.rename(path.with_name(new))
