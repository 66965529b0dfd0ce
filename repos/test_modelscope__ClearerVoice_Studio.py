"""ClearerVoice-Studio — speech enhancement and separation (FRCRN training code).

Repository: https://github.com/modelscope/ClearerVoice-Studio
Commit: 6b3774dc79c46ae8bed2a4fa5f706f0ac8c75c61
Domain: audio: speech enhancement/separation (FRCRN training code)
Category: 3_single_gpu+multi_gpu (tiers that apply: C0 C1 C2 C3 C4 C5)

All stages run train/speech_enhancement/train.py from that folder with zero epochs on the
repository's sample wav, initialised from the FRCRN_SE_16K checkpoint (Hugging Face). A setup
step (shims/.../frcrn_checkpoint.py) picks that checkpoint with the official preference order and
writes its path to {out}/frcrn_checkpoint, read back as {file:...} for --init_checkpoint_path.
C4 goes through our rewrite of the harness wrapper (torchrun_train_wrapper.py: --local_rank ->
--local-rank, a rank<N> checkpoint subfolder for non-zero ranks, chdir and train.py run as
__main__) on DDP-safe scp lists written by setup (ddp_scp.py); its master port, officially '29'
plus the wall-clock second, is our free {port}. The sample wav is the prepared asset
{assets}/dataset/input.wav (copied from clearvoice/samples/input.wav); the train.scp and cv.scp
lists the official prepare wrote beside it are written by every stage's setup (make_scp.py) into
{out}, so the argv names them there (TOKENS).
"""

from pytest_reb import SHIMS, Asset, C2Variant, CompatVariant, Repo, Run, hf_asset

# Our rewrite of the official wrapper and of the probe's generated inputs.

#: How this module spells what the reference argv leaves to run time.
TOKENS = {
    "<prepared FRCRN checkpoint>": ["{file:{out}/frcrn_checkpoint}"],
    "29<SS>": ["{port}"],
    "{repo}/benchmark_scripts/torchrun_train_wrapper.py": ["{shims}/torchrun_train_wrapper.py"],
    "{assets}/dataset/train.scp": ["{out}/train.scp"],
    "{assets}/dataset/cv.scp": ["{out}/cv.scp"],
}

#: Every stage: the checkpoint path (official order: last_best_checkpoint.pt, the file named in
#: last_best_checkpoint, the first *.pt; in the official model/FRCRN_SE_16K link, else the
#: snapshot it linked), then the checkpoint folder the probe made, then the prepare step's
#: one-line train.scp and cv.scp naming the prepared wav as noisy and clean.
SETUP = [
    ["{python}", "{shims}/frcrn_checkpoint.py", "{out}/frcrn_checkpoint",
     "{assets}/model/FRCRN_SE_16K", "{assets}/cache/hf_models/FRCRN_SE_16K"],
    ["mkdir", "-p", "{out}/checkpoints"],
    ["{python}", "{shims}/make_scp.py", "{assets}/dataset/input.wav",
     "{out}/train.scp", "{out}/cv.scp"],
]

#: C4 also gets scp lists with the first line once per rank (2 ranks).
DDP_SETUP = [
    *SETUP,
    ["{python}", "{shims}/ddp_scp.py", "2", "{out}/train.scp", "{out}/train_ddp.scp"],
    ["{python}", "{shims}/ddp_scp.py", "2", "{out}/cv.scp", "{out}/cv_ddp.scp"],
]

#: Environment shared by every stage.
ENV = {
    "PYTHONPYCACHEPREFIX": "{assets}/cache/pycache",
    "XDG_CACHE_HOME": "{assets}/cache/xdg",
    "TORCH_HOME": "{assets}/cache/torch",
    "HF_HOME": "{assets}/cache/hf",
    "HUGGINGFACE_HUB_CACHE": "{assets}/cache/hf",
}

#: The FRCRN config every stage trains; the scp lists follow it.
CONFIG = [
    "--config", "{repo}/train/speech_enhancement/config/train/FRCRN_SE_16K.yaml",
    "--network", "FRCRN_SE_16K",
]

#: The prepared checkpoint, after the scp lists.
CHECKPOINT = [
    "--checkpoint_dir", "{out}/checkpoints",
    "--init_checkpoint_path", "{file:{out}/frcrn_checkpoint}",
]

#: The options after --use-cuda: batch 1, zero epochs, no checkpoint saved.
ZERO_EPOCHS = [
    "--batch_size", "1", "--accu_grad", "0",
    "--effec_batch_size", "1", "--num_workers", "0", "--max-epoch", "0",
    "--print_freq", "1",
    "--checkpoint_save_freq", "1000000",
]

#: What the <prepared FRCRN checkpoint> token of every stage stands for.
PREPARED_CHECKPOINT = (
    "--init_checkpoint_path is the checkpoint prepare recorded as meta.model_checkpoint_path "
    "(see the FRCRN_SE_16K asset); our setup step shims/frcrn_checkpoint.py picks it the same "
    "way and writes its path to {out}/frcrn_checkpoint. The train.scp and cv.scp lists the "
    "official prepare wrote to {assets}/dataset are written by our setup (shims/make_scp.py) to "
    "{out}: one line naming the prepared {assets}/dataset/input.wav as noisy and clean."
)

