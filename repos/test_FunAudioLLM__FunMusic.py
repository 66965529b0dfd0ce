"""FunMusic — InspireMusic text-to-music generation and training code.

Repository: https://github.com/FunAudioLLM/FunMusic
Commit: 0aefb55b58b8df91accdc4aed20c99e44741e0a7
Domain: audio: text-to-music generation (InspireMusic code)
Category: 3_single_gpu+multi_gpu (tiers that apply: C0 C2 C3 C4 C5)

C1 does not apply (CSV: not_applicable). C3 generates one second of music with InspireMusic-Base (a
large Hugging Face snapshot: llm.pt, music tokenizer, WavTokenizer); C4 trains the flow model for
one step with torchrun and DDP. Both stages read files the official prepare step generated under
{assets} (shim): a trimmed copy of the repository's music-generation YAML and a one-row parquet
list. The asset view holds the raw repository files (the sample parquet at
{assets}/dataset/inspiremusic_samples/parquet_000000000.tar, the training YAML at
{assets}/model/inspiremusic.yaml, both copied from the checkout); our setup step
(shims/make_inputs.py) does the prepare step's post-processing on them into {out} before each run,
so the argv names the results there (TOKENS). The third_party/Matcha-TTS submodule must be present
(it is on PYTHONPATH).
"""

from pytest_reb import SHIMS, Asset, C2Variant, CompatVariant, Repo, Run, hf_asset

# Our rewrite of the official shim (the prepare step's YAML and list), mounted read-only.

#: The files the official prepare step generated under {assets}, as our setup writes them.
CONFIG = "{out}/inspiremusic_benchmark.yaml"
DATA_LIST = "{out}/data_1row.list"

#: How this module spells what the reference argv leaves to run time.
TOKENS = {
    "{assets}/model/InspireMusic-Base/inspiremusic_benchmark.yaml": [CONFIG],
    "{assets}/dataset/inspiremusic_samples/data_1row.list": [DATA_LIST],
}

#: The setup step of both stages: the benchmark YAML, the one-row parquet and its list in {out}.
MAKE_INPUTS = ["{python}", "{shims}/make_inputs.py", "{out}",
               "--yaml", "{assets}/model/inspiremusic.yaml",
               "--parquet", "{assets}/dataset/inspiremusic_samples/parquet_000000000.tar",
               "--model-dir", "{assets}/model/InspireMusic-Base"]

#: Environment shared by every stage.
ENV = {
    "PYTHONIOENCODING": "UTF-8",
    "PYTHONPATH": "{repo}:{repo}/third_party/Matcha-TTS",
    "TOKENIZERS_PARALLELISM": "false",
}

