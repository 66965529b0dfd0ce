"""The wheels the GPU machine lacks for each real repository, made here (it has no network).

    python tests/realruns/gpu_wheels.py --pool POOL OWNER/NAME ...

The GPU machine runs the rows of ``table.py`` in its own ``python3`` (CPython 3.12, manylinux
x86_64, torch 2.11.0+cu130 and about 180 packages installed), in one
``venv --system-site-packages`` per repository, with ``pip install --no-index --find-links
POOL -r POOL/<owner>+<name>.req``; where that resolution fails, with ``pip install --no-deps``
of the files in ``POOL/<owner>+<name>.files``.  The rows were written for CPU images, so the
torch family is dropped from them (the machine's own build is the one under test), and the
row's closure is downloaded for the machine's interpreter against empty stand-in wheels of its
torch, torchvision, torchaudio and triton (no CUDA wheel of several GB is fetched).  A wheel
whose project the machine has is left out where the machine's version meets the row and the
closure's requirements on it (the versions its pip list gave; for the others the newest
version downloaded for any row stands in, its image being recent).  A row whose download fails
gets its failing pin relaxed (``--relax``, once by default; said in ``<owner>+<name>.notes``);
a repository's own wheels are held under ``--cap-mib`` by leaving its biggest ones out (also
noted), and the pool under ``--max-mib`` by splitting the repositories, in order, into
``POOL/1``, ``POOL/2``, ..., so that each pool can travel with a run.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import zipfile
from email.parser import Parser
from pathlib import Path

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name, parse_wheel_filename
from packaging.version import Version

sys.path.insert(0, str(Path(__file__).resolve().parent))
from checkout_imports import imported, provides
from gpu_pack import MIRROR
from realenv import RealEnv
from table import ENVIRONMENTS

MIB = 1 << 20
PLATFORM = ["--only-binary=:all:", "--python-version", "3.12", "--implementation", "cp",
            *(f"--platform={p}" for p in ("manylinux2014_x86_64", "manylinux_2_17_x86_64",
                                          "manylinux_2_28_x86_64", "linux_x86_64", "any"))]
#: The machine's own builds, which the downloads resolve against as stand-ins.
MACHINE_BUILDS = {"torch": "2.11.0+cu130", "torchvision": "0.26.0+cu130",
                  "torchaudio": "2.11.0+cu130", "triton": "3.6.0"}
NEVER = re.compile(r"^(torch|torchvision|torchaudio|triton|nvidia-.*|cuda-.*|jax.*|cupy.*)$")
#: The machine's builds that need NumPy 2, which its other packages import: its SciPy is 1.17
#: or later (``numpy>=2.0``; ``np.long`` in ``scipy/sparse/_sputils.py`` fails under NumPy 1),
#: and its scikit-learn imports it under transformers.  A row that holds numpy below 2 takes
#: its own build of them, as pip would have chosen for it (``numpy1_builds``).
NUMPY2_BUILDS = ("scipy",)
#: Versions the machine reported (its pip list), and those docs/gpu_family_run.sh installs
#: into it first (its WHEELS: what pytest-reb needs); the other present packages are of
#: unknown version.
KNOWN = dict(pair.split("=") for pair in str.split(
    "pydantic=2.14.4 pydantic-core=2.50.5 annotated-types=0.8.0 typing-inspection=0.4.5 "
    "docker=7.2.0 pytest-testinfra=10.2.2 "
    "accelerate=1.15.0 huggingface-hub=1.33.0 numpy=2.5.2 onnx=1.23.1 onnx-ir=1.0.0 "
    "onnxruntime=1.30.0 onnxscript=0.7.2 pytorch-lightning=2.6.6 safetensors=0.8.0 "
    "sentence-transformers=6.0.1 sentencepiece=0.2.2 tiktoken=0.14.0 tokenizers=0.23.2 "
    "torch-geometric=2.8.0.post1 torchdiffeq=0.2.5 torchmetrics=1.9.0 transformers=5.17.0"
))
PRESENT = set(KNOWN) | set(str.split("""
absl-py aiofiles aiohappyeyeballs aiohttp aiosignal annotated-doc anyio attrs botorch build
certifi charset-normalizer chex click cloudpickle cmake colorama contourpy coverage cycler
cython diffrax e3nn einops equinox etils execnet filelock flatbuffers flax fonttools formulaic
frozenlist fsspec gpytorch grpcio h11 h5py hf-xet httpcore httpx humanize hypothesis idna
imageio iniconfig interface-meta jaxtyping jinja2 joblib kiwisolver lazy-loader lightning
lightning-utilities linear-operator lineax llvmlite lxml markdown markdown-it-py markupsafe
matplotlib mdurl meson ml-dtypes mpi4py mpmath msgpack multidict multipledispatch
mypy-extensions nanobind narwhals networkx ninja numba numba-cuda numpyro
opencv-python-headless optax opt-einsum opt-einsum-fx optimistix orbax-checkpoint packaging
pandas pathspec patsy peft pillow pip pluggy portalocker prometheus-client propcache protobuf
psutil pyarrow pybind11 py-cpuinfo pygments pyparsing pyproject-hooks pyre-extensions pytest
pytest-benchmark pytest-cov pytest-mock pytest-timeout pytest-xdist python-dateutil pyyaml
regex requests rich sacrebleu scikit-build-core scikit-image scikit-learn scipy seaborn
setuptools shellingham simplejson six sortedcontainers statsmodels sympy tabulate tensorboard
tensorboard-data-server tensorstore threadpoolctl tifffile timm toolz treescope typer
typing-extensions typing-inspect urllib3 uvloop wadler-lindig werkzeug wheel wrapt xarray
xxhash yarl zipp
"""))
MARKERS = {**default_environment(), "python_version": "3.12", "python_full_version": "3.12.3",
           "sys_platform": "linux", "platform_system": "Linux", "platform_machine": "x86_64",
           "implementation_name": "cpython", "platform_python_implementation": "CPython"}


def pip(*args: str, python: str = sys.executable) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["nice", "-n", "19", python, "-m", "pip", *args,
                           "-q", "--disable-pip-version-check"], capture_output=True, text=True)


def stand_ins(folder: Path) -> Path:
    """Empty wheels of the machine's torch family, and the constraints that choose them."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, version in MACHINE_BUILDS.items():
        info = f"{name}-{version}.dist-info"
        with zipfile.ZipFile(folder / f"{name}-{version}-py3-none-any.whl", "w") as whl:
            whl.writestr(f"{info}/METADATA", f"Metadata-Version: 2.1\nName: {name}\n"
                                             f"Version: {version}\n")
            whl.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: true\n"
                                          "Tag: py3-none-any\n")
            whl.writestr(f"{info}/RECORD", "")
    (folder / "constraints.txt").write_text("".join(f"{n}=={v}\n"
                                                    for n, v in MACHINE_BUILDS.items()))
    return folder


