"""The shims of the "drivers" group, run for real against small stand-ins of what they drive.

Each official stage of these repositories ran a driver the harness wrote (inline ``-c`` code,
a script fed on stdin, generated launcher files, a harness-written smoketest).  Our rewrites in
``repos/shims/<module>/`` are executed here as the stages execute them: as scripts under the
host python, from a stand-in repository root as the working directory, with stand-ins of the
repository code they patch and of the heavy libraries (torch, einops, onnxruntime, pandas,
huggingface_hub) written into ``tmp_path``.  Each stand-in repository keeps the behaviour the
shim exists for (a constructor that rejects ``heads``, a debug print, a hub download that must
not happen, a package ``__init__`` that cannot import), so a shim that lost its effect fails.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from textwrap import dedent

import pytest

SHIMS = Path(__file__).resolve().parents[1] / "repos" / "shims"
VIM = SHIMS / "test_kyegomez__VisionMamba"
COMIC = SHIMS / "test_ogkalu2__comic_translate"
NANO = SHIMS / "test_GeeeekExplorer__nano_vllm"
SOCIALED = SHIMS / "test_RingBDStack__SocialED"


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(dedent(text))
    return root


def run(argv: list[str], cwd: Path, pythonpath: list[Path],
        **env: str) -> subprocess.CompletedProcess[str]:
    """``python argv`` as a stage runs it: cwd the repository, the shim folder first on
    PYTHONPATH (as the tiers put it), then the stand-in libraries."""
    full = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "CUDA_VISIBLE_DEVICES")}
    full.update({"PYTHONPATH": ":".join(map(str, pythonpath)), "PYTHONDONTWRITEBYTECODE": "1"})
    full.update(env)
    return subprocess.run([sys.executable, *argv], cwd=cwd, env=full, capture_output=True,
                          text=True, timeout=120)


#: A stand-in torch: the default device, the current CUDA device and the GPU count (FAKE_GPUS)
#: are what the drivers touch; ``python -m torch.distributed.run [options] script.py args`` runs
#: the script once per rank with LOCAL_RANK and WORLD_SIZE set, in turn.
FAKE_TORCH = {
    "torch/__init__.py": """
        from . import cuda
        DEFAULT_DEVICE = None
        def set_default_device(device):
            global DEFAULT_DEVICE
            DEFAULT_DEVICE = device
    """,
    "torch/cuda.py": """
        import os
        CURRENT = None
        def device_count():
            return int(os.environ.get("FAKE_GPUS", "0"))
        def is_available():
            return device_count() > 0
        def set_device(index):
            global CURRENT
            if index >= device_count():
                raise RuntimeError(f"invalid device ordinal {index}")
            CURRENT = index
            print("set_device", index)
    """,
    "torch/distributed/__init__.py": "",
    "torch/distributed/run.py": """
        import os, subprocess, sys
        args = sys.argv[1:]
        print("torchrun", args)
        n = int(args[args.index("--nproc_per_node") + 1])
        script = next(i for i, a in enumerate(args) if a.endswith(".py"))
        for rank in range(n):
            env = {**os.environ, "LOCAL_RANK": str(rank), "WORLD_SIZE": str(n)}
            code = subprocess.call([sys.executable, *args[script:]], env=env)
            if code:
                sys.exit(code)
    """,
}


# --------------------------------------------------------------------- kyegomez/VisionMamba


@pytest.fixture
def vim(tmp_path: Path) -> tuple[Path, Path]:
    """A stand-in VisionMamba checkout (pinned constructor signature, debug print, Vim forwarding
    unknown keywords to the block) and its libraries."""
    repo = write(tmp_path / "repo", {
        "vision_mamba/__init__.py": "from vision_mamba.model import Vim\n",
        "vision_mamba/model.py": """
            from einops import rearrange

            class VisionEncoderMambaBlock:
                def __init__(self, dim, dt_rank, dim_inner, d_state):
                    self.dim = dim
                    self.softplus = lambda v: ("softplus", v)

                def process_direction(self, x, conv1d, ssm):
                    x = rearrange(x, "b s d -> b d s")
                    x = self.softplus(conv1d(x))
                    print(f"Conv1d: {x}")
                    x = rearrange(x, "b d s -> b s d")
                    x = ssm(x)
                    return x

                def forward(self, x):
                    return self.process_direction(x, lambda v: ("conv", v), lambda v: ("ssm", v))

            class Vim:
                def __init__(self, dim, dt_rank=32, dim_inner=None, d_state=None, depth=12,
                             *args, **kwargs):
                    self.layers = [VisionEncoderMambaBlock(dim=dim, dt_rank=dt_rank,
                                                           dim_inner=dim_inner, d_state=d_state,
                                                           *args, **kwargs)
                                   for _ in range(depth)]

                def __call__(self, x):
                    for layer in self.layers:
                        x = layer.forward(x)
                    return x
        """,
        "example.py": """
            import torch
            from vision_mamba.model import Vim

            model = Vim(dim=256, heads=8, dt_rank=32, dim_inner=256, d_state=256, depth=1)
            print("out", model("x"))
            print("device", torch.DEFAULT_DEVICE, torch.cuda.CURRENT, __name__)
        """,
    })
    libs = write(tmp_path / "libs", {
        **FAKE_TORCH,
        "einops/__init__.py": "def rearrange(x, pattern):\n    return (pattern, x)\n"})
    return repo, libs


VIM_OUT = "out ('ssm', ('b d s -> b s d', ('softplus', ('conv', ('b s d -> b d s', 'x')))))"


def test_vim_stand_in_needs_the_patch(vim: tuple[Path, Path]) -> None:
    """Unpatched, the example fails the way the pinned repository does."""
    repo, libs = vim
    res = run(["example.py"], repo, [repo, libs])
    assert res.returncode != 0
    assert "unexpected keyword argument 'heads'" in res.stderr


def test_vim_cpu_driver(vim: tuple[Path, Path]) -> None:
    repo, libs = vim
    res = run([str(VIM / "run_example.py"), "--device", "cpu"], repo, [VIM, libs])
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines() == [VIM_OUT, "device cpu None __main__"]


def test_vim_cuda_driver(vim: tuple[Path, Path]) -> None:
    repo, libs = vim
    argv = [str(VIM / "run_example.py"), "--device", "cuda"]
    res = run(argv, repo, [VIM, libs], FAKE_GPUS="0")
    assert res.returncode == 1
    assert "out" not in res.stdout and "no CUDA" in res.stderr
    res = run(argv, repo, [VIM, libs], FAKE_GPUS="1")
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines() == ["set_device 0", VIM_OUT, "device cuda 0 __main__"]


def test_vim_multi_gpu_launcher_and_worker(vim: tuple[Path, Path]) -> None:
    repo, libs = vim
    env = {"NPROC": "2", "WORKER": str(VIM / "torchrun_worker.py")}
    res = run([str(VIM / "multi_gpu_impl.py")], repo, [VIM, libs], FAKE_GPUS="1", **env)
    assert res.returncode == 1
    assert res.stdout.splitlines() == ["[multi_gpu] visible_gpu_count=1",
                                       "[multi_gpu] need >= 2 GPUs for this stage"]
    res = run([str(VIM / "multi_gpu_impl.py")], repo, [VIM, libs], FAKE_GPUS="2", **env)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    worker = str(VIM / "torchrun_worker.py")
    assert lines[:3] == [
        "[multi_gpu] visible_gpu_count=2",
        f"[multi_gpu] launch: {sys.executable} -m torch.distributed.run --standalone "
        f"--nproc_per_node 2 {worker}",
        f"torchrun ['--standalone', '--nproc_per_node', '2', '{worker}']"]
    assert lines[3:] == ["set_device 0", VIM_OUT, "device cuda 0 __main__",
                         "set_device 1", VIM_OUT, "device cuda 1 __main__"]


def test_vim_launcher_passes_a_failing_rank_on(vim: tuple[Path, Path]) -> None:
    repo, libs = vim
    (repo / "example.py").write_text("raise SystemExit(3)\n")
    res = run([str(VIM / "multi_gpu_impl.py")], repo, [VIM, libs], FAKE_GPUS="2", NPROC="2",
              WORKER=str(VIM / "torchrun_worker.py"))
    assert res.returncode == 3


# ------------------------------------------------------------------ ogkalu2/comic-translate


@pytest.fixture
def comic(tmp_path: Path) -> tuple[Path, Path, Path, Path]:
    """A stand-in comic-translate checkout whose detector downloads through hf_hub_download and
    asks FontEngineFactory for a font engine; both must not reach the network."""
    pytest.importorskip("PIL")
    pytest.importorskip("numpy")
    from PIL import Image

    repo = write(tmp_path / "repo", {
        "modules/__init__.py": "",
        "modules/detection/__init__.py": "",
        "modules/detection/base.py": """
            class FontEngineFactory:
                @classmethod
                def create_engine(cls, settings, backend="onnx"):
                    raise RuntimeError("would download the font models")

            class DetectionEngine:
                def __init__(self, settings=None):
                    self.settings = settings
        """,
        "modules/detection/rtdetr_v2_onnx.py": """
            import os
            import onnxruntime as ort
            from huggingface_hub import hf_hub_download
            from .base import DetectionEngine, FontEngineFactory

            class RTDetrV2ONNXDetection(DetectionEngine):
                def __init__(self, settings=None):
                    super().__init__(settings)
                    self.repo_name = "ogkalu/comic-text-and-bubble-detector"
                    self.model_dir = "/nonexistent/models/detection"

                def initialize(self, device="cpu", confidence_threshold=0.3):
                    os.makedirs(self.model_dir, exist_ok=True)
                    hf_hub_download(repo_id=self.repo_name, filename="config.json")
                    path = hf_hub_download(repo_id=self.repo_name, filename="detector.onnx")
                    self.session = ort.InferenceSession(path, providers=[device])
                    print("initialize", device, confidence_threshold, self.settings)

                def detect(self, image):
                    font = FontEngineFactory.create_engine(self.settings, backend="onnx")
                    print("detect", image.shape, image.dtype, font.process(image))
                    return ["bubble", "text"]
        """,
    })
    libs = write(tmp_path / "libs", {
        "huggingface_hub/__init__.py": """
            def hf_hub_download(repo_id, filename, **kwargs):
                raise OSError(f"network access for {repo_id}/{filename}")
        """,
        "onnxruntime/__init__.py": """
            import os
            def get_available_providers():
                return os.environ["FAKE_PROVIDERS"].split(",")
            class InferenceSession:
                def __init__(self, path, providers):
                    print("session", path, providers)
        """,
    })
    model = tmp_path / "assets" / "model" / "comic-text-and-bubble-detector"
    model.mkdir(parents=True)
    (model / "detector.onnx").write_bytes(b"onnx")
    (model / "config.json").write_text("{}")
    image = tmp_path / "assets" / "dataset" / "hopper.jpg"
    image.parent.mkdir(parents=True)
    Image.new("L", (8, 6), 128).save(image)
    return repo, libs, image, model


def test_comic_cpu_driver(comic: tuple[Path, Path, Path, Path]) -> None:
    repo, libs, image, model = comic
    res = run([str(COMIC / "detect_one_image.py"), "--", str(image), str(model)], repo,
              [COMIC, libs], CUDA_VISIBLE_DEVICES="", FAKE_PROVIDERS="CPUExecutionProvider")
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines() == [
        f"session {model}/detector.onnx ['cpu']",
        "initialize cpu 0.3 None",
        "detect (6, 8, 3) uint8 {'available': False}",
        "cpu_infer_ok num_blocks=2 image=hopper.jpg"]


def test_comic_gpu_driver(comic: tuple[Path, Path, Path, Path]) -> None:
    repo, libs, image, model = comic
    argv = [str(COMIC / "detect_one_image.py"), "--", str(image), str(model)]
    res = run(argv, repo, [COMIC, libs], CUDA_VISIBLE_DEVICES="0",
              FAKE_PROVIDERS="CPUExecutionProvider")
    assert res.returncode != 0
    assert "CUDAExecutionProvider not available in onnxruntime" in res.stderr
    assert "session" not in res.stdout
    res = run(argv, repo, [COMIC, libs], CUDA_VISIBLE_DEVICES="0",
              FAKE_PROVIDERS="CUDAExecutionProvider,CPUExecutionProvider")
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines()[-1] == (
        "single_gpu_infer_ok num_blocks=2 image=hopper.jpg cuda_visible_devices=0")
    assert "initialize cuda 0.3 None" in res.stdout


def test_comic_driver_needs_both_model_files(comic: tuple[Path, Path, Path, Path]) -> None:
    repo, libs, image, model = comic
    (model / "config.json").unlink()
    res = run([str(COMIC / "detect_one_image.py"), "--", str(image), str(model)], repo,
              [COMIC, libs], CUDA_VISIBLE_DEVICES="", FAKE_PROVIDERS="CPUExecutionProvider")
    assert res.returncode != 0
    assert f"expected model artifact not found: {model}/config.json" in res.stderr


# ----------------------------------------------------------------- GeeeekExplorer/nano-vllm


@pytest.fixture
def nano(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A stand-in nanovllm whose engine, like the real one, starts its tensor-parallel workers
    with multiprocessing's spawn context (which re-imports the driver's file)."""
    repo = write(tmp_path / "repo", {"nanovllm/__init__.py": """
        import multiprocessing

        def _worker(rank):
            print("worker", rank, flush=True)

        class SamplingParams:
            def __init__(self, temperature=1.0, max_tokens=64):
                self.temperature, self.max_tokens = temperature, max_tokens

        class LLM:
            def __init__(self, model, **kwargs):
                print("LLM", model, sorted(kwargs.items()), flush=True)
                ctx = multiprocessing.get_context("spawn")
                for rank in range(1, kwargs.get("tensor_parallel_size", 1)):
                    p = ctx.Process(target=_worker, args=(rank,))
                    p.start()
                    p.join()
                    assert p.exitcode == 0, p.exitcode

            def generate(self, prompts, sp, use_tqdm=True):
                print("generate", prompts, sp.temperature, sp.max_tokens, use_tqdm, flush=True)
                return [{"text": "Hello", "token_ids": [1]} for _ in prompts]
    """})
    prompts = tmp_path / "assets" / "dataset" / "prompts.json"
    prompts.parent.mkdir(parents=True)
    prompts.write_text(json.dumps({"format": "prompts_v1",
                                   "prompts": ["introduce yourself", "not this one"]}))
    return repo, tmp_path / "assets" / "model" / "Qwen3-0.6B", prompts


