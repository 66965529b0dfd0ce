"""The GPU machine's tools for the real repositories (``tests/realruns/gpu_repos.py``,
``gpu_wheels.py``, ``gpu_pack.py``, ``docker_local.py``): the parts that decide what a record
holds and how a stand-in maker runs there, checked here without a GPU."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import checkout_imports
import docker_local
import gpu_pack
import gpu_repos
import gpu_wheels
import pytest
from support import breakage
from table import ENVIRONMENTS

HERE = Path(__file__).resolve().parent / "realruns"


def test_a_pass_loses_its_tails_and_a_failure_keeps_their_end() -> None:
    passed = {"tier": "c3", "status": "passed", "stdout_tail": "x" * 10, "stderr_tail": "y"}
    failed = {"tier": "c3", "status": "failed", "stdout_tail": "a" * 5000 + "END",
              "stderr_tail": ""}
    assert gpu_repos.slim(passed) == {"tier": "c3", "status": "passed"}
    kept = gpu_repos.slim(failed)
    assert kept["stdout_tail"].endswith("END")
    assert len(kept["stdout_tail"]) == gpu_repos.TAIL_CHARS
    assert "stderr_tail" not in kept


def test_a_row_without_a_bundle_gets_absent_stages_not_a_crash(tmp_path: Path) -> None:
    verdicts = gpu_repos.official("owner/none", tmp_path, tmp_path / "bundles", sys.executable)
    assert set(verdicts) == set(gpu_repos.OFFICIAL_STAGES)
    assert {v["status"] for v in verdicts.values()} == {"absent"}
    assert "no bundle" in verdicts["cuda"]["why"]


def test_a_rows_built_sdists_are_pinned_in_its_requirements(tmp_path: Path) -> None:
    row = next(r for r in ENVIRONMENTS if r.sdists and all("://" not in s for s in r.sdists))
    gpu_wheels.write(row, ["einops"], [], [], tmp_path)
    lines = (tmp_path / f"{row.repo.replace('/', '+')}.req").read_text().splitlines()
    assert lines[0] == "einops"
    assert set(row.sdists) <= set(lines)
    url_rows = [r for r in ENVIRONMENTS if any("://" in s for s in r.sdists)]
    for url_row in url_rows:
        gpu_wheels.write(url_row, [], [], [], tmp_path)
        text = (tmp_path / f"{url_row.repo.replace('/', '+')}.req").read_text()
        assert "://" not in text


def test_mirror_packs_unpack_where_the_stand_ins_read_them(tmp_path: Path,
                                                           monkeypatch) -> None:
    source = tmp_path / "src"
    source.mkdir()
    subprocess.run(["git", "init", "-q", str(source)], check=True)
    (source / "metrics").mkdir()
    (source / "metrics" / "bleu.py").write_text("BLEU = 1\n")
    subprocess.run(["git", "-C", str(source), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(source), "-c", "user.name=t", "-c", "user.email=t@t",
                    "commit", "-qm", "m"], check=True)
    commit = subprocess.run(["git", "-C", str(source), "rev-parse", "HEAD"], check=True,
                            capture_output=True, text=True).stdout.strip()
    monkeypatch.setattr(gpu_pack, "MIRROR", tmp_path / "mirror")
    (tmp_path / "mirror" / "owner+metrics").mkdir(parents=True)
    (tmp_path / "mirror" / "owner+metrics" / "repo").symlink_to(source)
    packs = tmp_path / "packs" / "mirror"
    gpu_pack.pack(packs, "owner/metrics", commit)
    monkeypatch.setattr(gpu_repos, "WORK", tmp_path / "work")
    monkeypatch.delenv("REB_MIRROR", raising=False)
    gpu_repos.mirrors(packs)
    home = Path(os.environ["REB_MIRROR"])
    shown = subprocess.run(["git", "-C", str(home / "owner+metrics" / "repo"), "show",
                            f"{commit}:metrics/bleu.py"], capture_output=True, text=True,
                           check=True).stdout
    assert shown == "BLEU = 1\n"


def run_local(*args: str, cwd: Path) -> str:
    return subprocess.run([sys.executable, str(HERE / "docker_local.py"), "run", "--rm",
                           "--network", "none", *args], cwd=cwd, capture_output=True,
                          text=True, check=True).stdout


def test_docker_local_runs_in_the_working_folder_it_is_given(tmp_path: Path) -> None:
    work = tmp_path / "w"
    work.mkdir()
    said = run_local("-w", str(work), "-e", "REB_X=1", "--entrypoint", sys.executable,
                     "local", "-c", "import os; print(os.getcwd(), os.environ['REB_X'])",
                     cwd=tmp_path)
    assert said.split() == [str(work), "1"]


def test_docker_local_starts_in_the_images_workdir_when_no_folder_is_named(
        tmp_path: Path) -> None:
    expected = docker_local.IMAGE_WORKDIR if Path(docker_local.IMAGE_WORKDIR).is_dir() else str(
        tmp_path)
    said = run_local("--entrypoint", sys.executable, "local", "-c",
                     "import os; print(os.getcwd())", cwd=tmp_path)
    assert said.strip() == str(Path(expected).resolve())


def test_a_dependency_with_no_wheel_is_named_for_building_but_a_rows_own_pin_is_not() -> None:
    said = ("ERROR: Could not find a version that satisfies the requirement crcmod>=1.7 "
            "(from oss2) (from versions: none)\nERROR: No matching distribution found for "
            "crcmod>=1.7")
    assert gpu_wheels.sdist_dependency(said, ["funasr>=1.1.3"]) == "crcmod>=1.7"
    assert gpu_wheels.sdist_dependency(said, ["crcmod"]) is None
    assert gpu_wheels.sdist_dependency("ERROR: No matching distribution found for x==1",
                                       ["y"]) is None


def fake_wheel(folder: Path, name: str, size: int, requires: tuple[str, ...] = ()) -> None:
    """A wheel of about ``size`` bytes (random, so compression keeps it) requiring
    ``requires``, written into ``folder``."""
    file_name, data = breakage.wheel(name, "1.0", {f"{name}/blob.bin": os.urandom(size)},
                                     requires=requires)
    (folder / file_name).write_bytes(data)


def test_a_wheel_left_out_over_the_cap_takes_its_dependents_and_dev_tools_go_first(
        tmp_path: Path) -> None:
    mib = 1 << 20
    fake_wheel(tmp_path, "zzbotocore", 3 * mib)
    fake_wheel(tmp_path, "zzboto", 10, ("zzbotocore",))
    fake_wheel(tmp_path, "zzsmall", 10)
    fake_wheel(tmp_path, "ruff", 1 * mib)
    notes: list[str] = []
    kept = gpu_wheels.select(["zzboto", "zzsmall", "ruff"], notes, tmp_path, {}, cap=2.5)
    assert [gpu_wheels.project(w) for w in kept] == ["ruff", "zzsmall"]
    assert notes[0].startswith("left out (over 2.5 MiB): zzbotocore-")  # alone over the cap
    assert "zzboto-1.0" in notes[1]
    notes = []
    kept = gpu_wheels.select(["zzboto", "zzsmall", "ruff"], notes, tmp_path, {}, cap=3.5)
    assert [gpu_wheels.project(w) for w in kept] == ["zzboto", "zzbotocore", "zzsmall"]
    assert notes[0].startswith("left out (over 3.5 MiB): ruff-")


def test_what_the_checkout_imports_is_left_out_last_and_a_wheel_over_the_cap_first(
        tmp_path: Path) -> None:
    """F5-TTS's trainer module imports ``wandb`` (20 MiB), SenseVoice's maker ``funasr``
    (which requires ``jieba``): the cap left them out before smaller wheels nothing imports,
    and those rows stopped before their own code."""
    mib = 1 << 20
    fake_wheel(tmp_path, "zzwandb", 2 * mib)
    fake_wheel(tmp_path, "zzfunasr", 10, ("zzjieba",))
    fake_wheel(tmp_path, "zzjieba", 1 * mib)
    fake_wheel(tmp_path, "zzunused", 1 * mib)
    fake_wheel(tmp_path, "zzhuge", 5 * mib)
    reqs = ["zzwandb", "zzfunasr", "zzunused", "zzhuge"]
    notes: list[str] = []
    kept = gpu_wheels.select(reqs, notes, tmp_path, {}, cap=3.5,
                             imports=frozenset({"zzwandb", "zzfunasr", "zzhuge"}))
    assert [gpu_wheels.project(w) for w in kept] == ["zzfunasr", "zzjieba", "zzwandb"]
    assert notes[0].startswith("left out (over 3.5 MiB): zzhuge-")  # never fits: first
    assert "zzunused" in notes[1]


def test_the_imports_of_a_checkout_and_the_names_a_wheel_provides(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "train.py").write_text("import wandb.sdk\nfrom .local import x\n"
                                   "def f():\n    from funasr import AutoModel\n")
    (repo / "broken.py").write_text("def (:\n")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "add", "."], check=True)
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t",
                    "commit", "-qm", "x"], check=True)
    head = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], check=True,
                          capture_output=True, text=True).stdout.strip()
    maker = tmp_path / "standin_Z.py"
    maker.write_text("import mlx.data\n")
    assert checkout_imports.imported(repo, head, [maker]) == {"wandb", "funasr", "mlx"}
    assert checkout_imports.imported(tmp_path / "nowhere", head) == set()
    fake_wheel(tmp_path, "zzpkg", 10)
    [whl] = tmp_path.glob("zzpkg-*.whl")
    assert checkout_imports.provides(whl) == {"zzpkg"}


def test_docker_local_refuses_a_named_working_folder_that_does_not_exist(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, str(HERE / "docker_local.py"), "run", "-w",
                           str(tmp_path / "absent"), "--entrypoint", sys.executable, "local",
                           "-c", "print('ran')"], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode != 0
    assert "ran" not in done.stdout


def test_a_row_holding_numpy_below_2_takes_its_own_build_of_what_needs_numpy_2(
        tmp_path: Path) -> None:
    """ml-mdm pins ``numpy<2``: the machine's SciPy (1.17+, ``numpy>=2.0``), imported by its
    scikit-learn under transformers, stopped the row's stand-in maker at ``np.long``."""
    notes: list[str] = []
    assert gpu_wheels.numpy1_builds(["numpy<2", "einops"], notes) == [
        "numpy<2", "einops", "scipy"]
    assert notes == ["added scipy: the machine's build needs numpy 2, the row holds numpy "
                     "below 2"]
    assert gpu_wheels.numpy1_builds(["numpy<2", "scipy<1.12"], []) == ["numpy<2", "scipy<1.12"]
    for reqs in (["numpy"], ["numpy>=1.24"], ["einops"], ["numpy<3"]):
        assert gpu_wheels.numpy1_builds(reqs, []) == reqs
    fake_wheel(tmp_path, "scipy", 10)
    fake_wheel(tmp_path, "numpy", 10)
    versions = {"scipy": gpu_wheels.Version("1.16.3"), "numpy": gpu_wheels.Version("2.5.2")}
    kept = gpu_wheels.select(["numpy<2", "scipy"], [], tmp_path, versions, cap=5)
    assert [gpu_wheels.project(w) for w in kept] == ["numpy", "scipy"]
    kept = gpu_wheels.select(["numpy", "scipy"], [], tmp_path, versions, cap=5)
    assert kept == []  # the machine's own builds serve a row that takes NumPy 2


def test_a_row_holding_numpy_below_2_runs_with_transformers_off_jax_and_tensorflow(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The GPU machine's JAX is built for NumPy 2 and transformers imports it where it finds
    it: ml-mdm's stand-in maker stopped in ``jaxlib`` under the row's ``numpy<2``."""
    monkeypatch.setattr(gpu_repos, "WORK", tmp_path / "work")
    for key in gpu_repos.NUMPY1_ENV:  # set, then removed: the test's end restores either
        monkeypatch.setenv(key, "unset")
        monkeypatch.delenv(key)
    pool = tmp_path / "pool"
    pool.mkdir()
    (pool / "o+pinned.req").write_text("# a comment\nnumpy<2\neinops\n")
    (pool / "o+free.req").write_text("numpy\n")
    _, how = gpu_repos.environment("o/free", tmp_path, pool)
    assert "USE_FLAX" not in how and "USE_FLAX" not in os.environ
    _, how = gpu_repos.environment("o/pinned", tmp_path, pool)
    assert how.endswith("; USE_FLAX=0 USE_TF=0")
    assert os.environ["USE_FLAX"] == "0" and os.environ["USE_TF"] == "0"