def download(row: RealEnv, reqs: list[str], dest: Path, stubs: Path, build: str) -> str:
    """The closure of ``reqs`` (and the row's sdists, built first by the CPython 3.12 ``build``:
    some have compiled code) into ``dest``; pip's error.  A dependency of the closure that
    has no wheel at all (an sdist only, crcmod under oss2) is built by ``build`` too, into
    ``stubs/../_built``, once for every row, and the download tried again."""
    built_dir = stubs.parent / "_built"
    built_dir.mkdir(parents=True, exist_ok=True)
    tried: set[str] = set()
    while True:
        shutil.rmtree(dest, ignore_errors=True)
        dest.mkdir(parents=True)
        if row.sdists:
            built = pip("wheel", "--no-deps", "-w", str(dest), *row.sdists, python=build)
            if built.returncode:
                return built.stderr
        done = pip("download", *PLATFORM, "-d", str(dest), "--find-links", str(dest),
                   "--find-links", str(built_dir), "--find-links", str(stubs),
                   "-c", str(stubs / "constraints.txt"), *reqs)
        if not done.returncode:
            return ""
        sdist_only = sdist_dependency(done.stderr, reqs)
        if sdist_only is None or sdist_only in tried:
            return done.stderr
        tried.add(sdist_only)
        if pip("wheel", "--no-deps", "-w", str(built_dir), sdist_only, python=build).returncode:
            return done.stderr


