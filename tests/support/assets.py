"""Helpers shared by the tests of the assets our ``repos/`` modules declare, one test file
per repository.

The official prepare steps post-processed what they fetched; pytest-reb fetches the raw
asset into the view and each stage's ``setup`` redoes the post-processing into ``{out}``.
These are the ways of laying a stage out in temporary folders and of running its setup
steps that several repositories' tests share (``from support.assets import ...``).
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import urllib.parse
from pathlib import Path
from types import ModuleType

import pytest

from pytest_reb.assets.cache import AssetCache
from pytest_reb.assets.fetchers import checkout_copy, fetch
from pytest_reb.assets.view import needed
from pytest_reb.spec import Asset, Repo, Run
from pytest_reb.targets import LocalTarget
from support.repomodules import Stage, stages


def on_server(repo: Repo, served: tuple[str, Path], files: dict[str, bytes]) -> Repo:
    """``repo`` with each ``url`` asset's host swapped for the local server, which serves
    ``files[asset name]`` under the same path."""
    base, root = served
    changed = []
    for asset in repo.assets:
        if asset.source == "url" and asset.name in files:
            path = urllib.parse.urlparse(asset.url).path
            (root / path.lstrip("/")).parent.mkdir(parents=True, exist_ok=True)
            (root / path.lstrip("/")).write_bytes(files[asset.name])
            asset = dataclasses.replace(asset, url=base + path)
        changed.append(asset)
    return dataclasses.replace(repo, assets=changed)


class Target:
    """A stage's placeholders bound to temporary folders: the view as ``{assets}``."""

    def __init__(self, tmp: Path, repo: Repo, checkout: Path) -> None:
        self.repo = repo
        self.cache = AssetCache(tmp / "cache")
        self.checkout = checkout
        self.out = tmp / "out"
        self.out.mkdir(parents=True, exist_ok=True)

    @property
    def view(self) -> Path:
        """The prepared view, what ``{assets}`` stands for."""
        return self.cache.view(self.repo)

    def prepare(self, **stand_ins: Path) -> None:
        """Prepare every asset: stand-ins ingested, the rest fetched (network = localhost)."""
        for name, path in stand_ins.items():
            self.cache.ingest(self.repo, name, path, origin="stand-in")
        copy = checkout_copy(LocalTarget(gpus=[]), str(self.checkout))
        for result in self.cache.prepare(self.repo, network=True, copy=copy):
            assert result.status in ("ready", "kept"), result.line()

    def fill(self, text: str, run: Run) -> str:
        """``text`` with the run's placeholders bound to this target's folders."""
        places = {"{python}": sys.executable, "{shims}": str(run.shim_dir), "{out}": str(self.out),
                  "{assets}": str(self.view), "{repo}": str(self.checkout)}
        for key, value in places.items():
            text = text.replace(key, value)
        return text

    def setup(self, run: Run, *, check: bool = True) -> subprocess.CompletedProcess[str]:
        """The run's setup steps in order, with its env and cwd; stop at the first failure."""
        env = {**os.environ, **{k: self.fill(v, run) for k, v in run.env.items()}}
        env.pop("PYTHONPATH", None)
        cwd = Path(self.fill(run.cwd, run))
        cwd.mkdir(parents=True, exist_ok=True)
        done = None
        for step in run.setup:
            done = subprocess.run([self.fill(a, run) for a in step], cwd=cwd, env=env,
                                  capture_output=True, text=True, timeout=120)
            if done.returncode:
                break
        assert done is not None
        if check:
            assert done.returncode == 0, (done.stdout, done.stderr)
        return done

    def arg(self, run: Run, flag: str) -> Path:
        """The filled value following ``flag`` in the run's argv."""
        argv = list(run.argv)
        return Path(self.fill(argv[argv.index(flag) + 1], run))


def write(path: Path, data: bytes | str) -> Path:
    """``data`` written at ``path``, its folders made; the path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        path.write_text(data)
    else:
        path.write_bytes(data)
    return path


def assert_real(repo: Repo, name: str, readers: list[str]) -> None:
    """The asset is declared and exactly the stages ``readers`` need it."""
    assert any(a.name == name for a in repo.assets)
    for stage, run in stages(repo):
        read = [a.name for a in needed(repo, run)]
        assert (name in read) == (stage in readers), (repo.name, stage, read)


def fetched(repo: Repo, name: str, host: str, staging: Path) -> Path:
    """``--reb-prepare``'s fetch of asset ``name`` with its url's host swapped for ``host``."""
    declared = asset(repo, name)
    assert declared.url is not None
    local = dataclasses.replace(declared, url=host + urllib.parse.urlparse(declared.url).path)
    staging.mkdir(parents=True)
    fetch(local, staging, network=True)
    return staging


def asset(repo: Repo, name: str) -> Asset:
    """The asset ``name`` of ``repo`` (a missing one fails the test with StopIteration)."""
    return next(a for a in repo.assets if a.name == name)


def with_url(repo: Repo, name: str, url: str) -> tuple[Repo, Asset]:
    """``repo`` with asset ``name`` fetched from ``url`` instead (a local server), and that
    asset."""
    local = dataclasses.replace(asset(repo, name), url=url)
    return dataclasses.replace(repo, assets=[local if a.name == name else a
                                             for a in repo.assets]), local


def view_path(repo: Repo, name: str, places: Stage, file: str = "") -> Path:
    """Where the view holds the raw asset (a file inside a folder dest when ``file``)."""
    dest = asset(repo, name).dest
    return places.assets / dest / file if file else places.assets / dest


def run_step(step: list[str], run: Run, tmp: Path, site: Path | None = None,
             **places: str) -> subprocess.CompletedProcess[str]:
    """One setup step with {python}/{shims}/{out}/... filled, stand-ins first on PYTHONPATH."""
    table = {"python": sys.executable, "shims": str(run.shim_dir), **places}
    argv = []
    for arg in step:
        for key, value in table.items():
            arg = arg.replace("{" + key + "}", value)
        argv.append(arg)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        str(p) for p in (site, run.shim_dir) if p)}
    return subprocess.run(argv, cwd=tmp, env=env, capture_output=True, text=True, timeout=120)


def names(repo: Repo, run: Run) -> list[str]:
    """The names of the assets ``run`` needs."""
    return [a.name for a in needed(repo, run)]


def standin(monkeypatch: pytest.MonkeyPatch, name: str, **attrs: object) -> ModuleType:
    """A stand-in module ``name`` with ``attrs``, in sys.modules for this test only."""
    mod = ModuleType(name)
    for key, value in attrs.items():
        setattr(mod, key, value)
    monkeypatch.setitem(sys.modules, name, mod)
    return mod