@pytest.mark.parametrize("tp", [1, 2])
def test_nano_vllm_driver(nano: tuple[Path, Path, Path], tp: int) -> None:
    repo, model, prompts = nano
    res = run([str(NANO / "generate_one_token.py"), "--model", str(model),
               "--prompts", str(prompts), "--tensor-parallel-size", str(tp)], repo, [NANO])
    assert res.returncode == 0, res.stderr
    kwargs = sorted({"enforce_eager": True, "tensor_parallel_size": tp, "max_model_len": 256,
                     "max_num_batched_tokens": 512, "max_num_seqs": 1}.items())
    assert res.stdout.splitlines() == [
        f"LLM {model} {kwargs}",
        *(["worker 1"] if tp == 2 else []),
        "generate ['introduce yourself'] 0.6 1 False",
        "Hello"]


# --------------------------------------------------------------------- RingBDStack/SocialED

COLUMNS = ["tweet_id", "text", "event_id", "words", "filtered_words", "entities", "user_id",
           "created_at", "urls", "hashtags", "user_mentions"]


def event2012(path: Path, rows: int) -> None:
    """A stand-in Event2012.npy: an object array of rows with the eleven columns."""
    np = pytest.importorskip("numpy")
    data = np.empty((rows, len(COLUMNS)), dtype=object)
    for i in range(rows):
        data[i] = [i, f"tweet {i}", i % 3, [f"w{i}"], [f"Word{i}", "X"], [], 7, "2012-10-10",
                   [], [], []]
    path.parent.mkdir(parents=True, exist_ok=True)
    np.save(path, data, allow_pickle=True)


