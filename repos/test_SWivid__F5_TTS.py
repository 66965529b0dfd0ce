"""F5-TTS — flow-matching diffusion-transformer text-to-speech.

Repository: https://github.com/SWivid/F5-TTS
Commit: 27e20fcf39fbce3f187a61d4a3e92065d2d9b947
Domain: audio: text-to-speech (flow-matching DiT)
Category: 3_single_gpu+multi_gpu (tiers that apply: C0 C1 C2 C3 C4 C5)

C1 and C3 synthesise one sentence with F5TTS_v1_Base (about 1.3 GB) and the vocos vocoder, both
from the Hugging Face hub and read offline from the prepared cache. C4 trains F5TTS_Small for one
epoch on a one-sample dataset through accelerate launch.

The prepared view holds the repository's basic_ref_en.wav as {assets}/dataset/infer_minimal/
ref_audio.wav, which C1 and C3 read as is (their texts are in argv). infer_cli loads the vocoder by
hub id, offline: C1's and C3's setup step (shims/vocos_hub_cache.py) links the prepared copy
{assets}/model/vocos-mel-24khz into the HF cache as the official prepare's download left it.
C4's setup step
(shims/make_train_set.py, under the report's python: it imports f5_tts and datasets) builds the
training set the official prepare built, {out}/f5tts_minimal_pinyin (raw.arrow, duration.json,
vocab.txt), and the datasets.name that reaches it: F5 only finds a set as
<checkout>/data/<name>_pinyin, so the official relative name ../benchmark_assets/dataset/
f5tts_minimal becomes a relative path to {out}, read at run time from {out}/f5tts_dataset_name.
"""

from pytest_reb import SHIMS, Asset, C2Variant, CompatVariant, Repo, Run, hf_asset

# Our setup script that builds C4's training set from the prepared wav.

#: How this module spells what the reference argv leaves to run time: the training set's name,
#: relative to F5's data folder, is the one the setup step wrote (it leads to {out}).
TOKENS = {
    "datasets.name=../benchmark_assets/dataset/f5tts_minimal": [
        "datasets.name={file:{out}/f5tts_dataset_name}"],
}

#: Environment shared by every stage.
ENV = {
    "PYTHONPATH": "{repo}/src",
    "XDG_CACHE_HOME": "{assets}/cache/xdg",
    "HF_HOME": "{assets}/cache/huggingface",
    "HF_HUB_CACHE": "{assets}/cache/huggingface/hub",
    "HUGGINGFACE_HUB_CACHE": "{assets}/cache/huggingface/hub",
    "HF_DATASETS_CACHE": "{assets}/cache/huggingface/datasets",
    "TRANSFORMERS_CACHE": "{assets}/cache/huggingface/transformers",
    "TORCH_HOME": "{assets}/cache/torch",
    "WANDB_DIR": "{assets}/cache/wandb",
    "WANDB_MODE": "offline",
    "PYTHONUNBUFFERED": "1",
    "PYTHONDONTWRITEBYTECODE": "1",
}

#: The inference stages (C1, C3) read the prepared HF cache offline.
OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}

#: Before inference (C1, C3): the vocoder's hub-cache entry the official prepare's download left
#: in HF_HUB_CACHE, laid out from the prepared copy {assets}/model/vocos-mel-24khz (our setup
#: step: infer_cli loads the vocoder by hub id, offline, and the asset is declared at the copy).
VOCOS_CACHE = [[
    "{python}", "{shims}/vocos_hub_cache.py", "--copy", "{assets}/model/vocos-mel-24khz",
    "--hub", "{assets}/cache/huggingface/hub",
]]

#: What that setup step does, in the inference stages' notes.
VOCOS_NOTE = (
    " Our setup step (shims/vocos_hub_cache.py) links the prepared vocoder copy into "
    "{assets}/cache/huggingface/hub as models--charactr--vocos-mel-24khz (refs/main and a "
    "snapshot), where load_vocoder's offline hf_hub_download looks for it by id."
)

#: infer_cli and its options before --output_file (C1, C3): one sentence in the reference voice.
INFER = [
    "{python}", "-m", "f5_tts.infer.infer_cli",
    "--model", "F5TTS_v1_Base",
    "--ckpt_file", "{assets}/model/F5TTS_v1_Base/model_1250000.safetensors",
    "--ref_audio", "{assets}/dataset/infer_minimal/ref_audio.wav",
    "--ref_text", "Some call me nature, others call me mother nature.",
    "--gen_text", "Here we generate something just for test.",
    "--output_dir", "{out}/out",
]

