"""Vision Mamba (Vim) — a bidirectional state-space vision backbone.

Repository: https://github.com/hustvl/Vim
Commit: dd0358ad1e42701f22afbefa0717cc8825cf9f45
Domain: vision backbone (Vision Mamba); probe exercises the vendored Detectron2 under det/
Category: 3_single_gpu+multi_gpu (tiers that apply: C0 C1 C2 C3 C4 C5)

The stages do not run Vim itself: they train a plain ResNet-50 Faster R-CNN for one iteration with
the vendored Detectron2 under det/ on COCO val2017_100 (network: Detectron2's annotation tarball
and R-50.pkl). The Mamba CUDA extensions are thus only exercised by the C0 imports. C4 uses
detectron2's own launch() to spawn the workers.

The prepared view holds the images unpacked from val2017_100.tgz and the annotation json side by
side in {assets}/dataset/coco/. Each stage's setup step (shims/coco_layout.py) lays them out as
the official prepare did, as Detectron2 expects under DETECTRON2_DATASETS: {out}/datasets/coco/
val2017 (a link to the prepared images) and coco/annotations/instances_val2017_100.json; the
run's DETECTRON2_DATASETS is {out}/datasets.
"""

from pytest_reb import SHIMS, Asset, C2Variant, CompatVariant, Repo, Run, self_launching

# Our setup script that lays the prepared COCO files out for Detectron2.

#: How this module spells what the reference env leaves to run time: the DETECTRON2_DATASETS
#: folder is the one the setup step laid out in {out}.
TOKENS = {"{assets}/dataset": ["{out}/datasets"]}

#: Environment shared by every stage.
ENV = {"DETECTRON2_DATASETS": "{out}/datasets", "PYTHONPATH": "{repo}/det"}

#: Every stage first lays the COCO files out as DETECTRON2_DATASETS (the official prepare).
SETUP = [["{python}", "{shims}/coco_layout.py", "--raw", "{assets}/dataset/coco",
          "--out", "{out}/datasets"]]

#: What our setup does, after each stage's reference note.
SETUP_NOTE = (
    " Our setup step lays out {out}/datasets/coco (val2017 linking to the prepared images, "
    "annotations/instances_val2017_100.json), the run's DETECTRON2_DATASETS."
)

#: The script every stage runs; each passes its own --num-gpus first.
TRAIN = ["{python}", "det/tools/plain_train_net.py"]

#: The config and the one-iteration overrides up to MODEL.DEVICE, in every stage.
ONE_ITER = [
    "--config-file", "det/configs/COCO-Detection/faster_rcnn_R_50_FPN_1x.yaml",
    "SOLVER.IMS_PER_BATCH", "1",
    "SOLVER.MAX_ITER", "1",
    "DATALOADER.NUM_WORKERS", "0",
    "TEST.EVAL_PERIOD", "0",
    "DATASETS.TRAIN", "(\"coco_2017_val_100\",)",
    "DATASETS.TEST", "()",
    "MODEL.WEIGHTS", "{assets}/model/detectron2/R-50.pkl",
]

#: The overrides after MODEL.DEVICE.
OUTPUT = ["OUTPUT_DIR", "{out}/detectron2_output"]

repo = Repo(
    "hustvl/Vim",
    commit="dd0358ad1e42701f22afbefa0717cc8825cf9f45",
    c2_compat=C2Variant(no_device="fails", no_python="path_hallucination",
        missing="path_hallucination", not_executable="path_hallucination",
        directory="path_hallucination", timeout=None, crashed="runtime", failed="runtime",
        silent="runtime", garbage="runtime"),
    c5_compat=CompatVariant(version_claim="truthy", torch_claim="truthy",
        gpu_from="stage_or_probe", gpu_observed_coerce=True, gpu_null_zero=True,
        gpu_needs_stage="file"),  # the count judged only beside a cuda stage
    imports_total=132,  # the C0 denominator
    domain="vision backbone (Vision Mamba); probe exercises the vendored Detectron2 under det/",
    assets=[
        Asset(
            "coco_2017_val_100", "dataset", "url",
            url="https://dl.fbaipublicfiles.com/detectron2/annotations/coco/val2017_100.tgz",
            files=["val2017_100.tgz", "instances_val2017_100.json"],
            dest="dataset/coco/",
            extract=True,
            url_paths={  # the url is the tgz; both files sit beside it
                "val2017_100.tgz": "../val2017_100.tgz",
                "instances_val2017_100.json": "../instances_val2017_100.json"},
            note=(
                "images and "
                "https://dl.fbaipublicfiles.com/detectron2/annotations/coco/instances_val2017_100.json"
                " laid out as {assets}/dataset/coco/{val2017,annotations} (the DETECTRON2_DATASETS "
                "layout)"
            ),
        ),
        Asset(
            "R-50", "model", "url",
            url="https://dl.fbaipublicfiles.com/detectron2/ImageNetPretrained/MSRA/R-50.pkl",
            dest="model/detectron2/R-50.pkl",
            note="ImageNet backbone at {assets}/model/detectron2/R-50.pkl",
        ),
    ],
    cpu=Run(
        [*TRAIN, "--num-gpus", "0", *ONE_ITER, "MODEL.DEVICE", "cpu", *OUTPUT],
        env={"CUDA_VISIBLE_DEVICES": "", **ENV},
        timeout=600,
        entrypoint="det/tools/plain_train_net.py",
        note=(
            "Refuses to run unless the prepare stage status is success. Timeout override "
            "SCIMLOPSBENCH_CPU_TIMEOUT_SEC." + SETUP_NOTE
        ),
        setup=SETUP,
        shim_dir=SHIMS,
    ),
    single_gpu=Run(
        [*TRAIN, "--num-gpus", "1", *ONE_ITER, "MODEL.DEVICE", "cuda", *OUTPUT],
        env={"CUDA_VISIBLE_DEVICES": "0", **ENV},
        timeout=600,
        entrypoint="det/tools/plain_train_net.py",
        note="Refuses to run unless the prepare stage status is success." + SETUP_NOTE,
        setup=SETUP,
        shim_dir=SHIMS,
    ),
    multi_gpu=self_launching(
        [*TRAIN, "--num-gpus", "2", *ONE_ITER, "MODEL.DEVICE", "cuda", *OUTPUT],
        launcher="detectron2",
        nproc=2,
        env={"CUDA_VISIBLE_DEVICES": "0,1", **ENV},
        timeout=1200,
        entrypoint="det/tools/plain_train_net.py",
        note=(
            "detectron2's own launch() spawns the workers (no torchrun). GPU count for the gate: "
            "lines of 'nvidia-smi -L', or torch under the report python when nvidia-smi is absent. "
            "Devices override SCIMLOPSBENCH_MULTI_GPU_DEVICES." + SETUP_NOTE
        ),
        setup=SETUP,
        shim_dir=SHIMS,
    ),
)