repo = Repo(
    "modelscope/ClearerVoice-Studio",
    commit="6b3774dc79c46ae8bed2a4fa5f706f0ac8c75c61",
    c2_compat=C2Variant(no_device="fails", failed_exit="unavailable",
        no_python="missing_report", missing="deps", not_executable="deps", directory="deps",
        timeout="deps", crashed="deps", failed="deps", silent="deps", garbage="deps"),
    # ``dict(report)``: {} of ``[]`` or ``""`` (python_path missing), any other JSON array,
    # string or number stops the validator
    c5_compat=CompatVariant(non_object_crash=True, non_object_dict=True,
        strip_path=True, silent_python_ok=False, version_claim="truthy",
        version_strip=True, torch_claim="truthy", torch_strip=True, torch_import="always",
        gpu_count_coerce=True, gpu_from="probe"),
    imports_total=89,  # the C0 denominator
    domain="audio: speech enhancement/separation (FRCRN training code)",
    assets=[
        Asset(
            "input_wav", "dataset", "repo",
            path="clearvoice/samples/input.wav",
            dest="dataset/input.wav",
            note=(
                "copied to {assets}/dataset/input.wav; {assets}/dataset/train.scp and cv.scp each "
                "list that file as both noisy and clean"
            ),
        ),
        hf_asset(
            "FRCRN_SE_16K", "alibabasglab/FRCRN_SE_16K",
            files=[
                "*.pt", "last_best_checkpoint*", "last_checkpoint*", "*.json", "*.yaml", "*.txt",
            ],
            dest="cache/hf_models/FRCRN_SE_16K",
            note=(
                "allow-pattern snapshot into {assets}/cache/hf_models/FRCRN_SE_16K; the checkpoint "
                "passed as --init_checkpoint_path is last_best_checkpoint.pt, else the file named "
                "inside last_best_checkpoint, else the first *.pt (recorded as "
                "meta.model_checkpoint_path)"
            ),
        ),
    ],
    cpu=Run(
        [
            "{python}", "train.py", *CONFIG,
            "--tr-list", "{out}/train.scp",
            "--cv-list", "{out}/cv.scp",
            *CHECKPOINT, "--use-cuda", "0", *ZERO_EPOCHS,
        ],
        cwd="{repo}/train/speech_enhancement",
        env={"CUDA_VISIBLE_DEVICES": "", "OMP_NUM_THREADS": "1", **ENV},
        timeout=600,
        entrypoint="train/speech_enhancement/train.py",
        setup=SETUP,
        shim_dir=SHIMS,
        note=PREPARED_CHECKPOINT,
    ),
    single_gpu=Run(
        [
            "{python}", "train.py", *CONFIG,
            "--tr-list", "{out}/train.scp",
            "--cv-list", "{out}/cv.scp",
            *CHECKPOINT, "--use-cuda", "1", *ZERO_EPOCHS,
        ],
        cwd="{repo}/train/speech_enhancement",
        env={"CUDA_VISIBLE_DEVICES": "0", **ENV},
        timeout=600,
        entrypoint="train/speech_enhancement/train.py",
        setup=SETUP,
        shim_dir=SHIMS,
        note="Device id overridable with the probe's --cuda-device flag. " + PREPARED_CHECKPOINT,
    ),
    multi_gpu=Run(
        [
            "{python}", "-m", "torch.distributed.run",
            "--nproc_per_node", "2",
            "--master_port", "{port}",
            "{shims}/torchrun_train_wrapper.py", *CONFIG,
            "--tr-list", "{out}/train_ddp.scp",
            "--cv-list", "{out}/cv_ddp.scp",
            *CHECKPOINT, "--use-cuda", "1", *ZERO_EPOCHS,
        ],
        cwd="{repo}/train/speech_enhancement",
        env={"CUDA_VISIBLE_DEVICES": "0,1", "OMP_NUM_THREADS": "1", **ENV},
        timeout=1200,
        launcher="torchrun",
        nproc=2,
        min_gpus=2,
        entrypoint="train/speech_enhancement/train.py",
        setup=DDP_SETUP,
        shim_dir=SHIMS,
        shim=(
            "A harness wrapper script turns torchrun's --local_rank argument into the repo's "
            "--local-rank flag, gives non-zero ranks their own checkpoint subfolder (rank<N>), "
            "changes into train/speech_enhancement and executes train.py as __main__. The probe "
            "also writes DDP-safe scp lists in {out} that repeat the single line once per rank."
        ),
        note=(
            "Master port is '29' followed by the current wall-clock second (so 2900-2959). Probe "
            "flags --cuda-devices (0,1) and --nproc (2); gate needs torch to see >= 2 and >= nproc "
            "GPUs. " + PREPARED_CHECKPOINT + " Ours: the master port is {port}; setup writes "
            "{out}/train_ddp.scp and {out}/cv_ddp.scp (shims/ddp_scp.py: the first line of the "
            "list written to {out} twice) and torchrun starts shims/torchrun_train_wrapper.py, our "
            "rewrite of the harness wrapper."
        ),
    ),
)
