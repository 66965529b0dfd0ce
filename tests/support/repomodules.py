"""The ``repos/`` modules as the shim and asset tests load them, and their stages' setup.

Shared by the test files of shims and prepared assets (``from support.repomodules import
module``; rootdir-relative imports work because pytest puts ``tests/`` on sys.path).
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import textwrap
from functools import cache
from pathlib import Path
from types import ModuleType

from pytest_reb.pyramid.entrypoint import Places
from pytest_reb.pyramid.shims import with_shim
from pytest_reb.spec import Repo, Run

ROOT = Path(__file__).resolve().parents[2]
REPOS = ROOT / "repos"
#: Our shims' shared library, which a target puts right after a shim folder.
SHIMLIB = ROOT / "pytest_reb" / "pyramid" / "shimlib"


@cache
def module(stem: str) -> ModuleType:
    """``repos/<stem>.py`` imported under a private name (it is also a pytest module)."""
    spec = importlib.util.spec_from_file_location(f"_reb_repos_under_test.{stem}",
                                                  REPOS / f"{stem}.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@cache
def benchmark() -> dict[str, Repo]:
    """Every ``repos/`` module's ``Repo``, by its owner/name."""
    found = (module(p.stem).repo for p in sorted(REPOS.glob("test_*.py")))
    return {repo.name: repo for repo in found}


def stages(repo: Repo) -> list[tuple[str, Run]]:
    """(stage name, run) of each stage that applies."""
    return [(s, r) for s in ("cpu", "single_gpu", "multi_gpu")
            if (r := getattr(repo, s)) is not None]


def runs(repo: Repo) -> list[Run]:
    """The runs of the stages that apply."""
    return [r for _, r in stages(repo)]


def write_tree(root: Path, files: dict[str, str]) -> Path:
    """Stand-in files (dedented) under ``root``."""
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


class Stage:
    """A run's placeholders bound to folders under ``tmp``; runs its setup steps the way a
    target does (the run's env and cwd, the shim folder and our shim library first on
    ``PYTHONPATH``), under the host python."""

    def __init__(self, run: Run, tmp: Path, name: str = "", repo: Repo | None = None) -> None:
        self.run, self.spec = run, repo
        self.out = tmp / "out" / name
        self.assets = tmp / "assets"
        self.repo = tmp / "repo"
        for folder in (self.out, self.assets, self.repo):
            folder.mkdir(parents=True, exist_ok=True)

    def fill(self, text: str) -> str:
        return Places(sys.executable, str(self.repo), str(self.assets), str(self.out),
                      shims=self.run.shim_dir).fill(text)

    def raw(self, name: str) -> Path:
        """Where ``--reb-prepare`` puts asset ``name`` in the view (its declared dest)."""
        assert self.spec is not None, "raw() needs the Repo"
        asset = next(a for a in self.spec.assets if a.name == name)
        return self.assets / asset.dest

    def setup(self, *, check: bool = True, only: str = "",
              **env: str) -> subprocess.CompletedProcess[str]:
        """Every setup step in order (those naming ``only``, when given); stop at the first
        failure and return the last one run."""
        assert self.run.setup, "the stage has no setup step"
        run_env = with_shim({k: self.fill(v) for k, v in self.run.env.items()},
                            self.run.shim_dir, str(SHIMLIB))
        done = None
        for step in self.run.setup:
            if only not in " ".join(step):
                continue
            done = subprocess.run([self.fill(a) for a in step], cwd=self.fill(self.run.cwd),
                                  env={**os.environ, **run_env, **env}, capture_output=True,
                                  text=True, timeout=120)
            if done.returncode:
                break
        assert done is not None
        if check:
            assert done.returncode == 0, done.stdout + done.stderr
        return done

    def argv(self) -> list[str]:
        return [self.fill(a) for a in self.run.argv]

    def arg(self, flag: str) -> Path:
        """The filled value following ``flag`` in the run's argv."""
        argv = self.argv()
        return Path(argv[argv.index(flag) + 1])
