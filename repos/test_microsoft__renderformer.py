"""RenderFormer — a transformer that renders triangle-mesh scenes with global illumination.

Repository: https://github.com/microsoft/renderformer
Commit: c51f87083d0eebb806803fe32a357b8d9aefb085
Domain: neural rendering (transformer renderer for triangle-mesh scenes)
Category: 3_single_gpu+multi_gpu (tiers that apply: C0 C1 C2 C3 C4 C5)

C1 and C3 render the Cornell box at 64 px with ATTN_IMPL=sdpa; the scenes are converted from the
repository examples and the model comes from the Hugging Face hub. C4 is a bare 'torchrun' from
PATH running two independent renders (one scene per GPU, no collective); its per-rank bash script
is paraphrased in the reference argv, so that argv is not runnable verbatim.
"""

from pytest_reb import Asset, Repo, Run, hf_asset

#: Environment shared by every stage.
ENV = {
    "ATTN_IMPL": "sdpa",
    "HF_HOME": "{assets}/cache/huggingface",
    "HF_HUB_CACHE": "{assets}/cache/huggingface/hub",
    "TRANSFORMERS_CACHE": "{assets}/cache/huggingface/transformers",
    "TORCH_HOME": "{assets}/cache/torch",
    "XDG_CACHE_HOME": "{assets}/cache/xdg",
    "IMAGEIO_USERDIR": "{assets}/cache/imageio",
    "TMPDIR": "{assets}/cache/tmp",
}

#: infer.py on the Cornell box with the prepared model, before --precision (C1 and C3).
INFER_CBOX = [
    "{python}", "infer.py",
    "--h5_file", "{assets}/dataset/cbox/cbox.h5",
    "--model_id", "{assets}/model/renderformer-v1-base",
]

repo = Repo(
    "microsoft/renderformer",
    commit="c51f87083d0eebb806803fe32a357b8d9aefb085",
    imports_total=31,  # the C0 denominator
    domain="neural rendering (transformer renderer for triangle-mesh scenes)",
    assets=[
        Asset(
            "example_scenes", "dataset", "repo",
            path="examples",
            files=["cbox.json", "shader-ball.json"],
            note=(
                "converted with the repo's scene_processor/convert_scene.py under the report "
                "python into {assets}/dataset/cbox/cbox.h5 and "
                "{assets}/dataset/shader-ball/shader-ball.h5 (meshes cached in "
                "{assets}/cache/scene_meshes)"
            ),
        ),
        hf_asset(
            "renderformer-v1-base", "microsoft/renderformer-v1-base",
            note="snapshot linked at {assets}/model/renderformer-v1-base",
        ),
    ],
    cpu=Run(
        [
            *INFER_CBOX,
            "--precision", "fp32", "--resolution", "64",
            "--output_dir", "build_output/cpu/output",
        ],
        env={"CUDA_VISIBLE_DEVICES": "", **ENV},
        timeout=600,
        entrypoint="infer.py",
        note="The primary scene is cbox. Timeout is the runner default for the stage (600 s).",
    ),
    single_gpu=Run(
        [
            *INFER_CBOX,
            "--precision", "fp16", "--resolution", "64",
            "--output_dir", "build_output/single_gpu/output",
        ],
        env={"CUDA_VISIBLE_DEVICES": "0", **ENV},
        timeout=600,
        min_gpus=1,
        entrypoint="infer.py",
        note=(
            "Wrapped in bash: a torch check (CUDA available and >= 1 device) runs first, then the "
            "command."
        ),
    ),
    multi_gpu=Run(
        [
            "torchrun",
            "--standalone", "--nproc_per_node=2",
            "bash", "-lc",
            (
                "per rank: CUDA_VISIBLE_DEVICES=<device id at index LOCAL_RANK> ATTN_IMPL=sdpa "
                "{python} infer.py --h5_file <cbox.h5 on rank 0, shader-ball.h5 on rank 1> "
                "--model_id {assets}/model/renderformer-v1-base --precision fp16 --resolution 64 "
                "--output_dir {out}/output_rank${LOCAL_RANK}"
            ),
        ],
        env={"CUDA_VISIBLE_DEVICES": "0,1", **ENV},
        timeout=1200,
        launcher="torchrun_path",
        nproc=2,
        min_gpus=2,
        entrypoint="infer.py",
        note=(
            "Bare 'torchrun' from PATH (not {python} -m torch.distributed.run) launches two "
            "independent renders, one per GPU and scene; there is no collective. A torch check for "
            ">= 2 devices runs first. Devices override SCIMLOPSBENCH_MULTI_GPU_VISIBLE_DEVICES. "
            "The inner per-rank bash script is paraphrased in argv."
        ),
    ),
)