def sdist_dependency(error: str, reqs: list[str]) -> str | None:
    """The requirement pip's ``error`` found no wheel of ("from versions: none"), where it is
    a dependency of the closure rather than one of the row's own ``reqs``."""
    own = {canonicalize_name(Requirement(r).name) for r in reqs}
    found = re.search(r"satisfies the requirement (\S+) \(from [^)]*\) \(from versions: none\)",
                      error)
    if not found or canonicalize_name(Requirement(found.group(1)).name) in own:
        return None
    return found.group(1)


def failing(error: str, reqs: list[str]) -> str | None:
    """The pinned requirement of ``reqs`` that pip's ``error`` names first, if any."""
    pinned = {canonicalize_name(Requirement(r).name): r for r in reqs if Requirement(r).specifier}
    for m in re.finditer(r"(?:satisfies the requirement|distribution found for|user requested"
                         r"|Cannot install) ([A-Za-z0-9_.\-]+)", error):
        if (name := canonicalize_name(m.group(1))) in pinned:
            return pinned[name]
    return None


def holds_numpy1(reqs: list[str]) -> bool:
    """Whether the row's requirements keep numpy below 2 (ml-mdm's ``numpy<2``)."""
    return any(canonicalize_name(req.name) == "numpy" and req.specifier
               and not req.specifier.contains(Version("2.0.0"), prereleases=True)
               for req in map(Requirement, reqs))


def numpy1_builds(reqs: list[str], notes: list[str]) -> list[str]:
    """``reqs`` with the ``NUMPY2_BUILDS`` the row does not name added where it holds numpy
    below 2 (each noted): the download then chooses builds that run under its NumPy."""
    if not holds_numpy1(reqs):
        return reqs
    named = {canonicalize_name(Requirement(r).name) for r in reqs}
    added = [name for name in NUMPY2_BUILDS if name not in named]
    notes.extend(f"added {name}: the machine's build needs numpy 2, the row holds numpy "
                 "below 2" for name in added)
    return [*reqs, *added]


def newest(scratch: Path) -> dict[str, Version]:
    """The newest version of each project downloaded for any row: the stand-in for the machine's
    version of a present package whose version is not known (its image is recent)."""
    out: dict[str, Version] = {}
    for wheel in scratch.glob("*/*.whl"):
        name, version, *_ = parse_wheel_filename(wheel.name)
        out[name] = max(version, out.get(name, version))
    return out


def machine_satisfies(version: Version | None, name: str, wanted: list[Requirement]) -> bool:
    """Whether the machine's installed ``name`` (of ``version``, if known) meets ``wanted``."""
    return version is None or all(r.specifier.contains(version, prereleases=True)
                                  for r in wanted if canonicalize_name(r.name) == name)


def closure_requirements(wheels: list[Path], extras: set[str]) -> list[Requirement]:
    out = []
    for wheel in wheels:
        with zipfile.ZipFile(wheel) as whl:
            meta = next(n for n in whl.namelist() if n.endswith(".dist-info/METADATA"))
            for line in Parser().parsestr(whl.read(meta).decode()).get_all("Requires-Dist", []):
                req = Requirement(line)
                if req.marker is None or any(req.marker.evaluate({**MARKERS, "extra": e})
                                             for e in extras | {""}):
                    out.append(req)
    return out


def fetch(row: RealEnv, scratch: Path, stubs: Path, build: str,
          relax: int) -> tuple[list[str], list[str]] | None:
    """The row's closure in ``scratch/<slug>`` (kept from an earlier call, failed or not, until
    that folder is removed); its requirement lines (up to ``relax`` failing pins relaxed, one
    retry each) and notes, or None where the download failed."""
    dest = scratch / row.repo.replace("/", "+")
    if (dest / ".failed").exists():
        return None
    if (dest / ".done").exists():
        reqs, _, old = (dest / ".done").read_text().partition("\n\n")
        return reqs.splitlines(), [n for n in old.splitlines() if n]
    notes: list[str] = []
    reqs = [p for p in row.packages if not p.startswith("-")
            and canonicalize_name(Requirement(p).name) not in MACHINE_BUILDS]
    reqs = numpy1_builds(reqs, notes)
    error = download(row, reqs, dest, stubs, build)
    for _ in range(relax):
        if not error or not (pin := failing(error, reqs)):
            break
        bare = re.sub(r"(\[[^\]]*\])?\s*[<>=!~].*$", r"\1", pin)
        notes.append(f"relaxed {pin} to {bare}: {error.strip().splitlines()[-1][:200]}")
        reqs = [bare if r == pin else r for r in reqs]
        error = download(row, reqs, dest, stubs, build)
    if error:
        said = [line.strip() for line in error.splitlines() if not line.startswith("WARNING")]
        tail = " | ".join(said[-8:])
        (dest / ".failed").write_text("\n".join([*notes, f"download failed: {tail}"]) + "\n")
        return None
    (dest / ".done").write_text("\n".join([*reqs, "", *notes]))
    return reqs, notes


