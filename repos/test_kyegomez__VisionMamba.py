"""VisionMamba — a Vision Mamba model (random-init forward pass).

Repository: https://github.com/kyegomez/VisionMamba
Commit: c88e09a52240910e08c4af754d340ad946112487
Domain: vision Mamba model code, random-init forward pass
Category: 3_single_gpu+multi_gpu (tiers that apply: C0 C1 C2 C3 C4 C5)

Every stage runs example.py through a harness driver that patches
vision_mamba.model.VisionEncoderMambaBlock at run time (the repository's own example passes a
'heads' keyword the class rejects) and skips its debug prints; the C1 and C3 drivers are inline
code (<inline: ...> tokens), C4 a generated launcher plus torchrun worker in {out}. Nothing needs
network: the assets are a repository image and a generated config.
"""

from pytest_reb import Asset, Repo, Run

repo = Repo(
    "kyegomez/VisionMamba",
    commit="c88e09a52240910e08c4af754d340ad946112487",
    imports_total=4,  # the C0 denominator
    domain="vision Mamba model code, random-init forward pass",
    assets=[
        Asset(
            "agorabanner", "dataset", "repo",
            path="agorabanner.png",
            note=(
                "recorded as the dataset artifact only (SCIMLOPSBENCH_DATASET_URL can replace it); "
                "not read by example.py"
            ),
        ),
        Asset(
            "model_config", "config", "synthetic",
            path="{assets}/model/model_config.json",
            note=(
                "generated config (dim 256, dim_inner 256, depth 12, ...) recorded as the model "
                "artifact; no weights (SCIMLOPSBENCH_MODEL_URL optional); asset paths listed in "
                "{assets}/assets.json"
            ),
        ),
    ],
    cpu=Run(
        [
            "{python}", "-c",
            (
                "<inline: set torch default device cpu, patch "
                "vision_mamba.model.VisionEncoderMambaBlock, then run example.py as __main__>"
            ),
        ],
        env={"CUDA_VISIBLE_DEVICES": ""},
        timeout=600,
        entrypoint="example.py",
        shim=(
            "Inline driver: puts the repo root on sys.path, makes cpu torch's default device, "
            "patches VisionEncoderMambaBlock so its constructor drops the 'heads' keyword that the "
            "repo's own example passes (the class does not accept it) and replaces "
            "process_direction with an equivalent that skips the huge debug prints, then executes "
            "example.py."
        ),
    ),
    single_gpu=Run(
        [
            "{python}", "-c",
            (
                "<inline: same driver; exit 1 unless CUDA is available, set device 0 and default "
                "device cuda>"
            ),
        ],
        env={"CUDA_VISIBLE_DEVICES": "0"},
        timeout=600,
        min_gpus=1,
        entrypoint="example.py",
        shim=(
            "Same inline patching driver as the CPU stage, with cuda as the default device; exits "
            "1 if torch reports no CUDA."
        ),
    ),
    multi_gpu=Run(
        ["{python}", "{out}/multi_gpu_impl.py"],
        env={"CUDA_VISIBLE_DEVICES": "0,1", "NPROC": "2", "WORKER": "{out}/torchrun_worker.py"},
        timeout=1200,
        launcher="torchrun",
        nproc=2,
        min_gpus=2,
        entrypoint="example.py",
        shim=(
            "A generated launcher checks torch sees CUDA with at least 2 devices and then runs "
            "'{python} -m torch.distributed.run --standalone --nproc_per_node 2 "
            "{out}/torchrun_worker.py'; the generated worker sets its CUDA device from LOCAL_RANK, "
            "applies the same VisionEncoderMambaBlock patches and runs example.py (independent per "
            "rank, no collective)."
        ),
        note="Devices override SCIMLOPSBENCH_MULTI_GPU_DEVICES; nproc = number of ids.",
    ),
)
