"""Assets: the models, datasets and configs a repository's stages read, prepared on the host.

The official harness ran a prepare step inside each environment that downloaded
or generated what the stages read into ``{repo}/benchmark_assets``.  Here that
step runs on the host, into a content-addressed cache, and the tiers see the
result read-only:

``<cache>/objects/<sha256>``
    every prepared file once, by content, read-only;
``<cache>/views/<owner>__<name>/``
    one folder per repository with the files under the names its stages expect
    (``model/...``, ``dataset/...``), hard links to the objects (copies across
    file systems).  Containers get it read-only at ``{repo}/benchmark_assets``,
    where the official step wrote, so repository-relative paths keep working;
    ``local://`` uses the folder itself;
``<cache>/manifests/<owner>__<name>.json``
    per asset: ready or failed (and why), where it came from, its files and
    their digests.  A copy sits in the view as ``.reb-manifest.json``.

Only ``--reb-prepare`` uses the network (``hf``, ``hf_dataset``,
``modelscope``, ``url``, ``git``).  ``repo`` assets (copied from the checkout
in the target, without running anything there) and ``synthetic`` ones (made
by our own generators) need none and are made whenever a stage needs them.
``--reb-assets DIR`` points at a cache filled elsewhere; ``AssetCache.ingest``
is how a file made by other means (a stand-in checkpoint, a manual download)
becomes an asset.

Before a stage runs, the assets its argv, env and cwd point into must be
ready; otherwise the tier fails without running, with the official category
(``model`` for models and tokenizers, ``data`` for the rest) and a message
naming each missing asset and why.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
import time
import urllib.parse
import urllib.request
import zipfile
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from pytest_reb.spec import Asset, Repo, Run
from pytest_reb.target import DockerTarget, LocalTarget, Target, labels

#: Where the view appears in a container, under the checkout (the official folder).
VIEW_MOUNT = "benchmark_assets"
#: Where a shim folder appears in a container, under the checkout (the official probe folder).
SHIM_MOUNT = "benchmark_scripts"
#: The manifest copy inside each view.
VIEW_MANIFEST = ".reb-manifest.json"
#: Asset kinds whose absence is the official ``model`` category; the rest are ``data``.
MODEL_KINDS = ("model", "tokenizer")
#: Download chunk and the per-request socket timeout of ``url`` assets.
CHUNK = 1 << 20
URL_TIMEOUT = 60.0


class AssetError(Exception):
    """An asset cannot be prepared: one line a person can act on."""


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


def category(asset: Asset) -> str:
    """The official failure category when ``asset`` is missing."""
    return "model" if asset.kind in MODEL_KINDS else "data"


# --------------------------------------------------------------------------- layouts


@dataclass(frozen=True)
class Layout:
    """Where an asset goes in the view, and how it is made from what was fetched.

    ``dest`` is relative to ``{assets}``; ending in ``/`` it is a folder the
    fetched files go into, otherwise a single fetched file lands at ``dest``
    itself when its last part has a suffix, and a folder holds anything else.
    ``extract`` unpacks fetched archives; ``hf_cache`` lays a hub download out
    as a Hugging Face cache (``models--org--name/snapshots/...``) for stages that
    load by hub id; ``rename`` maps fetched file names to the expected ones.
    ``url_paths`` maps a declared file of a ``url`` asset to its path under the
    url when the server's name differs (the file keeps its declared name).
    ``hub_ids`` are the hub repositories a ``hf`` asset whose declared id is a
    pattern stands for at the pinned commit.  ``hub_files`` are the file
    patterns a hub asset that declares no files fetches (the one ``data_dir``
    its stages load, not the whole repository).
    """

    dest: str
    extract: bool = False
    hf_cache: bool = False
    rename: Mapping[str, str] = field(default_factory=dict)
    url_paths: Mapping[str, str] = field(default_factory=dict)
    hub_ids: Sequence[str] = ()
    hub_files: Sequence[str] = ()


#: Layouts the note's first ``{assets}/...`` path does not give (read from each asset's note).
LAYOUTS: dict[tuple[str, str], Layout] = {
    ("FunAudioLLM/FunMusic", "inspiremusic_samples"): Layout(
        "dataset/inspiremusic_samples/"),  # the raw parquet tar; setup slices it
    ("FunAudioLLM/FunMusic", "benchmark_config"): Layout("model/"),  # raw; setup rewrites
    ("FunAudioLLM/SenseVoice", "SenseVoiceSmall"): Layout(  # ModelScope's cache under HOME
        "cache/home/.cache/modelscope/hub/models/iic/SenseVoiceSmall/"),
    ("GeeeekExplorer/nano-vllm", "Qwen3-0.6B"): Layout("model/huggingface/Qwen3-0.6B"),
    ("HaozheLiu-ST/T-GATE", "pixart_alpha"): Layout("cache/hf_home/hub", hf_cache=True),
    ("InternLM/InternEvo", "alpaca_sample"): Layout("dataset/"),  # raw; setup tokenises
    ("KRLabsOrg/LettuceDetect", "ragtruth_mini"): Layout("dataset/ragtruth/"),
    ("LMCache/LMCache", "lmcache_standalone_config"): Layout(
        "model/lmcache_standalone_config.yaml"),
    ("LiheYoung/Depth-Anything", "depth_anything_vits14"): Layout(
        "cache/huggingface/hub", hf_cache=True),
    ("NVIDIA/kvpress", "loogle_shortdep_qa"): Layout(  # HF_DATASETS_CACHE; the shim loads it
        "cache/datasets/reb_hub/simonjegou/loogle/", hub_files=("shortdep_qa/*",)),
    ("NVlabs/Sana", "Sana_600M_1024px"): Layout("model/sana_600m_1024px"),
    ("RingBDStack/SocialED", "Event2012"): Layout("dataset/Event2012/"),
    ("SWivid/F5-TTS", "f5tts_minimal"): Layout("dataset/infer_minimal/ref_audio.wav"),
    ("SWivid/F5-TTS", "F5TTS_v1_Base"): Layout(
        "model/F5TTS_v1_Base/model_1250000.safetensors"),
    ("ZhengYinan-AIR/Diffusion-Planner", "Diffusion-Planner"): Layout("model/"),
    ("alephpi/Texo", "UniMER-Train"): Layout("dataset/UniMER-Train/"),  # raw; setup saves [:1]
    ("alephpi/Texo", "unimernet_tokenizer"): Layout("tokenizer/unimernet_tokenizer"),
    ("apple/ml-aim", "aim-600M_attnprobe"): Layout(
        "model/aim-v1/aim-600M-last/", rename={
            "aim_600m_2bimgs_attnprobe_backbone.pth": "backbone.pth",
            "aim_600m_2bimgs_attnprobe_head_last_layers.pth": "head.pth"}),
    ("emidan19/deep-tempest", "examples_pairs"): Layout("dataset/"),  # raw; setup pairs
    ("emidan19/deep-tempest", "drunet_pretrained"): Layout("model/"),  # as model/download
    ("facebookresearch/sapiens", "sapiens_toy_dataset_min1"): Layout(
        "dataset/sapiens_toy_dataset/"),
    ("flagos-ai/FlagGems", "bert-base-uncased-tokenizer"): Layout(
        "model/google-bert__bert-base-uncased__tokenizer"),
    ("hpcaitech/Open-Sora", "prompts"): Layout("dataset/prompts/"),
    ("hpcaitech/Open-Sora", "Open-Sora-v2"): Layout("model/"),
    ("huggingface/finetrainers", "crush-smol"): Layout("dataset/"),
    ("hustvl/Vim", "coco_2017_val_100"): Layout(  # the url is the tgz; both files sit beside it
        "dataset/coco/", extract=True, url_paths={
            f: f"../{f}" for f in ("val2017_100.tgz", "instances_val2017_100.json")}),
    ("kotaro-kinoshita/yomitoku", "yomitoku_models"): Layout(
        "cache/huggingface/hub", hf_cache=True, hub_ids=(  # the hf_hub_repo values of its configs
            "KotaroKinoshita/yomitoku-text-detector-dbnet-v2",
            "KotaroKinoshita/yomitoku-text-recognizer-parseq-middle-v2",
            "KotaroKinoshita/yomitoku-layout-parser-rtdtrv2-v2",
            "KotaroKinoshita/yomitoku-table-structure-recognizer-rtdtrv2-open-beta")),
    ("kyegomez/VisionMamba", "agorabanner"): Layout("dataset/"),
    ("kyegomez/VisionMamba", "model_config"): Layout("model/model_config.json"),
    ("lightly-ai/lightly-train", "coco128_unlabeled"): Layout(
        "dataset/coco128_unlabeled", extract=True),
    ("meta-pytorch/torchft", "cifar10"): Layout("dataset/cifar10", extract=True),
    ("metavoiceio/metavoice-src", "metavoice-1B-v0.1"): Layout(
        "cache/huggingface/hub", hf_cache=True),
    ("microsoft/renderformer", "example_scenes"): Layout("dataset/"),  # JSONs; setup converts
    ("ogkalu2/comic-translate", "comic-text-and-bubble-detector"): Layout(
        "model/comic-text-and-bubble-detector"),
    ("remsky/Kokoro-FastAPI", "kokoro-v1_0"): Layout("model/v1_0/"),
    ("rllm-team/rllm", "rel-f1"): Layout(  # the stages' setup lays the zips out (relf1_cache.py)
        "cache/dataset/rel-f1/", url_paths={  # declared by their cache names
            f"tasks_{t}.zip": f"tasks/{t}.zip"
            for t in ("driver-dnf", "driver-position", "driver-top3")}),
    ("rllm-team/rllm", "glove-6B-300d"): Layout("cache/huggingface/hub", hf_cache=True),
    ("sgl-project/SpecForge", "sharegpt_train"): Layout(
        "dataset/ShareGPT_Vicuna_unfiltered/"),  # the hub files; setup runs prepare_data.py
    ("thu-pacman/chitu", "tinyshakespeare_sharegpt"): Layout(
        "dataset/", rename={"input.txt": "tinyshakespeare_sharegpt.txt"}),  # setup converts it
    ("yuanze-lin/Olympus", "olympus_min"): Layout("dataset/"),  # Olympus.json; setup cuts it
}

#: Assets the official prepare recorded but no stage reads (each note says so).
OPTIONAL: frozenset[tuple[str, str]] = frozenset({
    ("LMCache/LMCache", "musique_s"),
    ("ZhengYinan-AIR/Diffusion-Planner", "Diffusion-Planner"),
    ("kyegomez/MultiModalMamba", "lena"),
    ("kyegomez/MultiModalMamba", "tiny-random-vit"),
    ("kyegomez/VisionMamba", "agorabanner"),
    ("kyegomez/VisionMamba", "model_config"),
    ("meta-pytorch/torchft", "squeezenet1_0"),
})

_NOTE_PATH = re.compile(r"\{assets\}/([^\s,;:)'\"{}]*)")


def layout(repo: Repo | str, asset: Asset) -> Layout:
    """Where ``asset`` of ``repo`` goes: the table above, else the path its note names."""
    name = repo.name if isinstance(repo, Repo) else repo
    known = LAYOUTS.get((name, asset.name))
    if known is not None:
        return known
    for text in (asset.path or "", asset.note):
        match = _NOTE_PATH.search(text)
        if match and match.group(1).strip("./"):
            return Layout(match.group(1).rstrip("."))
    return Layout(f"{'model' if asset.kind in MODEL_KINDS else 'dataset'}/{asset.name}/")


def optional(repo: Repo, asset: Asset) -> bool:
    return (repo.name, asset.name) in OPTIONAL


# --------------------------------------------------------------------------- what a stage needs

_REF = re.compile(r"(?:\{assets\}|benchmark_assets)(/[^\s'\",:;)\]}]*)?")


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
        if optional(repo, asset):
            continue
        dest = layout(repo, asset).dest.strip("/")
        if any(ref == "" or dest == ref or dest.startswith(ref + "/") or
               ref.startswith(dest + "/") for ref in refs):
            out.append(asset)
    return out


# --------------------------------------------------------------------------- synthetic assets


def _lines(*lines: str) -> Callable[[Path], None]:
    def make(staging: Path) -> None:
        (staging / "out").write_text("".join(f"{line}\n" for line in lines))
    return make


def _yaml(**values: object) -> Callable[[Path], None]:
    def make(staging: Path) -> None:
        (staging / "out").write_text("".join(
            f"{k}: {json.dumps(v)}\n" for k, v in values.items()))
    return make


def _json(value: object) -> Callable[[Path], None]:
    def make(staging: Path) -> None:
        (staging / "out").write_text(json.dumps(value, indent=2) + "\n")
    return make


#: Our own offline generators, one per synthetic asset whose content its note spells out.
SYNTHETIC: dict[tuple[str, str], Callable[[Path], None]] = {
    ("HaozheLiu-ST/T-GATE", "prompts"): _lines(
        "Astronaut in a jungle, cold color palette, muted colors, detailed, 8k"),
    ("remsky/Kokoro-FastAPI", "prompts"): _lines("Hello world!"),
    ("vllm-project/vllm-omni", "prompts"): _lines("a cup of coffee on the table"),
    ("LMCache/LMCache", "lmcache_standalone_config"): _yaml(
        chunk_size=16, local_cpu=True, max_local_cpu_size=0.1,
        internal_api_server_enabled=False),
    ("flagos-ai/FlagGems", "prompts"): _lines('{"text": "How are you today?"}'),
    ("GeeeekExplorer/nano-vllm", "prompts"): _json(
        {"format": "prompts_v1", "prompts": ["introduce yourself"],
         "source_note": "Derived from repo example.py prompts; minimized to 1 prompt for "
                        "batch_size=1."}),
    ("kyegomez/VisionMamba", "model_config"): _json(
        {"dim": 256, "dim_inner": 256, "depth": 12,
         "note": "recorded as the model artifact only; example.py builds its own model"}),
}

#: Synthetic assets whose content depends on code or data we cannot read offline.
SYNTHETIC_NOT_MADE: dict[tuple[str, str], str] = {
    ("ZhengYinan-AIR/Diffusion-Planner", "synthetic_sample"):
        "each stage's setup step (shims/.../make_sample.py) writes it into {out}/dataset",
    ("facebookresearch/large_concept_model", "lcm_toy_pretraining"):
        "each stage's setup step (shims/.../make_parquet.py) writes it with pyarrow into {out}",
    ("sgl-project/SpecForge", "draft_config"):
        "each stage's setup step (shims/.../make_draft_config.py) writes it into {out}",
}


# --------------------------------------------------------------------------- fetching


#: Copies a repository-relative file or folder of the checkout into a host folder.
CheckoutCopy = Callable[[str, Path], None]


def checkout_copy(target: Target | None, repo_dir: str) -> CheckoutCopy:
    """How to copy from the checkout in ``target`` without running anything there.

    A Docker target: a created, never started container of its image and the
    engine's archive API.  ``local://``: the files themselves.
    """
    def local(rel: str, into: Path) -> None:
        src = Path(repo_dir) / rel
        if not src.exists():
            raise AssetError(f"{rel} is not in the checkout {repo_dir}")
        if src.is_dir():
            shutil.copytree(src, into / src.name)
        else:
            shutil.copyfile(src, into / src.name)

    def docker(rel: str, into: Path) -> None:
        assert isinstance(target, DockerTarget)
        from docker.errors import DockerException

        ctr = None
        try:
            ctr = target.client.containers.create(
                target.image_id, entrypoint=["true"], network_mode="none",
                labels=labels(target.run_id, **{"reb.profile": "assets"}))
            stream, _ = ctr.get_archive(f"{repo_dir}/{rel}")
            _untar(io.BytesIO(b"".join(stream)), into)
        except DockerException as exc:
            raise AssetError(f"cannot copy {rel} out of {target.image}: "
                             f"{str(exc)[:200]}") from None
        finally:
            if ctr is not None:
                with contextlib.suppress(Exception):
                    ctr.remove(force=True)

    def unsupported(rel: str, into: Path) -> None:
        where = target.name if target is not None else "no target"
        raise AssetError(f"cannot copy {rel} from the checkout of {where}: repository assets "
                         "are copied from a Docker image or a local:// checkout")

    if isinstance(target, LocalTarget):
        return local
    if isinstance(target, DockerTarget):
        return docker
    return unsupported


def _safe_name(name: str) -> str | None:
    path = PurePosixPath(name)
    if path.is_absolute() or ".." in path.parts:
        return None
    return str(path).lstrip("./") or None


def _untar(fileobj: Any, into: Path) -> None:
    """Regular files and folders only, never outside ``into``: archives are data."""
    with tarfile.open(fileobj=fileobj) as tar:
        for member in tar:
            name = _safe_name(member.name)
            if name is None:
                raise AssetError(f"archive member {member.name!r} points outside its folder")
            dest = into / name
            if member.isdir():
                dest.mkdir(parents=True, exist_ok=True)
            elif member.isfile():
                dest.parent.mkdir(parents=True, exist_ok=True)
                src = tar.extractfile(member)
                if src is not None:
                    with open(dest, "wb") as out:
                        shutil.copyfileobj(src, out, CHUNK)


def _unzip(path: Path, into: Path) -> None:
    with zipfile.ZipFile(path) as archive:
        for info in archive.infolist():
            name = _safe_name(info.filename)
            if name is None:
                raise AssetError(f"archive member {info.filename!r} points outside its folder")
            dest = into / name
            if info.is_dir():
                dest.mkdir(parents=True, exist_ok=True)
                continue
            dest.parent.mkdir(parents=True, exist_ok=True)
            with archive.open(info) as src, open(dest, "wb") as out:
                shutil.copyfileobj(src, out, CHUNK)


def _extract_all(staging: Path, basename: str) -> None:
    """Unpack every archive in ``staging`` in place; drop one top folder named like the dest."""
    for path in sorted(p for p in staging.iterdir() if p.is_file()):
        name = path.name.lower()
        into = staging / "x"
        into.mkdir(exist_ok=True)
        if name.endswith(".zip"):
            _unzip(path, into)
        elif name.endswith((".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tar.xz")):
            with open(path, "rb") as fh:
                _untar(fh, into)
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


def _fetch_url(asset: Asset, staging: Path, place: Layout) -> None:
    if not asset.url:
        raise AssetError(f"url asset {asset.name!r} names no url")
    if not asset.files:
        _download(asset.url, staging / (
            PurePosixPath(urllib.parse.urlparse(asset.url).path).name or asset.name))
        return
    base = asset.url.rstrip("/") + "/"
    for declared in asset.files:
        url = urllib.parse.urljoin(base, place.url_paths.get(declared, declared))
        _download(url, staging / PurePosixPath(declared).name)


def _patterns(asset: Asset) -> list[str] | None:
    """File patterns of a hub asset; notes in the reference sometimes follow a pattern."""
    return [f.split()[0] for f in asset.files] or None


def _fetch_hf(asset: Asset, staging: Path, place: Layout) -> None:
    try:
        import huggingface_hub
    except ImportError:
        raise AssetError(f"{asset.source} asset {asset.name!r} ({asset.id}) needs "
                         "huggingface_hub on this machine (pip install huggingface_hub)") from None
    ids = list(place.hub_ids) or [asset.id]
    if not all(ids) or any("*" in str(i) for i in ids):
        raise AssetError(f"{asset.source} asset {asset.name!r} has no single hub id ({asset.id})")
    for repo_id in ids:
        kw: dict[str, Any] = {"repo_id": repo_id,
                              "allow_patterns": _patterns(asset) or list(place.hub_files) or None,
                              "repo_type": "dataset" if asset.source == "hf_dataset" else "model"}
        try:
            if place.hf_cache:
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


def _fetch_synthetic(repo: Repo, asset: Asset, staging: Path) -> None:
    make = SYNTHETIC.get((repo.name, asset.name))
    if make is None:
        why = SYNTHETIC_NOT_MADE.get((repo.name, asset.name), "no generator is written for it")
        raise AssetError(f"synthetic asset {asset.name!r} is not implemented: {why}")
    make(staging)
    out = staging / "out"
    if out.exists():  # a one-file generator: name it as the view expects
        name = PurePosixPath(layout(repo, asset).dest).name or asset.name
        out.rename(staging / name)


def fetch(repo: Repo, asset: Asset, staging: Path, *, network: bool,
          copy: CheckoutCopy | None = None) -> None:
    """Put the asset's files into ``staging`` (empty): download, copy or generate them."""
    place = layout(repo, asset)
    if asset.network and not network:
        raise AssetError(f"{asset.source} asset {asset.name!r} needs the network: "
                         "prepare it with --reb-prepare, or fill the cache elsewhere "
                         "and pass --reb-assets DIR")
    if asset.source in ("hf", "hf_dataset"):
        _fetch_hf(asset, staging, place)
    elif asset.source == "modelscope":
        _fetch_modelscope(asset, staging)
    elif asset.source == "url":
        _fetch_url(asset, staging, place)
    elif asset.source == "git":
        _fetch_git(asset, staging)
    elif asset.source == "repo":
        _fetch_repo(asset, staging, copy or checkout_copy(None, ""))
    elif asset.source == "synthetic":
        _fetch_synthetic(repo, asset, staging)
    else:
        raise AssetError(f"{asset.source} asset {asset.name!r} ({asset.id}): fetching from "
                         f"{asset.source} is not implemented")
    if place.extract:
        _extract_all(staging, PurePosixPath(place.dest.rstrip("/")).name)
    for old, new in place.rename.items():
        for path in staging.rglob(old):
            path.rename(path.with_name(new))


