"""Assets and shim mounting: the cache, the fetchers, the missing-asset gate, collection.

Everything here is offline: synthetic and repository assets are made by our
own code, ``url`` assets come from an http.server on 127.0.0.1, and the tiers
run on ``local://`` through pytester.  One container test shows the view and
a shim folder mounted read-only in a real container.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path
from typing import Any

import pytest
from support.minirepo import git_checkout, head

import pytest_reb
from pytest_reb.assets import fetchers
from pytest_reb.assets.cache import VIEW_MANIFEST, AssetCache
from pytest_reb.assets.fetchers import AssetError
from pytest_reb.assets.view import needed, references
from pytest_reb.pyramid.shims import shim_dirs, with_shim
from pytest_reb.spec import Asset, Repo, Run
from pytest_reb.targets import LocalTarget

ROOT = Path(__file__).resolve().parents[1]
REPOS = ROOT / "repos"
#: The official release's facts, kept in the project (the file's header names the source).
FACTS = ROOT / "tests" / "data" / "reference" / "official_facts.toml"
#: How the note of pytest-reb's addition to a module's assets begins (what the official stage
#: downloaded at run time; tests/test_repos_denominators.py checks them).
ADDITION = "pytest-reb's addition (not fetched by the official prepare"
#: The paths a reference note names under ``{assets}``.
NOTE_PATH = re.compile(r"\{assets\}/([^\s,;:)'\"{}]*)")


def repo_module(name: str) -> Repo:
    import importlib.util

    path = REPOS / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"_reb_assets_test.{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.repo  # type: ignore[no-any-return]


def all_repos() -> list[Repo]:
    return [repo_module(p.stem) for p in sorted(REPOS.glob("test_*.py"))]




# --------------------------------------------------------------------------- the 44 repositories


def test_every_asset_of_the_44_has_a_place() -> None:
    """Each declared asset has a destination under {assets}; exactly the synthetic ones declare
    their content (spelled out, or the setup step that makes it)."""
    repos = all_repos()
    declared = {(r.name, a.name): (r, a) for r in repos for a in r.assets}
    assert len(declared) >= 80
    for (name, _), (_, asset) in declared.items():
        assert asset.dest.strip("/"), (name, asset.name)
        assert not asset.dest.startswith("/") and ".." not in asset.dest
        assert (asset.synthetic is not None) == (asset.source == "synthetic"), (name, asset.name)
        if asset.synthetic is not None:
            assert (asset.synthetic.text is None) == bool(asset.synthetic.made_by), asset.name


def test_optional_assets_are_the_ones_the_notes_call_unused() -> None:
    for repo in all_repos():
        for asset in repo.assets:
            if asset.optional:
                assert any(w in asset.note for w in ("not read", "not used", "not essential",
                                                     "recorded as")), (repo.name, asset.name)


def test_layouts_agree_with_the_reference_notes() -> None:
    """Where a note names one place for an asset, the layout puts it there or inside it."""
    facts = tomllib.loads(FACTS.read_text())["repo"]
    for fact in facts:
        repo = repo_module("test_" + "__".join(
            "".join(c if c.isalnum() or c == "_" else "_" for c in part)
            for part in fact["name"].split("/")))
        official = [a for a in repo.assets if not a.note.startswith(ADDITION)]
        for ref, asset in zip(fact.get("assets", []), official, strict=True):
            named = [p.rstrip(".") for p in NOTE_PATH.findall(
                f"{ref.get('path', '')} {ref['note']}")]
            if not named:
                continue
            dest = asset.dest.strip("/")
            assert any(dest == n.strip("/") or dest.startswith(n.strip("/") + "/") or
                       n.strip("/").startswith(dest + "/") or n.strip("/").startswith(dest)
                       for n in named), (fact["name"], asset.name, dest, named)


def test_what_each_stage_needs() -> None:
    dav2 = repo_module("test_DepthAnything__Depth_Anything_V2")
    assert dav2.cpu is not None
    assert [a.name for a in needed(dav2, dav2.cpu)] == [
        "demo_image", "metric_hypersim_vits"]
    lca = repo_module("test_feifeibear__long_context_attention")
    assert lca.single_gpu is not None and needed(lca, lca.single_gpu) == []
    mmm = repo_module("test_kyegomez__MultiModalMamba")  # recorded, never read
    assert mmm.cpu is not None and needed(mmm, mmm.cpu) == []
    lihe = repo_module("test_LiheYoung__Depth_Anything")  # the model comes through HF_HOME
    assert lihe.cpu is not None
    assert {a.name for a in needed(lihe, lihe.cpu)} == {"demo1", "depth_anything_vits14"}
    planner = repo_module("test_ZhengYinan_AIR__Diffusion_Planner")  # made by its setup step
    assert planner.cpu is not None
    assert needed(planner, planner.cpu) == []
    evo = repo_module("test_InternLM__InternEvo")  # named only by the config its setup writes
    assert evo.single_gpu is not None
    assert [a.name for a in needed(evo, evo.single_gpu)] == [
        "alpaca_sample", "internlm2_tokenizer"]


def test_references() -> None:
    run = Run(["{python}", "x.py", "--data={assets}/dataset/a.json", "{repo}/benchmark_assets"],
              env={"HF_HOME": "{assets}/cache/hf", "PYTHONPATH": "{assets}/lib:{repo}"},
              cwd="{assets}/dataset/mnist")
    assert references(run) == {"dataset/a.json", "", "cache/hf", "lib", "dataset/mnist"}


# --------------------------------------------------------------------------- the cache


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_synthetic_asset_content_addressed_and_linked(tmp_path: Path) -> None:
    tgate = repo_module("test_HaozheLiu_ST__T_GATE")
    cache = AssetCache(tmp_path / "cache")
    results = cache.prepare(tgate, network=False)
    assert [(r.asset.name, r.status) for r in results] == [("prompts", "ready")]
    view_file = cache.view(tgate) / "dataset" / "prompts.txt"
    assert view_file.read_text() == (
        "Astronaut in a jungle, cold color palette, muted colors, detailed, 8k\n")
    obj = cache.object_path(digest(view_file))
    assert obj.is_file() and os.path.samefile(obj, view_file)
    assert not os.access(obj, os.W_OK) or os.geteuid() == 0
    assert obj.stat().st_mode & 0o777 == 0o444
    manifest = json.loads(cache.manifest_path(tgate).read_text())
    entry = manifest["assets"]["prompts"]
    assert entry["status"] == "ready" and entry["files"] == {"dataset/prompts.txt": obj.name}
    assert json.loads((cache.view(tgate) / VIEW_MANIFEST).read_text()) == manifest
    # the hub model is left alone without the network, and named as missing
    missing = cache.missing(tgate, tgate.assets)
    assert [(a.name, why) for a, why in missing] == [("pixart_alpha", "not prepared")]
    # a second preparation keeps what is ready; a file gone from the view is not ready
    assert [r.status for r in cache.prepare(tgate, network=False)] == ["kept"]
    view_file.unlink()
    ready, why = cache.state(tgate, tgate.assets[0])
    assert not ready and "missing from the view" in why


def test_generated_files(tmp_path: Path) -> None:
    lmcache = repo_module("test_LMCache__LMCache")
    cache = AssetCache(tmp_path)
    cache.prepare(lmcache, network=False)
    text = (cache.view(lmcache) / "model" / "lmcache_standalone_config.yaml").read_text()
    assert text == ("chunk_size: 16\nlocal_cpu: true\nmax_local_cpu_size: 0.1\n"
                    "internal_api_server_enabled: false\n")


def test_unimplemented_synthetic_asset_says_which_and_why(tmp_path: Path) -> None:
    planner = repo_module("test_ZhengYinan_AIR__Diffusion_Planner")
    cache = AssetCache(tmp_path)
    asset = next(a for a in planner.assets if a.name == "synthetic_sample")
    [result] = cache.prepare(planner, network=False, only=[asset])
    assert result.status == "failed"
    assert "synthetic asset 'synthetic_sample' is not implemented" in result.detail
    assert "setup step" in result.detail
    ready, why = cache.state(planner, asset)
    assert not ready and why.startswith("preparing it failed: synthetic asset 'synthetic_")


def test_nano_vllm_prompts_are_what_its_driver_reads(tmp_path: Path) -> None:
    nano = repo_module("test_GeeeekExplorer__nano_vllm")
    cache = AssetCache(tmp_path)
    [result] = [r for r in cache.prepare(nano, network=False) if r.asset.name == "prompts"]
    assert result.status == "ready", result.detail
    doc = json.loads((cache.view(nano) / "dataset" / "prompts.json").read_text())
    assert doc["format"] == "prompts_v1" and doc["prompts"] == ["introduce yourself"]


def test_repository_asset_from_a_local_checkout(tmp_path: Path) -> None:
    dav2 = repo_module("test_DepthAnything__Depth_Anything_V2")
    checkout = tmp_path / "checkout"
    (checkout / "assets" / "examples").mkdir(parents=True)
    (checkout / "assets" / "examples" / "demo01.jpg").write_bytes(b"\xff\xd8jpeg")
    cache = AssetCache(tmp_path / "cache")
    copy = fetchers.checkout_copy(LocalTarget(gpus=[]), str(checkout))
    [result] = cache.prepare(dav2, network=False, copy=copy)
    assert result.status == "ready", result.detail
    assert (cache.view(dav2) / "dataset" / "images" / "demo01.jpg").read_bytes() == b"\xff\xd8jpeg"
    # a folder asset: its contents, not the folder, go to the place
    c2g = repo_module("test_c2g_dev__city2graph")
    (checkout / "tests" / "data").mkdir(parents=True)
    for name in ("sample_buildings.geojson", "sample_segments.geojson", "other.txt"):
        (checkout / "tests" / "data" / name).write_text(name)
    cache.prepare(c2g, network=False, copy=copy)
    folder = cache.view(c2g) / "dataset" / "city2graph_sample_geojson"
    got = sorted(p.name for p in folder.iterdir())
    assert got == ["sample_buildings.geojson", "sample_segments.geojson"]


def test_repository_asset_without_a_target_fails_clearly(tmp_path: Path) -> None:
    dav2 = repo_module("test_DepthAnything__Depth_Anything_V2")
    [result] = AssetCache(tmp_path).prepare(dav2, network=False)
    assert result.status == "failed" and "cannot copy assets/examples/demo01.jpg" in result.detail


def url_repo(base: str, **kw: Any) -> Repo:
    return Repo("me/urls", commit="0" * 40, assets=[Asset("data", "dataset", "url", **kw)])


def test_url_asset_from_a_local_server(tmp_path: Path, served: tuple[str, Path]) -> None:
    base, www = served
    (www / "sub").mkdir()
    (www / "sub" / "a.bin").write_bytes(b"A" * 1000)
    (www / "sub" / "b.txt").write_text("bee")
    repo = Repo("me/urls", commit="0" * 40, assets=[
        Asset("pair", "dataset", "url", url=f"{base}/sub/", files=["a.bin", "b.txt"],
              dest="dataset/pair", note="placed under {assets}/dataset/pair"),
        Asset("one", "model", "url", url=f"{base}/sub/a.bin?download=true",
              dest="model/weights.bin", note="saved as {assets}/model/weights.bin")])
    cache = AssetCache(tmp_path / "cache")
    results = cache.prepare(repo, network=True)
    assert [r.status for r in results] == ["ready", "ready"], [r.detail for r in results]
    view = cache.view(repo)
    assert (view / "dataset" / "pair" / "a.bin").read_bytes() == b"A" * 1000
    assert (view / "dataset" / "pair" / "b.txt").read_text() == "bee"
    assert (view / "model" / "weights.bin").read_bytes() == b"A" * 1000
    # one object for the two equal files
    assert os.path.samefile(view / "model" / "weights.bin", view / "dataset" / "pair" / "a.bin")


def test_url_archive_is_extracted_safely(tmp_path: Path, served: tuple[str, Path]) -> None:
    base, www = served
    with zipfile.ZipFile(www / "set.zip", "w") as archive:
        archive.writestr("set/one.txt", "1")
        archive.writestr("set/deep/two.txt", "2")
    repo = Repo("me/zip", commit="0" * 40, assets=[
        Asset("set", "dataset", "url", url=f"{base}/set.zip", dest="dataset/set", extract=True,
              note="at {assets}/dataset/set")])
    cache = AssetCache(tmp_path / "cache")
    [result] = cache.prepare(repo, network=True)
    assert result.status == "ready", result.detail
    view = cache.view(repo) / "dataset" / "set"
    assert (view / "one.txt").read_text() == "1"
    assert (view / "deep" / "two.txt").read_text() == "2"
    bad = io.BytesIO()
    with tarfile.open(fileobj=bad, mode="w") as tar:
        info = tarfile.TarInfo("../escape.txt")
        info.size = 1
        tar.addfile(info, io.BytesIO(b"x"))
    bad.seek(0)
    with pytest.raises(AssetError, match="outside"):
        fetchers._untar(bad, tmp_path / "into")
    assert not (tmp_path / "escape.txt").exists()


def test_url_failure_is_recorded(tmp_path: Path, served: tuple[str, Path]) -> None:
    base, _ = served
    repo = url_repo(base, url=f"{base}/absent.bin", dest="dataset/absent.bin",
                    note="at {assets}/dataset/absent.bin")
    cache = AssetCache(tmp_path)
    [result] = cache.prepare(repo, network=True)
    assert result.status == "failed" and "404" in result.detail
    assert cache.missing(repo, repo.assets)[0][1].startswith("preparing it failed: download of")


def test_network_assets_need_the_prepare_step(tmp_path: Path) -> None:
    dav2 = repo_module("test_DepthAnything__Depth_Anything_V2")
    with pytest.raises(AssetError, match="--reb-prepare"):
        fetchers.fetch(dav2.assets[1], tmp_path, network=False)


def test_hub_assets_need_huggingface_hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "huggingface_hub", None)
    dav2 = repo_module("test_DepthAnything__Depth_Anything_V2")
    with pytest.raises(AssetError, match="needs huggingface_hub"):
        fetchers.fetch(dav2.assets[1], tmp_path, network=True)


def test_git_asset_from_a_local_repository(tmp_path: Path) -> None:
    origin = tmp_path / "origin"
    origin.mkdir()
    (origin / "Event.npy").write_bytes(b"npy")
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    for cmd in (["git", "init", "-q"], ["git", "add", "."], ["git", "commit", "-qm", "x"]):
        subprocess.run(cmd, cwd=origin, check=True, env=env)
    repo = Repo("me/git", commit="0" * 40, assets=[
        Asset("events", "dataset", "git", url=f"file://{origin}", files=["Event.npy"],
              dest="dataset/events/", note="copied to {assets}/dataset/events/")])
    cache = AssetCache(tmp_path / "cache")
    [result] = cache.prepare(repo, network=True)
    assert result.status == "ready", result.detail
    assert (cache.view(repo) / "dataset" / "events" / "Event.npy").read_bytes() == b"npy"


def test_ingest_a_stand_in(tmp_path: Path) -> None:
    dav2 = repo_module("test_DepthAnything__Depth_Anything_V2")
    made = tmp_path / "random.pth"
    made.write_bytes(b"weights")
    cache = AssetCache(tmp_path / "cache")
    cache.ingest(dav2, "metric_hypersim_vits", made, origin="stand-in: random init")
    view_file = cache.view(dav2) / "model" / "depth_anything_v2_metric_hypersim_vits.pth"
    assert view_file.read_bytes() == b"weights"
    assert cache.state(dav2, dav2.assets[1]) == (True, "")
    entry = cache.manifest(dav2)["assets"]["metric_hypersim_vits"]
    assert entry["origin"] == "stand-in: random init"
    with pytest.raises(AssetError, match="declares no asset"):
        cache.ingest(dav2, "nope", made, origin="x")


# --------------------------------------------------------------------------- the tiers (pytester)


def checkout(pytester: pytest.Pytester) -> str:
    """The run's checkout (a real git one: the integrity verdict fails closed on a plain
    folder), made on first use; returns its commit, which the module pins."""
    root = pytester.path / "checkout"
    if not (root / ".git").is_dir():
        return git_checkout(root, {"README": "assets\n"})
    return head(root)


def stage_module(pytester: pytest.Pytester, url: str, *, shim_dir: str | None = None) -> str:
    """A repository module whose CPU stage lists what it finds at {assets}."""
    shim = f", shim_dir={shim_dir!r}" if shim_dir else ""
    return f"""