#: Projects no stage imports (linters, notebooks, demo UIs): left out first when over the cap.
NOT_RUN = re.compile(r"^(ruff|black|isort|flake8|mypy|pre-commit|pylint|gradio(-client)?|"
                     r"jupyter.*|ipython|ipykernel|notebook|jupyterlab.*)$")


def project(wheel: Path) -> str:
    return canonicalize_name(parse_wheel_filename(wheel.name)[0])


def select(reqs: list[str], notes: list[str], dest: Path, versions: dict[str, Version],
           cap: float, imports: frozenset[str] = frozenset()) -> list[Path]:
    """The row's wheels the machine lacks, the others left out (and noted) over ``cap`` MiB:
    first a wheel bigger than the cap alone, then the tools no stage runs, then the biggest of
    the closure, then the biggest of the row's own requirements (its pins are why it has a
    pool), and last what the checkout ``imports`` (``checkout_imports``) and the row's own
    ``NUMPY2_BUILDS`` with everything those wheels require; a wheel left out takes along
    those of the kept wheels that require it where the machine lacks it too (a ``boto3``
    without its ``botocore`` breaks every library that imports ``boto3``)."""
    wheels = sorted(dest.glob("*.whl"))
    parsed = [Requirement(r) for r in reqs]
    wanted = parsed + closure_requirements(wheels, {e for r in parsed for e in r.extras})
    own_builds = set(NUMPY2_BUILDS) if holds_numpy1(reqs) else set()
    kept = []
    for wheel in wheels:
        name = project(wheel)
        machine = versions.get(name)
        if NEVER.match(name) or (name in PRESENT and name not in own_builds
                                 and machine_satisfies(machine, name, wanted)):
            continue
        kept.append(wheel)
    own = {canonicalize_name(r.name) for r in parsed}
    needs = {w: {canonicalize_name(r.name) for r in closure_requirements([w], set())}
             for w in kept}
    used = {w for w in kept if provides(w) & imports or project(w) in own_builds}
    grown = True
    while grown:
        more = {w for w in kept if any(project(w) in needs[u] for u in used)} - used
        used |= more
        grown = bool(more)
    kept.sort(key=lambda w: (w.stat().st_size <= cap * MIB, not NOT_RUN.match(project(w)),
                             w in used, project(w) in own, -w.stat().st_size))
    while kept and sum(w.stat().st_size for w in kept) > cap * MIB:
        gone = [kept.pop(0)]
        while gone:
            big = gone.pop()
            notes.append(f"left out (over {cap:g} MiB): {big.name} "
                         f"({big.stat().st_size / MIB:.1f} MiB)")
            if project(big) not in PRESENT:
                needing = [w for w in kept if project(big) in needs[w]]
                kept = [w for w in kept if w not in needing]
                gone.extend(needing)
    return sorted(kept)


def row_imports(row: RealEnv) -> set[str]:
    """What the row's checkout (from the fetch mirror) and its stand-in maker import."""
    module = (row.standin or "").rpartition(":")[0] or "standin"  # as gpu_repos imports it
    maker = Path(__file__).resolve().parent / f"{module}.py"
    also = [maker] if row.standin and maker.exists() else []
    return imported(MIRROR / row.repo.replace("/", "+") / "repo", row.commit, also)


def split(chosen: dict[str, list[Path]], limit: float) -> list[list[str]]:
    """The repositories, in order, in as few pools as keep each pool's wheels under ``limit``."""
    pools: list[list[str]] = [[]]
    sizes: dict[str, int] = {}
    for repo, kept in chosen.items():
        more = {w.name: w.stat().st_size for w in kept}
        if pools[-1] and sum({**sizes, **more}.values()) > limit * MIB:
            pools.append([])
            sizes = {}
        pools[-1].append(repo)
        sizes |= more
    return pools