# --------------------------------------------------------------------------- the cache


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
            "path": asset.path, "dest": layout(repo, asset).dest,
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
        dest = layout(repo, asset).dest
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
                fetch(repo, asset, staging, network=network, copy=copy)
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


# --------------------------------------------------------------------------- the tiers' side


def describe(repo: Repo, asset: Asset, why: str) -> str:
    where = asset.id or asset.url or asset.path or asset.source
    return (f"{asset.kind} {asset.name!r} ({asset.source} {where} -> "
            f"{{assets}}/{layout(repo, asset).dest}): {why}")


def missing_message(repo: Repo, missing: list[tuple[Asset, str]], cache: Path | None) -> str:
    """One message naming every missing asset, and how to provide them."""
    parts = "; ".join(describe(repo, a, why) for a, why in missing)
    where = f" in the asset cache {cache}" if cache else ""
    return (f"missing asset(s){where}: {parts}. Prepare them with --reb-prepare (the only step "
            "that uses the network) or pass --reb-assets DIR with a filled cache")


def shim_dirs(repo: Repo) -> list[str]:
    """The shim folders the repository's stages declare, in stage order, once each."""
    out: list[str] = []
    for stage in ("cpu", "single_gpu", "multi_gpu"):
        run = getattr(repo, stage)
        if run is None:
            continue
        for r in (run, *run.together, *([run.retry.run] if run.retry else [])):
            if r.shim_dir and r.shim_dir not in out:
                out.append(r.shim_dir)
    return out