from pytest_reb import Asset, Repo, Run, hf_asset

repo = Repo(
    "me/assets", commit="{checkout(pytester)}", imports_total=1,
    assets=[
        Asset("table", "dataset", "url", url="{url}", dest="dataset/t.csv",
              note="saved as {{assets}}/dataset/t.csv"),
        hf_asset("net", "me/net", files=["w.bin"], dest="model/w.bin",
                 note="at {{assets}}/model/w.bin"),
    ],
    cpu=Run(["{{python}}", "-c",
             "import os, sys; open(os.path.join(sys.argv[1], 'RAN'), 'w').close(); "
             "print(open(sys.argv[2]).read()); print('PATH0', os.environ.get('PYTHONPATH', ''))",
             "{{out}}/..", "{{assets}}/dataset/t.csv", "{{assets}}/model/w.bin"],
            timeout=60{shim}),
)
"""


def run_local(pytester: pytest.Pytester, cache: Path, *extra: str) -> pytest.RunResult:
    checkout(pytester)
    return pytester.runpytest_subprocess(
        "--rootdir", str(pytester.path), "--reb-host", "local://", "--reb-python",
        sys.executable, "--reb-repo-dir", str(pytester.path / "checkout"),
        "--reb-repo", "me/assets",
        "--reb-outdir", str(pytester.path / "reports"), "--reb-assets", str(cache),
        "-p", "no:cacheprovider", "-m", "c1", "-rA", *extra)


def c1_outcome(pytester: pytest.Pytester) -> dict[str, Any]:
    [log] = sorted((pytester.path / "reports").glob("*/outcomes.jsonl"))
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    return next(r for r in rows if r["tier"] == "c1")


def test_missing_assets_fail_the_tier_without_running(pytester: pytest.Pytester,
                                                     tmp_path: Path) -> None:
    pytester.makepyfile(test_assets_repo=stage_module(pytester, "http://127.0.0.1:9/t.csv"))
    result = run_local(pytester, tmp_path / "cache")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*C1 data: missing asset(s) in the asset cache*"
                                 "dataset 'table' (url http://127.0.0.1:9/t.csv -> "
                                 "{assets}/dataset/t.csv): not prepared; "
                                 "model 'net' (hf me/net -> {assets}/model/w.bin): not prepared*"
                                 "--reb-prepare*"])
    outcome = c1_outcome(pytester)
    assert outcome["category"] == "data" and outcome["command"] is None
    assert outcome["evidence"]["missing_assets"] == ["table", "net"]
    assert outcome["diagnosis"][0]["class"] == "missing_asset"
    assert not list(pytester.path.rglob("RAN")), "the stage must not run"


def test_missing_model_gives_the_model_category(pytester: pytest.Pytester, tmp_path: Path,
                                                served: tuple[str, Path]) -> None:
    base, www = served
    (www / "t.csv").write_text("a,b\n")
    pytester.makepyfile(test_assets_repo=stage_module(pytester, f"{base}/t.csv"))
    result = run_local(pytester, tmp_path / "cache", "--reb-prepare")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*reb prepare*", "me/assets: ready  dataset   table: 1 file(s)*",
                                 "me/assets: failed model     net: hf asset 'net' (me/net) "
                                 "needs huggingface_hub*",
                                 "*C1 model: missing asset(s)*model 'net'*preparing it failed*"])
    assert c1_outcome(pytester)["category"] == "model"


def test_prepared_assets_are_seen_at_assets(pytester: pytest.Pytester, tmp_path: Path,
                                            served: tuple[str, Path]) -> None:
    """--reb-prepare fetches the url asset; the model comes from a cache filled elsewhere."""
    base, www = served
    (www / "t.csv").write_text("a,b\n1,2\n")
    module = stage_module(pytester, f"{base}/t.csv")
    pytester.makepyfile(test_assets_repo=module)
    namespace: dict[str, Any] = {}
    exec(compile(module, "m", "exec"), namespace)
    cache = AssetCache(tmp_path / "cache")
    weights = tmp_path / "w.bin"
    weights.write_bytes(b"w")
    cache.ingest(namespace["repo"], "net", weights, origin="test stand-in")
    result = run_local(pytester, tmp_path / "cache", "--reb-prepare")
    result.assert_outcomes(passed=1)
    outcome = c1_outcome(pytester)
    assert "a,b\n1,2" in outcome["stdout_tail"]
    view = str(cache.view(namespace["repo"]))
    assert view in " ".join(outcome["command"])
    assert outcome["evidence"]["assets"] == {"table": f"{base}/t.csv", "net": "test stand-in"}
    # a second run needs no network: the cache holds both
    result = run_local(pytester, tmp_path / "cache")
    result.assert_outcomes(passed=1)


def test_shim_folder_comes_first_on_pythonpath(pytester: pytest.Pytester, tmp_path: Path,
                                               served: tuple[str, Path],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """First, and in front of the environment's own PYTHONPATH, not instead of it: the
    Diffusion-Planner run on the GPU machine lost its /tmp/site (wandb, mmengine) to the
    shim's PYTHONPATH before (docs/real-runs.md)."""
    monkeypatch.setenv("PYTHONPATH", "/env/own/site")
    base, www = served
    (www / "t.csv").write_text("x\n")
    shim = tmp_path / "shim"
    shim.mkdir()
    pytester.makepyfile(test_assets_repo=stage_module(pytester, f"{base}/t.csv",
                                                      shim_dir=str(shim)))
    namespace: dict[str, Any] = {}
    exec(compile(stage_module(pytester, f"{base}/t.csv"), "m", "exec"), namespace)
    cache = AssetCache(tmp_path / "cache")
    (tmp_path / "w.bin").write_bytes(b"w")
    cache.ingest(namespace["repo"], "net", tmp_path / "w.bin", origin="stand-in")
    result = run_local(pytester, tmp_path / "cache", "--reb-prepare")
    result.assert_outcomes(passed=1)
    [line] = [ln for ln in c1_outcome(pytester)["stdout_tail"].splitlines()
              if ln.startswith("PATH0 ")]
    assert line.startswith(f"PATH0 {shim}:{SHIMLIB}:")
    assert line.endswith(":/env/own/site")  # pytester puts its folder before ours


