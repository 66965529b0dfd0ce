"""Open-Sora 2.0 — open text-to-video generation (11B MMDiT).

Repository: https://github.com/hpcaitech/Open-Sora
Commit: d0cd5ac50da79e9a9d2285a952d4dcd806e6c8fc
Domain: video generation: text-to-video (Open-Sora 2.0, 11B MMDiT)
Category: 3_single_gpu+multi_gpu (tiers that apply: C0 C1 C2 C3 C4 C5)

All stages run one-step, one-frame 256px inference through torchrun, C4 with the repository's
tensor-parallel config 256px_tp.py. The assets are huge: the 11B checkpoint, the Hunyuan VAE,
T5-XXL and CLIP-L from the Hugging Face hub (tens of GB). C1 runs the 11B model in fp32 on CPU
within 600 s, which is very unlikely to finish; the CSV still counts it.

The prepared view holds the repository's assets/texts/example.csv as
{assets}/dataset/prompts/example.csv; each stage's setup step (shims/first_prompt.py) writes what
the official prepare made of it, its first row as a csv with the single column 'text', to
{out}/prompts.csv, which the run's --dataset.data-path names.
"""

from pytest_reb import SHIMS, Asset, C2Variant, CompatVariant, Repo, Run, hf_asset

# Our setup script that writes the one-prompt csv.

#: How this module spells what the reference argv leaves to run time: the prompt csv is the one
#: the setup step wrote into {out}.
TOKENS = {"{assets}/dataset/prompts.csv": ["{out}/prompts.csv"]}

#: Every stage first rewrites the example prompts' first row (the official prepare).
SETUP = [["{python}", "{shims}/first_prompt.py", "{assets}/dataset/prompts/example.csv",
          "{out}/prompts.csv"]]

#: What our setup does, after each stage's reference note.
SETUP_NOTE = (
    " Our setup step writes {out}/prompts.csv: the header 'text' and the first prompt of the "
    "prepared example.csv."
)

#: Inference options before --dtype, in every stage: one 1-frame sample in one step.
ONE_SAMPLE = [
    "--save-dir", "{out}/samples",
    "--dataset.data-path", "{out}/prompts.csv",
    "--num_samples", "1", "--num_steps", "1", "--num_frames", "1",
    "--batch_size", "1", "--num_workers", "0",
]

#: The prepared weights, after --dtype.
WEIGHTS = [
    "--model.from_pretrained", "{assets}/model/Open_Sora_v2.safetensors",
    "--ae.from_pretrained", "{assets}/model/hunyuan_vae.safetensors",
    "--t5.from_pretrained", "{assets}/model/google/t5-v1_1-xxl",
    "--clip.from_pretrained", "{assets}/model/openai/clip-vit-large-patch14",
]

repo = Repo(
    "hpcaitech/Open-Sora",
    commit="d0cd5ac50da79e9a9d2285a952d4dcd806e6c8fc",
    c2_compat=C2Variant(no_device="fails", no_python="path_hallucination:empty",
        missing="path_hallucination:empty", not_executable="path_hallucination:empty",
        timeout="timeout:empty", crashed="deps", failed="deps", silent="deps", garbage="deps"),
    c5_compat=CompatVariant(strip_path=True, version_claim="truthy", version_strip=True,
        # CUDA is bool() of the cuda stage's observed value
        torch_claim="truthy", torch_strip=True, cuda_from="observed_bool",
        gpu_from="stage_or_probe", gpu_observed_coerce=True),
    imports_total=73,  # the C0 denominator
    domain="video generation: text-to-video (Open-Sora 2.0, 11B MMDiT)",
    assets=[
        Asset(
            "prompts", "dataset", "repo",
            path="assets/texts/example.csv",
            dest="dataset/prompts/",
            note="first row rewritten as {assets}/dataset/prompts.csv with a single 'text' column",
        ),
        hf_asset(
            "Open-Sora-v2", "hpcai-tech/Open-Sora-v2",
            files=["Open_Sora_v2.safetensors", "hunyuan_vae.safetensors"],
            dest="model/",
            note=(
                "tens of GB in total with the two text encoders; linked at "
                "{assets}/model/Open_Sora_v2.safetensors and "
                "{assets}/model/hunyuan_vae.safetensors; HF_TOKEN honoured"
            ),
        ),
        hf_asset(
            "t5-v1_1-xxl", "google/t5-v1_1-xxl",
            files=["*.json", "*.model", "*.txt", "*.safetensors", "pytorch_model*.bin"],
            dest="model/google/t5-v1_1-xxl",
            note="linked at {assets}/model/google/t5-v1_1-xxl",
        ),
        hf_asset(
            "clip-vit-large-patch14", "openai/clip-vit-large-patch14",
            files=[
                "*.json", "*.txt", "*.safetensors", "pytorch_model*.bin", "vocab.json",
                "merges.txt",
            ],
            dest="model/openai/clip-vit-large-patch14",
            note="linked at {assets}/model/openai/clip-vit-large-patch14",
        ),
    ],
    cpu=Run(
        [
            "{python}", "-m", "torch.distributed.run",
            "--nproc_per_node", "1", "--standalone",
            "scripts/diffusion/inference.py",
            "configs/diffusion/inference/256px.py",
            *ONE_SAMPLE, "--dtype", "fp32", *WEIGHTS,
        ],
        env={"CUDA_VISIBLE_DEVICES": "", "PYTHONPATH": "{repo}"},
        timeout=600,
        launcher="torchrun",
        entrypoint="scripts/diffusion/inference.py",
        note=(
            "An 11B model plus T5-XXL in fp32 on CPU is very unlikely to finish within 600 s; the "
            "CSV still counts this stage." + SETUP_NOTE
        ),
        setup=SETUP,
        shim_dir=SHIMS,
    ),
    single_gpu=Run(
        [
            "{python}", "-m", "torch.distributed.run",
            "--nproc_per_node", "1", "--standalone",
            "scripts/diffusion/inference.py",
            "configs/diffusion/inference/256px.py",
            *ONE_SAMPLE, "--dtype", "fp16", *WEIGHTS,
        ],
        env={"CUDA_VISIBLE_DEVICES": "0", "PYTHONPATH": "{repo}"},
        timeout=600,
        launcher="torchrun",
        entrypoint="scripts/diffusion/inference.py",
        note="Memory-heavy: needs a large GPU." + SETUP_NOTE,
        setup=SETUP,
        shim_dir=SHIMS,
    ),
    multi_gpu=Run(
        [
            "{python}", "-m", "torch.distributed.run",
            "--nproc_per_node", "2", "--standalone",
            "scripts/diffusion/inference.py",
            "configs/diffusion/inference/256px_tp.py",
            *ONE_SAMPLE, "--dtype", "fp16", *WEIGHTS,
        ],
        env={"CUDA_VISIBLE_DEVICES": "0,1", "PYTHONPATH": "{repo}"},
        timeout=1200,
        launcher="torchrun",
        nproc=2,
        min_gpus=2,
        entrypoint="scripts/diffusion/inference.py",
        note=(
            "Uses the repo's tensor-parallel inference config 256px_tp.py. Device list from the "
            "probe's --gpus flag (default 0,1), nproc = its length; gate counts GPUs with torch "
            "under the report python." + SETUP_NOTE
        ),
        setup=SETUP,
        shim_dir=SHIMS,
    ),
)
