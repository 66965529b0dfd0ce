"""RenderFormer — a transformer that renders triangle-mesh scenes with global illumination.

Repository: https://github.com/microsoft/renderformer
Commit: c51f87083d0eebb806803fe32a357b8d9aefb085
Domain: neural rendering (transformer renderer for triangle-mesh scenes)
Category: 3_single_gpu+multi_gpu (tiers that apply: C0 C1 C2 C3 C4 C5)

C1 and C3 render the Cornell box at 64 px with ATTN_IMPL=sdpa; the scenes are converted from the
repository examples and the model comes from the Hugging Face hub. The official prepare converted
examples/cbox.json and shader-ball.json to {assets}/dataset/<scene>/<scene>.h5 with the
repository's scene_processor/convert_scene.py; here the view holds the two JSONs (copied from the
checkout to {assets}/dataset/) and each stage's setup (shims/.../convert_scenes.py) runs that same
converter under the report's python into {out}/<scene>/<scene>.h5 (meshes in
{out}/scene_meshes), so the argv names the h5 files there (TOKENS). C4 is a bare 'torchrun' from
PATH running two independent renders (one scene per GPU, no collective). The official per-rank
bash script (paraphrased in the reference argv) is our shims/.../infer_rank.py: each rank takes
the device at index LOCAL_RANK of CUDA_VISIBLE_DEVICES and its scene (cbox.h5 on rank 0,
shader-ball.h5 on rank 1), then executes '{python} infer.py ...' into {out}/output_rank<N>.
"""

from pytest_reb import SHIMS, Asset, C2Variant, CompatVariant, Repo, Run, hf_asset

# Our rewrite of the official per-rank bash script (infer_rank.py).

#: The official per-rank script as the reference paraphrases it.
PER_RANK = (
    "per rank: CUDA_VISIBLE_DEVICES=<device id at index LOCAL_RANK> ATTN_IMPL=sdpa "
    "{python} infer.py --h5_file <cbox.h5 on rank 0, shader-ball.h5 on rank 1> "
    "--model_id {assets}/model/renderformer-v1-base --precision fp16 --resolution 64 "
    "--output_dir {out}/output_rank${LOCAL_RANK}"
)

#: Our per-rank script in place of 'bash -lc <script>': the scenes by rank, the output base,
#: and the render command it completes with --h5_file and --output_dir.
INFER_RANK = [
    "{shims}/infer_rank.py",
    "--scene", "{out}/cbox/cbox.h5",
    "--scene", "{out}/shader-ball/shader-ball.h5",
    "--out-base", "{out}", "--",
    "{python}", "infer.py", "--model_id", "{assets}/model/renderformer-v1-base",
    "--precision", "fp16", "--resolution", "64",
]

#: How this module spells what the reference argv leaves to run time; the h5 the official
#: prepare converted into {assets} is converted by our setup into {out}.
TOKENS = {"bash": [], "-lc": [], PER_RANK: INFER_RANK,
          "{assets}/dataset/cbox/cbox.h5": ["{out}/cbox/cbox.h5"]}


def convert(*scenes: str) -> list[str]:
    """The setup step converting the prepared scene JSONs to {out}/<scene>/<scene>.h5."""
    return ["{python}", "{shims}/convert_scenes.py", "--repo", "{repo}", "--out", "{out}",
            *(f"{{assets}}/dataset/{scene}.json" for scene in scenes)]


#: What each stage's setup adds to the reference note.
CONVERTED = (
    " Our setup first converts {assets}/dataset/<scenes> with the repository's "
    "scene_processor/convert_scene.py (shims/convert_scenes.py) into {out}/<scene>/<scene>.h5, "
    "meshes in {out}/scene_meshes, as the official prepare did into {assets}; it fails when an "
    "h5 is not written."
)

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
    "--h5_file", "{out}/cbox/cbox.h5",
    "--model_id", "{assets}/model/renderformer-v1-base",
]

repo = Repo(
    "microsoft/renderformer",
    commit="c51f87083d0eebb806803fe32a357b8d9aefb085",
    c2_compat=C2Variant(failed_exit="unavailable", no_python="missing_report",
        missing="runtime", not_executable="runtime", directory="runtime", timeout="runtime",
        crashed="runtime", failed="runtime", silent="runtime", garbage="invalid_json"),
    c5_compat=CompatVariant(missing_report_path=1, invalid_report_path=1, non_object_crash=True,
        # ``if reported:`` guards the python_path check, so ``{}`` has no item and passes
        empty_report_unchecked=True,
        torch_import="always", silent_python_ok=False, ddp_without_count=True),
    imports_total=31,  # the C0 denominator
    domain="neural rendering (transformer renderer for triangle-mesh scenes)",
    assets=[
        Asset(
            "example_scenes", "dataset", "repo",
            path="examples",
            files=["cbox.json", "shader-ball.json"],
            dest="dataset/",  # JSONs; setup converts
            note=(
                "converted with the repo's scene_processor/convert_scene.py under the report "
                "python into {assets}/dataset/cbox/cbox.h5 and "
                "{assets}/dataset/shader-ball/shader-ball.h5 (meshes cached in "
                "{assets}/cache/scene_meshes)"
            ),
        ),
        hf_asset(
            "renderformer-v1-base", "microsoft/renderformer-v1-base",
            dest="model/renderformer-v1-base",
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
        setup=[convert("cbox")],
        shim_dir=SHIMS,
        note=("The primary scene is cbox. Timeout is the runner default for the stage (600 s)."
              + CONVERTED.replace("<scenes>", "cbox.json")),
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
        setup=[convert("cbox")],
        shim_dir=SHIMS,
        note=(
            "Wrapped in bash: a torch check (CUDA available and >= 1 device) runs first, then the "
            "command." + CONVERTED.replace("<scenes>", "cbox.json")
        ),
    ),
    multi_gpu=Run(
        [
            "torchrun",
            "--standalone", "--nproc_per_node=2",
            *INFER_RANK,
        ],
        env={"CUDA_VISIBLE_DEVICES": "0,1", **ENV},
        timeout=1200,
        launcher="torchrun_path",
        nproc=2,
        min_gpus=2,
        entrypoint="infer.py",
        setup=[convert("cbox", "shader-ball")],
        shim_dir=SHIMS,
        note=(
            "Bare 'torchrun' from PATH (not {python} -m torch.distributed.run) launches two "
            "independent renders, one per GPU and scene; there is no collective. A torch check for "
            ">= 2 devices runs first. Devices override SCIMLOPSBENCH_MULTI_GPU_VISIBLE_DEVICES. "
            "The inner per-rank bash script is paraphrased in argv. Ours: torchrun starts "
            "shims/infer_rank.py (with torchrun's own interpreter) on each rank; it picks the "
            "device and the scene by LOCAL_RANK, makes {out}/output_rank<N> and executes the "
            "render with ATTN_IMPL=sdpa. The official command handed 'bash' to torchrun without "
            "--no-python, so torchrun ran 'python -u bash ...' (\"can't open file\"); we run "
            "what its script describes instead."
            + CONVERTED.replace("<scenes>", "cbox.json and shader-ball.json")
        ),
    ),
)