def test_socialed_prepare_results(tmp_path: Path) -> None:
    np = pytest.importorskip("numpy")
    dataset = tmp_path / "assets" / "dataset" / "Event2012" / "Event2012.npy"
    event2012(dataset, 30)
    model = tmp_path / "assets" / "model" / "sbert_model"
    model.mkdir(parents=True)
    out = tmp_path / "out" / "prepare"
    res = run([str(SOCIALED / "make_prepare_results.py"), "--dataset", str(dataset),
               "--model", str(model), "--subset-size", "12", "--out", str(out)],
              tmp_path, [SOCIALED])
    assert res.returncode == 0, res.stderr
    results = json.loads((out / "results.json").read_text())
    subset = out / "Event2012_subset.npy"
    assert results["assets"] == {"dataset": {"path": str(subset)}, "model": {"path": str(model)}}
    rows = np.load(subset, allow_pickle=True)
    assert rows.shape == (12, 11)
    assert rows.tolist() == np.load(dataset, allow_pickle=True)[:12].tolist()
    # --subset-size keeps at least two rows, as officially
    res = run([str(SOCIALED / "make_prepare_results.py"), "--dataset", str(dataset),
               "--model", str(model), "--subset-size", "1", "--out", str(out)],
              tmp_path, [SOCIALED])
    assert res.returncode == 0, res.stderr
    assert np.load(subset, allow_pickle=True).shape == (2, 11)