def test_with_shim_keeps_the_rest_once() -> None:
    assert with_shim({"PYTHONPATH": "/r/benchmark_scripts:/r"}, "/r/benchmark_scripts") \
        == {"PYTHONPATH": "/r/benchmark_scripts:/r"}
    assert with_shim({"A": "1"}, "/s") == {"A": "1", "PYTHONPATH": "/s"}
    assert with_shim({"A": "1"}, None) == {"A": "1"}
    assert with_shim({"PYTHONPATH": "/lib:/r"}, "/s", "/lib") == {"PYTHONPATH": "/s:/lib:/r"}


# --------------------------------------------------------------------------- our shims


#: Our shims' shared library, which the target puts right after a shim folder.
SHIMLIB = Path(pytest_reb.__file__).parent / "pyramid" / "shimlib"


def test_shims_of_modules_exist() -> None:
    for repo in all_repos():
        for folder in shim_dirs(repo):
            assert Path(folder).is_dir(), (repo.name, folder)
            assert Path(folder).parent == REPOS / "shims"


# --------------------------------------------------------------------------- collection


def test_collect_only_without_a_target(pytester: pytest.Pytester) -> None:
    """All 264 items, one line saying why they will skip; not 44 errors."""
    result = pytester.runpytest_subprocess(
        "--collect-only", str(REPOS), "--rootdir", str(ROOT), "-p", "no:cacheprovider",
        "--reb-outdir", str(pytester.path / "reports"))
    assert result.ret == 0
    result.stdout.fnmatch_lines(["reb: no target given (--reb-image / --reb-host): "
                                 "tier items will skip", "*264 tests collected*"])
    text = result.stdout.str()
    assert "error" not in text.lower()
    assert text.count("no target given") == 1


