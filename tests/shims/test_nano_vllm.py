"""nano-vllm's driver (``repos/shims/test_GeeeekExplorer__nano_vllm``), run for real against
a stand-in engine that spawns its tensor-parallel workers.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.repomodules import write_tree as write
from support.shims import SHIMS
from support.shims import run_python as run

NANO = SHIMS / "test_GeeeekExplorer__nano_vllm"


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