def write(row: RealEnv, reqs: list[str], notes: list[str], kept: list[Path], pool: Path) -> None:
    slug = row.repo.replace("/", "+")
    for wheel in kept:
        if not (pool / wheel.name).exists():
            shutil.copy2(wheel, pool / wheel.name)
    # The row's sdists are built into its closure; their pins resolve from the pool too
    # (a git URL builds a wheel no pin names, so it stays out of the lines).
    built = [s for s in row.sdists if "://" not in s]
    (pool / f"{slug}.req").write_text(
        "\n".join([*reqs, *built, *(["# install_repo"] if row.install_repo else [])]) + "\n")
    (pool / f"{slug}.files").write_text("".join(f"{w.name}\n" for w in kept))
    (pool / f"{slug}.notes").write_text("".join(f"{n}\n" for n in notes))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repos", nargs="+")
    parser.add_argument("--pool", type=Path, required=True)
    parser.add_argument("--scratch", type=Path, default=Path("/tmp/reb-gpu-wheels"))
    parser.add_argument("--build-python", default=sys.executable,
                        help="a CPython 3.12 that builds the rows' sdists (some compile code)")
    parser.add_argument("--relax", type=int, default=1,
                        help="how many failing pins of a row may be relaxed, one retry each")
    parser.add_argument("--cap-mib", type=float, default=12.0,
                        help="the most MiB of one repository's own wheels")
    parser.add_argument("--max-mib", type=float, default=40.0,
                        help="the most MiB of one pool; past it, POOL/1, POOL/2, ... in order")
    parser.add_argument("--download-only", action="store_true",
                        help="fill --scratch only (several calls may share it)")
    args = parser.parse_args()
    args.pool.mkdir(parents=True, exist_ok=True)
    stubs = stand_ins(args.scratch / "_machine")
    rows = {row.repo: row for row in ENVIRONMENTS}
    fetched = {}
    where = dict.fromkeys(args.repos, "failed")
    for repo in args.repos:
        slug = repo.replace("/", "+")
        for old in (".req", ".files", ".notes"):
            (args.pool / f"{slug}{old}").unlink(missing_ok=True)
        if repo not in rows:
            (args.pool / f"{slug}.notes").write_text("no row in table.py\n")
            print(f"{repo}: no row in table.py", flush=True)
        elif (got := fetch(rows[repo], args.scratch, stubs, args.build_python,
                                args.relax)) is None:
            shutil.copy2(args.scratch / slug / ".failed", args.pool / f"{slug}.notes")
            print(f"{repo}: FAILED (see {slug}.notes)", flush=True)
        else:
            fetched[repo] = got
    if args.download_only:
        return
    versions = {**newest(args.scratch), **{n: Version(v) for n, v in KNOWN.items()}}
    chosen = {repo: select(reqs, notes, args.scratch / repo.replace("/", "+"), versions,
                           args.cap_mib, frozenset(row_imports(rows[repo])))
              for repo, (reqs, notes) in fetched.items()}
    groups = split(chosen, args.max_mib)
    for number, group in enumerate(groups, 1):
        pool = args.pool if len(groups) == 1 else args.pool / str(number)
        if pool != args.pool:
            shutil.rmtree(pool, ignore_errors=True)
            pool.mkdir()
        for repo in group:
            where[repo] = str(pool.relative_to(args.pool))
            write(rows[repo], *fetched[repo], chosen[repo], pool)
            size = sum(w.stat().st_size for w in chosen[repo]) / MIB
            print(f"{repo}: {pool.name}, {len(chosen[repo])} wheels, {size:.1f} MiB", flush=True)
        used = {w.name for repo in group for w in chosen[repo]}
        for stale in pool.glob("*.whl"):
            if stale.name not in used:
                stale.unlink()
        total = sum(w.stat().st_size for w in pool.glob("*.whl")) / MIB
        print(f"POOL {pool}: {total:.1f} MiB, {' '.join(group)}", flush=True)
    # which pool holds each repository's wheels and lists ('.': POOL itself), or 'failed'
    (args.pool / "pools.txt").write_text("".join(f"{r} {w}\n" for r, w in where.items()))


if __name__ == "__main__":
    main()