repo = Repo(
    "FunAudioLLM/FunMusic",
    commit="0aefb55b58b8df91accdc4aed20c99e44741e0a7",
    c2_compat=C2Variant(missing="runtime", not_executable="runtime", directory="runtime",
        timeout="runtime", crashed="runtime", failed="runtime", silent="runtime",
        garbage="runtime"),
    c5_compat=CompatVariant(missing_report_path=2, invalid_report_path=2, non_object_crash=True,
        # a failed import is an item, and a torch_version claim beside it another
        torch_needs_version=False, torch_needs_file=True,
        version_claim="truthy", torch_claim="truthy",
        torch_import="always",
        torch_failed_claim_item=True, gpu_count_coerce=True, gpu_from="probe_or_stage",
        gpu_observed_coerce=True, ddp_without_count=True, ddp_underclaim=True),
    imports_total=74,  # the C0 denominator
    domain="audio: text-to-music generation (InspireMusic code)",
    assets=[
        Asset(
            "inspiremusic_samples", "dataset", "repo",
            path="examples/music_generation/data/samples/parquet/parquet_000000000.tar",
            dest="dataset/inspiremusic_samples/",  # the raw parquet tar; setup slices it
            note=(
                "sliced with pyarrow (report python) to a one-row parquet plus a list file "
                "{assets}/dataset/inspiremusic_samples/data_1row.list"
            ),
        ),
        hf_asset(
            "InspireMusic-Base", "FunAudioLLM/InspireMusic-Base",
            dest="model/InspireMusic-Base",
            note=(
                "full snapshot_download (large: llm.pt, music_tokenizer/, wavtokenizer/), linked "
                "at {assets}/model/InspireMusic-Base; override id via HF_REPO_ID"
            ),
        ),
        Asset(
            "benchmark_config", "config", "repo",
            path="examples/music_generation/conf/inspiremusic.yaml",
            dest="model/",  # raw; setup rewrites
            note=(
                "rewritten to {assets}/model/InspireMusic-Base/inspiremusic_benchmark.yaml: "
                "basemodel_path/generator_path point at the model folder, max_epoch 1, accum_grad "
                "1, log_interval 1, save_per_step 0, min_acoustic_length 1, min_length 1"
            ),
        ),
    ],
    cpu=None,  # C1 does not apply: not_applicable
    single_gpu=Run(
        [
            "{python}", "inspiremusic/bin/inference.py",
            "--task", "text-to-music", "--gpu", "0",
            "--config", CONFIG,
            "--prompt_data", DATA_LIST,
            "--llm_model", "{assets}/model/InspireMusic-Base/llm.pt",
            "--music_tokenizer", "{assets}/model/InspireMusic-Base/music_tokenizer",
            "--wavtokenizer", "{assets}/model/InspireMusic-Base/wavtokenizer",
            "--result_dir", "{out}/infer_out",
            "--chorus", "intro", "--fast",
            "--min_generate_audio_seconds", "0.0",
            "--max_generate_audio_seconds", "1.0",
            "--output_sample_rate", "24000",
            "--format", "wav",
        ],
        env={"CUDA_VISIBLE_DEVICES": "0", **ENV},
        timeout=600,
        entrypoint="inspiremusic/bin/inference.py",
        setup=[MAKE_INPUTS],
        shim=(
            "The prepare step writes a trimmed copy of the repo's music-generation YAML (one "
            "epoch, no accumulation, relaxed length filters, paths pointing at the downloaded "
            "model) and a one-row parquet list; both stages use these generated files."
        ),
        shim_dir=SHIMS,
        note=(
            "CUDA_VISIBLE_DEVICES comes from GPU_ID (default 0). Our setup writes, from the "
            "raw copies {assets}/model/inspiremusic.yaml and "
            "{assets}/dataset/inspiremusic_samples/parquet_000000000.tar, "
            "{out}/inspiremusic_benchmark.yaml (the prepare step's edits: basemodel_path "
            "{assets}/model/InspireMusic-Base/, generator_path its music_tokenizer, max_epoch 1, "
            "accum_grad 1, log_interval 1, save_per_step 0, min_acoustic_length 1, min_length 1), "
            "the first row of the sample parquet as "
            "{out}/parquet_000000000_1row.parquet (pyarrow, which the repository's data pipeline "
            "imports anyway) and {out}/data_1row.list naming it."
        ),
    ),
    multi_gpu=Run(
        [
            "{python}", "-m", "torch.distributed.run",
            "--nnodes=1", "--nproc_per_node=2", "--rdzv_id=1024", "--rdzv_backend=c10d",
            "--rdzv_endpoint=localhost:0",
            "inspiremusic/bin/train.py",
            "--train_engine", "torch_ddp",
            "--config", CONFIG,
            "--train_data", DATA_LIST,
            "--cv_data", DATA_LIST,
            "--model", "flow",
            "--model_dir", "{out}/model_dir",
            "--tensorboard_dir", "{out}/tensorboard",
            "--ddp.dist_backend", "nccl", "--num_workers", "1", "--prefetch", "2",
            "--pin_memory",
        ],
        env={"CUDA_VISIBLE_DEVICES": "0,1", **ENV},
        timeout=1200,
        launcher="torchrun",
        nproc=2,
        min_gpus=2,
        entrypoint="inspiremusic/bin/train.py",
        setup=[MAKE_INPUTS],
        shim=(
            "Uses the same generated benchmark YAML and one-row parquet list as the single-GPU "
            "stage."
        ),
        note=(
            "nproc equals the number of ids in the device list (MULTI_GPU_CUDA_VISIBLE_DEVICES or "
            "--gpus, default 0,1); GPU gate is torch.cuda.device_count() under the report python. "
            "The flow model is trained to keep the checkpoint small. Our setup writes the same "
            "three files as in the single-GPU stage."
        ),
        shim_dir=SHIMS,
    ),
)