repo = Repo(
    "SWivid/F5-TTS",
    commit="27e20fcf39fbce3f187a61d4a3e92065d2d9b947",
    c2_compat=C2Variant(failed_exit="nulls", no_python="missing_report:null",
        missing="path_hallucination:null", not_executable="path_hallucination:null",
        directory="path_hallucination:null", timeout="runtime:null", crashed="runtime:null",
        failed="path_hallucination:null", silent="runtime:null", garbage="runtime:null"),
    # python_version is compared only with a version that printed, torch_version with "" too;
    # a multi_gpu stage with no command is "not actionable", any other failure counts
    c5_compat=CompatVariant(directory_crash=True, version_strip=True, torch_strip=True,
        torch_compare_empty=True, ddp_needs_command=True),
    imports_total=87,  # the C0 denominator
    domain="audio: text-to-speech (flow-matching DiT)",
    assets=[
        Asset(
            "f5tts_minimal", "dataset", "repo",
            path="src/f5_tts/infer/examples/basic/basic_ref_en.wav",
            dest="dataset/infer_minimal/ref_audio.wav",
            note=(
                "builds {assets}/dataset/infer_minimal/ (ref_audio.wav, ref_text.txt = 'Some call "
                "me nature, others call me mother nature.', gen_text.txt = 'Here we generate "
                "something just for test.') and a one-sample training set "
                "{assets}/dataset/f5tts_minimal_pinyin (raw.arrow + duration.json via datasets "
                "ArrowWriter, vocab.txt copied from the package's data/Emilia_ZH_EN_pinyin); "
                "prepare imports f5_tts under the report python"
            ),
        ),
        hf_asset(
            "F5TTS_v1_Base", "SWivid/F5-TTS",
            files=["F5TTS_v1_Base/model_1250000.safetensors"],
            dest="model/F5TTS_v1_Base/model_1250000.safetensors",
            note=(
                "about 1.3 GB, hf_hub_download into the HF cache {assets}/cache/huggingface/hub "
                "and copied to {assets}/model/F5TTS_v1_Base/model_1250000.safetensors"
            ),
        ),
        hf_asset(
            "vocos-mel-24khz", "charactr/vocos-mel-24khz",
            files=["config.yaml", "pytorch_model.bin"],
            dest="model/vocos-mel-24khz",
            note=(
                "vocoder; copied to {assets}/model/vocos-mel-24khz and kept in the HF cache so the "
                "offline inference stages can resolve it by id"
            ),
        ),
    ],
    cpu=Run(
        [*INFER, "--output_file", "infer_cpu.wav", "--nfe_step", "1", "--device", "cpu"],
        env={"CUDA_VISIBLE_DEVICES": "", **OFFLINE, **ENV},
        timeout=600,
        entrypoint="src/f5_tts/infer/infer_cli.py",
        setup=VOCOS_CACHE,
        shim_dir=SHIMS,
        note=(
            "ref/gen texts are read from the prepared text files. The cache variables, WANDB "
            "settings and PYTHONPATH are defaults the probe's runner adds when not already set. "
            "The reference wav is the prepared asset itself; the texts are in argv, so no text "
            "files are written." + VOCOS_NOTE
        ),
    ),
    single_gpu=Run(
        [*INFER, "--output_file", "infer_single_gpu.wav", "--nfe_step", "1", "--device", "cuda"],
        env={"CUDA_VISIBLE_DEVICES": "0", **OFFLINE, **ENV},
        timeout=600,
        entrypoint="src/f5_tts/infer/infer_cli.py",
        setup=VOCOS_CACHE,
        shim_dir=SHIMS,
        note=VOCOS_NOTE.strip(),
    ),
    multi_gpu=Run(
        [
            "{python}", "-m", "accelerate.commands.launch",
            "--num_processes", "2", "--mixed_precision", "no", "--dynamo_backend", "no",
            "src/f5_tts/train/train.py",
            "--config-name", "F5TTS_Small.yaml",
            "hydra.run.dir={out}/hydra_run",
            "ckpts.save_dir={out}/ckpts",
            "ckpts.logger=null",
            "ckpts.log_samples=False",
            "ckpts.save_per_updates=999999",
            "ckpts.keep_last_n_checkpoints=0",
            "ckpts.last_per_updates=999999",
            "datasets.name={file:{out}/f5tts_dataset_name}",
            "datasets.batch_size_type=sample",
            "datasets.batch_size_per_gpu=1",
            "datasets.max_samples=1",
            "datasets.num_workers=1",
            "optim.epochs=1",
            "optim.num_warmup_updates=0",
            "optim.grad_accumulation_steps=1",
        ],
        env={"CUDA_VISIBLE_DEVICES": "0,1", **ENV},
        timeout=1200,
        launcher="accelerate",
        nproc=2,
        min_gpus=2,
        entrypoint="src/f5_tts/train/train.py",
        setup=[[
            "{python}", "{shims}/make_train_set.py",
            "--wav", "{assets}/dataset/infer_minimal/ref_audio.wav", "--out", "{out}",
        ]],
        shim_dir=SHIMS,
        note=(
            "datasets.name is relative so that F5's data path resolution lands on "
            "{assets}/dataset/f5tts_minimal_pinyin. hydra.run.dir and ckpts.save_dir are written "
            "as repo-relative build_output/multi_gpu/... in the real command. Probe flags "
            "--cuda-visible-devices and --num-processes override the defaults; the gate counts "
            "GPUs with torch under the report python. Our setup step builds that training set in "
            "{out}/f5tts_minimal_pinyin (two rows of the prepared wav, its pinyin text and "
            "duration; the checkout's pretrained vocab.txt) and writes the relative name that "
            "reaches it to {out}/f5tts_dataset_name."
        ),
    ),
)
