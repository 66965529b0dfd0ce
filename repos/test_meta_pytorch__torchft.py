"""torchft — per-step fault tolerance for PyTorch distributed training.

Repository: https://github.com/meta-pytorch/torchft
Commit: 86c42910df9140bdfee68fbba29233c3cab84288
Domain: distributed-training infrastructure (per-step fault tolerance, Rust lighthouse/manager)
Category: 3_single_gpu+multi_gpu (tiers that apply: C0 C1 C2 C3 C4 C5)

The stages run the README DDP example (train_ddp.py) on CIFAR-10, capped to one step by our
sitecustomize budget shim (repos/shims/test_meta_pytorch__torchft/sitecustomize.py: step cap on
Manager.current_step, batch 1 and 0 workers on StatefulDataLoader, CIFAR10 from the prepared
folder without download, nn.Embedding capped, CPU forced in C1, CUDA and the GPU count required
in C3/C4). Each stage is orchestrated: a Helper (lighthouse.py in the same folder) starts a torchft
LighthouseServer under the report python and exports its address as TORCHFT_LIGHTHOUSE (the
official <address printed by the lighthouse> token). C4 is two replica groups (two one-process
torchrun launches, REPLICA_GROUP_ID 0 and 1, ports 29600 and 29601) started together and sharing
that one lighthouse; both must exit 0. The Rust extension is built with maturin.
"""

from pytest_reb import SHIMS, Asset, C2Variant, CompatVariant, Helper, Repo, Run

# Our rewrite of the official shims (sitecustomize.py: the budget; lighthouse.py: the helper),
# mounted read-only at {repo}/benchmark_scripts.

#: How this module spells what the reference argv leaves to run time: the lighthouse address is
#: exported by the Helper below, so the variable is not part of the stage env.
TOKENS = {"<address printed by the lighthouse>": []}

#: The official background lighthouse (bind [::]:0, min_replicas 1, join_timeout_ms 60000); its
#: printed address becomes TORCHFT_LIGHTHOUSE for every command of the stage.
LIGHTHOUSE = Helper(
    ["{python}", "{shims}/lighthouse.py"],
    export="TORCHFT_LIGHTHOUSE",
    ready=r"TORCHFT_LIGHTHOUSE=(\S+)",
)

#: What our Helper does, appended to each stage note.
HELPER_NOTE = (
    " Here the Helper runs {shims}/lighthouse.py, which prints TORCHFT_LIGHTHOUSE=<address>; it "
    "waits up to 60 s for that line (the official loop waited 10 s)."
)

#: Environment shared by every stage.
ENV = {
    "PYTHONPATH": "{repo}/benchmark_scripts:{repo}",
    "SCIMLOPSBENCH_DATASET_DIR": "{assets}/dataset/cifar10",
    "SCIMLOPSBENCH_MODEL_DIR": "{assets}/model/squeezenet1_0",
    "SCIMLOPSBENCH_BATCH_SIZE": "1",
    "SCIMLOPSBENCH_NUM_WORKERS": "0",
    "SCIMLOPSBENCH_MAX_STEPS": "1",
    "SCIMLOPSBENCH_EMBEDDING_CAP": "1000",
}

#: One one-process torchrun launch; every stage adds its --master_port and the script.
TORCHRUN = [
    "{python}", "-m", "torch.distributed.run",
    "--standalone", "--nnodes", "1", "--nproc_per_node", "1",
]

#: Environment of both C4 replica groups, which add their REPLICA_GROUP_ID.
MULTI_ENV = {
    "CUDA_VISIBLE_DEVICES": "0,1",
    **ENV,
    "SCIMLOPSBENCH_FORCE_CPU": "0",
    "SCIMLOPSBENCH_REQUIRE_CUDA": "1",
    "SCIMLOPSBENCH_REQUIRE_MIN_GPU_COUNT": "2",
    "NUM_REPLICA_GROUPS": "2",
}

