"""The tiers' side of assets: which ones a stage reads, the view in the target, what is missing.

A stage needs an asset when a path its strings name under ``{assets}`` and
the asset's declared ``dest`` contain one another; optional assets are never
needed.  The view is mounted where the official prepare wrote,
``{checkout}/benchmark_assets``, before anything runs in the target.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from pytest_reb.assets.cache import AssetCache
from pytest_reb.spec import Asset, Repo, Run
from pytest_reb.targets import Target

#: Where the view appears in a container, under the checkout (the official folder).
VIEW_MOUNT = "benchmark_assets"
#: Asset kinds whose absence is the official ``model`` category; the rest are ``data``.
MODEL_KINDS = ("model", "tokenizer")

_REF = re.compile(r"(?:\{assets\}|benchmark_assets)(/[^\s'\",:;)\]}]*)?")


def category(asset: Asset) -> str:
    """The official failure category when ``asset`` is missing."""
    return "model" if asset.kind in MODEL_KINDS else "data"


def _texts(run: Run) -> Iterator[str]:
    """The run's strings and those of the runs that go with it (setup commands included:
    the configs they generate name assets)."""
    for r in (run, *run.together, *([run.retry.run] if run.retry else [])):
        yield from r.texts()


def references(run: Run) -> set[str]:
    """The paths under ``{assets}`` a run points at ('' for the folder itself)."""
    refs = set()
    for text in _texts(run):
        for match in _REF.finditer(text):
            refs.add((match.group(1) or "").strip("/").rstrip("."))
    return refs


def needed(repo: Repo, run: Run) -> list[Asset]:
    """The assets a run reads: those whose place and a path it names contain one another."""
    refs = references(run)
    out = []
    for asset in repo.assets:
        if asset.optional:
            continue
        dest = asset.dest.strip("/")
        if any(ref == "" or dest == ref or dest.startswith(ref + "/") or
               ref.startswith(dest + "/") for ref in refs):
            out.append(asset)
    return out


def describe(asset: Asset, why: str) -> str:
    """One missing asset: what it is, where it comes from and goes, and why it is not there."""
    where = asset.id or asset.url or asset.path or asset.source
    return (f"{asset.kind} {asset.name!r} ({asset.source} {where} -> "
            f"{{assets}}/{asset.dest}): {why}")


def missing_message(missing: list[tuple[Asset, str]], cache: Path | None) -> str:
    """One message naming every missing asset, and how to provide them."""
    parts = "; ".join(describe(a, why) for a, why in missing)
    where = f" in the asset cache {cache}" if cache else ""
    return (f"missing asset(s){where}: {parts}. Prepare them with --reb-prepare (the only step "
            "that uses the network) or pass --reb-assets DIR with a filled cache")


def mount_view(target: Target, repo: Repo, cache: AssetCache, checkout: str) -> str | None:
    """Mount the repository's view at the official ``{checkout}/benchmark_assets``.

    Its ``cache/`` is writable scratch: the official commands point ``HF_HOME``,
    ``TORCH_HOME`` and the like there.
    """
    view = cache.view(repo)
    view.mkdir(parents=True, exist_ok=True)
    return target.mount(str(view), f"{checkout}/{VIEW_MOUNT}", scratch=("cache",))


def attach(target: Target, repo: Repo, cache: AssetCache | None, checkout: str) -> str | None:
    """Mount the repository's view into ``target`` before anything runs there.

    Returns where ``{assets}`` is in the target when that is not the official
    ``{checkout}/benchmark_assets`` (``local://``: the view itself), else None.
    """
    if cache is None or not repo.assets:
        return None
    seen = mount_view(target, repo, cache, checkout)
    return seen if seen not in (None, f"{checkout}/{VIEW_MOUNT}") else None
