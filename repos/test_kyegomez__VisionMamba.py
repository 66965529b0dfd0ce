"""VisionMamba — a Vision Mamba model (random-init forward pass).

Repository: https://github.com/kyegomez/VisionMamba
Commit: c88e09a52240910e08c4af754d340ad946112487
Domain: vision Mamba model code, random-init forward pass
Category: 3_single_gpu+multi_gpu (tiers that apply: C0 C1 C2 C3 C4 C5)

Every stage runs example.py through a harness driver that patches
vision_mamba.model.VisionEncoderMambaBlock at run time (the repository's own example passes a
'heads' keyword the class rejects) and skips its debug prints. Our rewrites live in
repos/shims/test_kyegomez__VisionMamba: run_example.py replaces the inline C1/C3 drivers
(``--device cpu|cuda``), multi_gpu_impl.py and torchrun_worker.py the launcher and worker the
official C4 stage generated in {out}; vim_patch.py holds the shared patches. Nothing needs
network: the assets are a repository image and a generated config, and no stage reads them.
"""

from pytest_reb import SHIMS, Asset, C2Variant, CompatVariant, Repo, Run, Synthetic

# Our rewrites of the official drivers, mounted read-only at {repo}/benchmark_scripts.

#: How this module spells what the reference argv leaves to run time: the inline drivers become
#: run_example.py, the launcher and worker generated in {out} become our files in {shims}.
TOKENS = {
    "-c": [],
    (
        "<inline: set torch default device cpu, patch "
        "vision_mamba.model.VisionEncoderMambaBlock, then run example.py as __main__>"
    ): ["{shims}/run_example.py", "--device", "cpu"],
    (
        "<inline: same driver; exit 1 unless CUDA is available, set device 0 and default "
        "device cuda>"
    ): ["{shims}/run_example.py", "--device", "cuda"],
    "{out}/multi_gpu_impl.py": ["{shims}/multi_gpu_impl.py"],
    "{out}/torchrun_worker.py": ["{shims}/torchrun_worker.py"],
}

repo = Repo(
    "kyegomez/VisionMamba",
    commit="c88e09a52240910e08c4af754d340ad946112487",
    c2_compat=C2Variant(failed_exit="fails", no_python="missing_report:none",
        missing="unknown:none", not_executable="unknown:none", directory="unknown:none",
        timeout="timeout:none", crashed="runtime:none", failed="runtime:none",
        silent="success:none", garbage="success:none"),
    # an unreadable report is read as {} (python_path missing: one item); dict() of a JSON
    # array, string or number dies, but of ``[]`` or ``""`` it is {} (one item)
    c5_compat=CompatVariant(missing_report_path=1, invalid_report_path=1, non_object_crash=True,
        non_object_dict=True,
        directory_crash=True,
        torch_needs_version=False, version_claim="truthy", torch_claim="truthy",
        torch_import="always", cuda_from="observed_bool", gpu_observed_coerce=True,
        gpu_null_zero=True, ddp_without_count=True, no_block="status_zero"),
    imports_total=4,  # the C0 denominator
    domain="vision Mamba model code, random-init forward pass",
    assets=[
        Asset(
            "agorabanner", "dataset", "repo",
            path="agorabanner.png",
            dest="dataset/",
            optional=True,
            note=(
                "recorded as the dataset artifact only (SCIMLOPSBENCH_DATASET_URL can replace it); "
                "not read by example.py"
            ),
        ),
        Asset(
            "model_config", "config", "synthetic",
            path="{assets}/model/model_config.json",
            dest="model/model_config.json",
            optional=True,
            synthetic=Synthetic.json({
                "dim": 256, "dim_inner": 256, "depth": 12,
                "note": "recorded as the model artifact only; example.py builds its own model"}),
            note=(
                "generated config (dim 256, dim_inner 256, depth 12, ...) recorded as the model "
                "artifact; no weights (SCIMLOPSBENCH_MODEL_URL optional); asset paths listed in "
                "{assets}/assets.json"
            ),
        ),
    ],
    cpu=Run(
        ["{python}", "{shims}/run_example.py", "--device", "cpu"],
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
        shim_dir=SHIMS,
        note="run_example.py --device cpu is the inline driver (vim_patch.py: the patches).",
    ),
    single_gpu=Run(
        ["{python}", "{shims}/run_example.py", "--device", "cuda"],
        env={"CUDA_VISIBLE_DEVICES": "0"},
        timeout=600,
        min_gpus=1,
        entrypoint="example.py",
        shim=(
            "Same inline patching driver as the CPU stage, with cuda as the default device; exits "
            "1 if torch reports no CUDA."
        ),
        shim_dir=SHIMS,
        note=(
            "run_example.py --device cuda: exit 1 without CUDA, torch.cuda.set_device(0), default "
            "device cuda, the same patches, example.py."
        ),
    ),
    multi_gpu=Run(
        ["{python}", "{shims}/multi_gpu_impl.py"],
        env={"CUDA_VISIBLE_DEVICES": "0,1", "NPROC": "2", "WORKER": "{shims}/torchrun_worker.py"},
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
        shim_dir=SHIMS,
        note=(
            "Devices override SCIMLOPSBENCH_MULTI_GPU_DEVICES; nproc = number of ids. "
            "Our multi_gpu_impl.py (the launcher, NPROC and WORKER from the env) and "
            "torchrun_worker.py (LOCAL_RANK's device, default device cuda, the patches, "
            "example.py) come from {shims} instead of being generated in {out}."
        ),
    ),
)