repo = Repo(
    "meta-pytorch/torchft",
    commit="86c42910df9140bdfee68fbba29233c3cab84288",
    # a version probe that exits 0 printing nothing stops it (stdout.splitlines()[-1])
    c2_compat=C2Variant(failed_exit="unavailable", no_python="missing_report",
        missing="path_hallucination", not_executable="runtime", directory="runtime",
        crashed="runtime", failed="runtime", silent="invalid_json", garbage="invalid_json"),
    c5_compat=CompatVariant(strip_path=True, directory_crash=True, silent_python_crash=True,
        version_claim="text_null",
        # a failed ``import torch`` is an item whatever torch_version says
        version_strip=True, torch_claim="text_null", torch_strip=True, torch_import="always",
        # torch is asked for JSON; an answer that is none is the version "", still compared
        torch_probe="json", probe_garbage="ignored", torch_compare_empty=True,
        gpu_from="stage_or_probe", gpu_needs_stage="file",
        gpu_observed_coerce=True, gpu_null_zero=True),  # int(count or 0)
    imports_total=58,  # the C0 denominator
    domain=(
        "distributed-training infrastructure (per-step "
        "fault tolerance, Rust lighthouse/manager)"
    ),
    assets=[
        Asset(
            "cifar10", "dataset", "url",
            url="https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz",
            dest="dataset/cifar10",
            extract=True,
            note=(
                "about 170 MB, extracted to {assets}/dataset/cifar10/cifar-10-batches-py; the "
                "sitecustomize shim points torchvision's CIFAR10 at this folder with download "
                "disabled"
            ),
        ),
        Asset(
            "squeezenet1_0", "model", "url",
            url="https://download.pytorch.org/models/squeezenet1_0-b66bff10.pth",
            dest="model/squeezenet1_0/squeezenet1_0-b66bff10.pth",
            optional=True,
            note=(
                "stored at {assets}/model/squeezenet1_0/squeezenet1_0-b66bff10.pth; recorded, not "
                "essential to the run; paths listed in {assets}/manifest.json"
            ),
        ),
    ],
    cpu=Run(
        [*TORCHRUN, "--master_port", "29501", "{repo}/train_ddp.py"],
        cwd="{out}/workdir",
        env={
            "CUDA_VISIBLE_DEVICES": "",
            "XPU_VISIBLE_DEVICES": "",
            **ENV,
            "SCIMLOPSBENCH_FORCE_CPU": "1",
            "SCIMLOPSBENCH_REQUIRE_CUDA": "0",
            "SCIMLOPSBENCH_REQUIRE_MIN_GPU_COUNT": "",
            "REPLICA_GROUP_ID": "0",
            "NUM_REPLICA_GROUPS": "1",
        },
        timeout=600,
        launcher="orchestrated",
        entrypoint="train_ddp.py",
        shim=(
            "A sitecustomize.py in the probe folder (first on PYTHONPATH) enforces the budget "
            "without editing the repo: caps the loop by patching torchft Manager.current_step (max "
            "steps 1), forces batch size 1 and 0 workers on torchdata's StatefulDataLoader, "
            "redirects torchvision CIFAR10 to the prepared folder with download off, caps "
            "nn.Embedding size at 1000, and in the CPU stage blocks later attempts to set "
            "CUDA_VISIBLE_DEVICES. It can also demand CUDA / a minimum GPU count via the REQUIRE "
            "variables."
        ),
        note=(
            "Before torchrun the probe starts a torchft LighthouseServer in the background under "
            "the report python (bind [::]:0, min_replicas 1, join_timeout_ms 60000), reads its "
            "address into TORCHFT_LIGHTHOUSE, and kills it afterwards. This is the README DDP "
            "example." + HELPER_NOTE + " Our sitecustomize empties CUDA_VISIBLE_DEVICES and "
            "XPU_VISIBLE_DEVICES whenever train_ddp.py sets them, so the run stays on the CPU "
            "(Gloo)."
        ),
        helpers=[LIGHTHOUSE],
        shim_dir=SHIMS,
    ),
    single_gpu=Run(
        [*TORCHRUN, "--master_port", "29502", "{repo}/train_ddp.py"],
        cwd="{out}/workdir",
        env={
            "CUDA_VISIBLE_DEVICES": "0",
            **ENV,
            "SCIMLOPSBENCH_FORCE_CPU": "0",
            "SCIMLOPSBENCH_REQUIRE_CUDA": "1",
            "SCIMLOPSBENCH_REQUIRE_MIN_GPU_COUNT": "1",
            "REPLICA_GROUP_ID": "0",
            "NUM_REPLICA_GROUPS": "1",
        },
        timeout=600,
        launcher="orchestrated",
        min_gpus=1,
        entrypoint="train_ddp.py",
        shim=(
            "Same sitecustomize budget shim; here it requires CUDA with at least 1 GPU instead of "
            "forcing CPU."
        ),
        note=(
            "Same background lighthouse as the CPU stage." + HELPER_NOTE + " The GPU requirement "
            "is checked when torch is first imported (torchrun's launcher and the lighthouse); "
            "a missing GPU fails the stage there."
        ),
        helpers=[LIGHTHOUSE],
        shim_dir=SHIMS,
    ),
    multi_gpu=Run(
        [*TORCHRUN, "--master_port", "29600", "{repo}/train_ddp.py"],
        cwd="{out}/workdir",
        env={**MULTI_ENV, "REPLICA_GROUP_ID": "0"},
        timeout=1200,
        launcher="orchestrated",
        nproc=2,
        min_gpus=2,
        entrypoint="train_ddp.py",
        together=[
            Run(
                [*TORCHRUN, "--master_port", "29601", "{repo}/train_ddp.py"],
                cwd="{out}/workdir",
                env={**MULTI_ENV, "REPLICA_GROUP_ID": "1"},
                timeout=1200,
                launcher="orchestrated",
                entrypoint="train_ddp.py",
                shim_dir=SHIMS,
                note=(
                    "Replica group 1, started together with replica group 0; it gets the "
                    "TORCHFT_LIGHTHOUSE of the stage's one lighthouse."
                ),
            ),
        ],
        shim="Same sitecustomize budget shim, requiring at least 2 GPUs.",
        note=(
            "torchft's multi-replica-group pattern, not one nproc=2 torchrun: one lighthouse, then "
            "two concurrent launches of the argv shown, the first with REPLICA_GROUP_ID=0 and "
            "--master_port 29600, the second with REPLICA_GROUP_ID=1 and --master_port 29601; both "
            "must exit 0. Devices override SCIMLOPSBENCH_MULTI_GPU_DEVICES; the probe counts GPUs "
            "with torch first. together holds the second launch (REPLICA_GROUP_ID=1, --master_port "
            "29601); the one Helper lighthouse serves both." + HELPER_NOTE + " The 2-GPU "
            "requirement is checked in each torchrun launcher, which still sees both GPUs; "
            "train_ddp.py then narrows CUDA_VISIBLE_DEVICES to its replica group's GPU, and the "
            "workers inherit the launcher's verdict instead of counting one GPU."
        ),
        helpers=[LIGHTHOUSE],
        shim_dir=SHIMS,
    ),
    c0_official_counts_none=(
        "its bundle's name regex is over-escaped (a raw string in a quoted heredoc) and matches"
        " no pyright message, so the official count is 0 whatever pyright finds"
        " (docs/real-runs.md, batch A1)"),
)
