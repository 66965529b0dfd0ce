"""pytest-reb shim for GeeeekExplorer/nano-vllm (C3, C4): the official inline driver.

The official stages ran ``python -c <driver>`` from the repository root.  The
driver read the model folder and the prompts file from the prepare step's
manifest (``benchmark_assets/assets.json``), took the first prompt of the
prompts file (``{"format": "prompts_v1", "prompts": [...]}``), built
``LLM(model, enforce_eager=True, tensor_parallel_size=TP, max_model_len=256,
max_num_batched_tokens=512, max_num_seqs=1)``, generated one token with
``SamplingParams(temperature=0.6, max_tokens=1)`` (no progress bar) and
printed the text.  C3 used TP 1, C4 TP 2 (the engine spawns its own worker).

This is our rewrite.  The two paths come as arguments (our assets have no
assets.json); the repository root (cwd) goes first on sys.path as ``-c`` put
it; the ``__main__`` guard keeps the engine's spawned worker, which re-imports
this file, from running the driver again.
"""

import argparse
import json
import os
import sys


def first_prompt(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)["prompts"][0]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, help="the model folder")
    parser.add_argument("--prompts", required=True, help="the prompts_v1 JSON file")
    parser.add_argument("--tensor-parallel-size", type=int, required=True)
    args = parser.parse_args()
    sys.path.insert(0, os.getcwd())
    from nanovllm import LLM, SamplingParams

    prompt = first_prompt(args.prompts)
    llm = LLM(args.model, enforce_eager=True, tensor_parallel_size=args.tensor_parallel_size,
              max_model_len=256, max_num_batched_tokens=512, max_num_seqs=1)
    outputs = llm.generate([prompt], SamplingParams(temperature=0.6, max_tokens=1),
                           use_tqdm=False)
    print(outputs[0]["text"])


if __name__ == "__main__":
    main()