def attach(target: Target, repo: Repo, cache: AssetCache | None, checkout: str) -> str | None:
    """Mount the repository's view and shim folder into ``target`` before anything runs there.

    Returns where ``{assets}`` is in the target when that is not the official
    ``{checkout}/benchmark_assets`` (``local://``: the view itself), else None.
    """
    for shim in shim_dirs(repo)[:1]:  # one probe folder per checkout, as officially
        target.mount(shim, f"{checkout}/{SHIM_MOUNT}")
    if cache is None or not repo.assets:
        return None
    official = f"{checkout}/{VIEW_MOUNT}"
    seen = mount_view(target, repo, cache, checkout)
    return seen if seen not in (None, official) else None


def mount_view(target: Target, repo: Repo, cache: AssetCache, checkout: str) -> str | None:
    """Mount the repository's view at the official ``{checkout}/benchmark_assets``.

    Its ``cache/`` is writable scratch: the official commands point ``HF_HOME``,
    ``TORCH_HOME`` and the like there.
    """
    view = cache.view(repo)
    view.mkdir(parents=True, exist_ok=True)
    return target.mount(str(view), f"{checkout}/{VIEW_MOUNT}", scratch=("cache",))


def shim_path(target: Target, run: Run, checkout: str) -> str | None:
    """Where ``run``'s shim folder is in ``target``, or None when it declares none."""
    if not run.shim_dir:
        return None
    seen = target.mount(run.shim_dir, f"{checkout}/{SHIM_MOUNT}")
    if seen is None:
        from pytest_reb.target import TargetError

        raise TargetError(f"{target.name} cannot see the shim folder {run.shim_dir} "
                          "(shims need a Docker or local:// target)")
    return seen


def with_shim(env: dict[str, str], shim: str | None, lib: str | None = None) -> dict[str, str]:
    """``env`` with the shim folder first on ``PYTHONPATH`` (once), our shim library ``lib``
    (``reb_shim``, which its sitecustomize imports) right after it."""
    if shim is None:
        return env
    first = [shim, *([lib] if lib else [])]
    rest = [p for p in env.get("PYTHONPATH", "").split(":") if p and p not in first]
    return {**env, "PYTHONPATH": ":".join([*first, *rest])}