# --------------------------------------------------------------------------- a real container


@pytest.mark.container
def test_view_and_shim_mounted_read_only(demo_image: str, tmp_path: Path) -> None:
    from pytest_reb.targets import DockerTarget, Limits

    view = tmp_path / "view"
    (view / "dataset").mkdir(parents=True)
    (view / "dataset" / "x.txt").write_text("asset")
    (view / "cache" / "hf_models" / "net").mkdir(parents=True)
    (view / "cache" / "hf_models" / "net" / "w.pt").write_text("prepared\n")
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "sitecustomize.py").write_text("print('SHIM')\n")
    target = DockerTarget(demo_image, run_id="test-assets", gpus=[], limits=Limits())
    try:
        target.exec(["true"], timeout=30)  # a running container must be replaced by the mount
        seen = target.mount(str(view), "/data/project/repo/benchmark_assets", scratch=("cache",))
        assert seen == "/data/project/repo/benchmark_assets"
        target.mount(str(shim), "/data/project/repo/benchmark_scripts")
        res = target.exec(["cat", f"{seen}/dataset/x.txt"], timeout=30)
        assert (res.exit_code, res.stdout) == (0, "asset")
        res = target.exec(["sh", "-c", f"echo no > {seen}/dataset/x.txt"], timeout=30)
        assert res.exit_code != 0 and "Read-only" in res.stderr
        res = target.exec(["/opt/envs/tinynet/bin/python", "-c", "pass"], timeout=60,
                          env={"PYTHONPATH": "/data/project/repo/benchmark_scripts"})
        assert res.stdout.strip() == "SHIM"
        assert (view / "dataset" / "x.txt").read_text() == "asset"
        # the caches the official commands point into the assets are writable, and private
        res = target.exec(["sh", "-c", f"echo hf > {seen}/cache/hub && cat {seen}/cache/hub"],
                          timeout=30)
        assert (res.exit_code, res.stdout.strip()) == (0, "hf")
        assert [p.name for p in (view / "cache").iterdir()] == ["hf_models"]
        # ... and what prepare put there stays readable beside the run's own files
        res = target.exec(["sh", "-c", f"cat {seen}/cache/hf_models/net/w.pt && "
                           f"echo lock > {seen}/cache/hf_models/net/.lock && ls -a "
                           f"{seen}/cache/hf_models/net"], timeout=30)
        assert res.exit_code == 0, res.output
        assert res.stdout.split() == ["prepared", ".", "..", ".lock", "w.pt"]
        res = target.exec(["sh", "-c", f"echo x > {seen}/cache/hf_models/net/w.pt"], timeout=30)
        assert res.exit_code != 0, "a prepared file itself stays read-only"
        assert not (view / "cache" / "hf_models" / "net" / ".lock").exists()
    finally:
        target.close()


@pytest.mark.container
def test_an_images_own_pythonpath_is_kept_behind_the_shim(demo_image: str,
                                                         docker_client: Any) -> None:
    """An image's ``ENV PYTHONPATH`` is what the environment needs; a shim goes in front of it."""
    from pytest_reb.targets import DockerTarget, Limits

    base = docker_client.containers.create(demo_image, command=["true"])
    try:
        image = base.commit(repository="reb-test-image-env", tag=base.id[:12],
                            changes=["ENV PYTHONPATH=/opt/their/lib"])
    finally:
        base.remove(force=True, v=True)
    target = DockerTarget(image.id, run_id="test-image-env", gpus=[], limits=Limits())
    try:
        assert target.own_env("PYTHONPATH") == "/opt/their/lib"
        assert target.own_env("NOT_SET_ANYWHERE") is None
    finally:
        target.close()
        docker_client.images.remove(image.id, force=True)