def test_socialed_prepare_rejects_other_shapes(tmp_path: Path) -> None:
    np = pytest.importorskip("numpy")
    dataset = tmp_path / "Event2012.npy"
    np.save(dataset, np.zeros((4, 3)))
    res = run([str(SOCIALED / "make_prepare_results.py"), "--dataset", str(dataset),
               "--model", str(tmp_path), "--out", str(tmp_path / "out")], tmp_path, [SOCIALED])
    assert res.returncode != 0
    assert "expected rows of 11 columns" in res.stderr
    assert not (tmp_path / "out" / "results.json").exists()


@pytest.fixture
def socialed(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A stand-in SocialED checkout whose detector package cannot be imported (as with the real
    optional detectors), a stand-in pandas with the few DataFrame calls used, and the prepared
    results."""
    pytest.importorskip("numpy")
    repo = write(tmp_path / "repo", {
        "SocialED/__init__.py": "",
        "SocialED/detector/__init__.py": "raise ImportError('spacy en_core_web_lg missing')\n",
        "SocialED/dataset/__init__.py": "",
        "SocialED/dataset/dataloader.py": "class DatasetLoader:\n    pass\n",
        "SocialED/detector/sbert.py": """
            import os
            from dataset.dataloader import DatasetLoader

            class SBERT:
                def __init__(self, dataset, model_name="../model/paraphrase-MiniLM-L6-v2"):
                    self.dataset = dataset.load_data()
                    assert os.path.exists(model_name), model_name
                    print("SBERT", dataset.get_dataset_language(), len(self.dataset))
                    self.df = None

                def preprocess(self):
                    self.df = self.dataset
                    return self.dataset

                def detection(self):
                    events = self.df.column("event_id")
                    print("tweets", self.df.column("tweet_id"))
                    return events, events

                def evaluate(self, truths, predictions):
                    print("NMI", float(truths == predictions))
        """,
    })
    libs = write(tmp_path / "libs", {**FAKE_TORCH, "pandas/__init__.py": """
        class _ILoc:
            def __init__(self, df):
                self.df = df
            def __getitem__(self, key):
                return DataFrame(self.df.rows[key], columns=self.df.columns)

        class DataFrame:
            def __init__(self, data, columns):
                self.rows, self.columns = [list(r) for r in data], list(columns)
                assert all(len(r) == len(self.columns) for r in self.rows)
            @property
            def iloc(self):
                return _ILoc(self)
            def head(self, n):
                return DataFrame(self.rows[:n], self.columns)
            def copy(self):
                return DataFrame(self.rows, self.columns)
            def __len__(self):
                return len(self.rows)
            def column(self, name):
                return [r[self.columns.index(name)] for r in self.rows]
    """})
    prepared = tmp_path / "out" / "prepare"
    event2012(prepared / "Event2012_subset.npy", 12)
    model = tmp_path / "assets" / "model" / "sbert_model"
    model.mkdir(parents=True)
    (prepared / "results.json").write_text(json.dumps({"assets": {
        "dataset": {"path": str(prepared / "Event2012_subset.npy")},
        "model": {"path": str(model)}}}))
    return repo, libs, prepared / "results.json"


def smoketest(results: Path, out: Path, *extra: str) -> list[str]:
    return [str(SOCIALED / "socialed_sbert_smoketest.py"), "--prepare-results", str(results),
            "--max-samples", "12", "--artifact-dir", str(out), *extra]


def test_socialed_driver_cpu(socialed: tuple[Path, Path, Path], tmp_path: Path) -> None:
    repo, libs, results = socialed
    out = tmp_path / "artifacts"
    res = run(smoketest(results, out), repo, [SOCIALED, libs], CUDA_VISIBLE_DEVICES="")
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines() == ["SBERT English 12", f"tweets {list(range(12))}",
                                       "NMI 1.0"]
    record = json.loads((out / "run.json").read_text())
    assert {k: record[k] for k in ("local_rank", "world_size", "cuda_visible_devices",
                                   "dataset_rows")} == {
        "local_rank": None, "world_size": None, "cuda_visible_devices": "", "dataset_rows": 12}


def test_socialed_driver_gpu_count(socialed: tuple[Path, Path, Path], tmp_path: Path) -> None:
    repo, libs, results = socialed
    argv = smoketest(results, tmp_path / "a", "--require-gpu-count", "1")
    res = run(argv, repo, [SOCIALED, libs], FAKE_GPUS="0")
    assert res.returncode == 1
    assert "require_gpus=1 but cuda_available=False gpu_count=0" in res.stderr
    assert not (tmp_path / "a").exists()
    res = run(argv, repo, [SOCIALED, libs], FAKE_GPUS="1", CUDA_VISIBLE_DEVICES="0")
    assert res.returncode == 0, res.stderr
    assert json.loads((tmp_path / "a" / "run.json").read_text())["cuda_visible_devices"] == "0"


def test_socialed_driver_distributed(socialed: tuple[Path, Path, Path], tmp_path: Path) -> None:
    """Under (stand-in) torchrun each rank sets its device and takes every second row."""
    repo, libs, results = socialed
    out = tmp_path / "artifacts"
    res = run(["-m", "torch.distributed.run", "--nproc_per_node", "2",
               *smoketest(results, out, "--distributed", "--require-gpu-count", "2")],
              repo, [SOCIALED, libs], FAKE_GPUS="2", CUDA_VISIBLE_DEVICES="0,1")
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()[1:]
    assert lines == ["set_device 0", "SBERT English 6", "tweets [0, 2, 4, 6, 8, 10]", "NMI 1.0",
                     "set_device 1", "SBERT English 6", "tweets [1, 3, 5, 7, 9, 11]", "NMI 1.0"]
    for rank in (0, 1):
        record = json.loads((out / f"rank{rank}.json").read_text())
        assert (record["local_rank"], record["world_size"], record["dataset_rows"]) == (rank, 2, 6)


def test_socialed_driver_missing_prepare(socialed: tuple[Path, Path, Path],
                                         tmp_path: Path) -> None:
    repo, libs, results = socialed
    data = json.loads(results.read_text())
    data["assets"]["model"]["path"] = str(tmp_path / "nowhere")
    results.write_text(json.dumps(data))
    res = run(smoketest(results, tmp_path / "a"), repo, [SOCIALED, libs])
    assert res.returncode == 1
    assert f"model path missing: {tmp_path / 'nowhere'}" in res.stderr
    res = run(smoketest(tmp_path / "none.json", tmp_path / "a"), repo, [SOCIALED, libs])
    assert res.returncode == 1
    assert "prepare results not found" in res.stderr
