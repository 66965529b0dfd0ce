"""Write the KAIR options JSON the official deep-tempest probes generated.

Each official stage wrote ``options_<stage>_min.json`` and ran
``end-to-end/main_train_drunet.py --opt`` on it: DRUNet (in_nc 2, out_nc 1,
nc [64,128,256,512], nb 4) fine-tuned from the prepared checkpoint for one
epoch on the prepared screenshot pairs, one 128-pixel patch per image, no
shuffling, no loader workers, l2 loss, Adam at 1e-4, every checkpoint
interval 999999.  The stages differ in ``gpu_ids`` ([], [0], [0, 1]), the
dataset (``mini_1``: one pair; ``mini_2``: two pairs for two GPUs) and the
batch size (1, 1, 2).  The checkpoint is the first checkpoint-like file of the
model folder, in the order the prepare step looked for one.  Like the probes,
this script stops when the dataset folders or the checkpoint are missing.

KAIR's option parser cuts every line at ``//`` (its comment marker), so
paths are normalised to never hold one.

``--prepared`` is a folder laid out as the official prepare left
``benchmark_assets``: ``dataset/mini_1``, ``dataset/mini_2`` and ``model/``.
Our stages pass their ``{out}``, where the setup steps ``make_pairs.py`` and
``pick_checkpoint.py`` laid those out from the raw assets.

Usage: make_options.py OUT.json --stage cpu|single_gpu|multi_gpu --prepared DIR --root DIR
(stdlib only)
"""

import argparse
import glob
import json
import os
import sys

#: Per stage: gpu_ids, dataset folder under PREPARED/dataset, batch size.
STAGES = {
    "cpu": ([], "mini_1", 1),
    "single_gpu": ([0], "mini_1", 1),
    "multi_gpu": ([0, 1], "mini_2", 2),
}

#: What the prepare step accepted as a checkpoint, in its order.
CHECKPOINT_PATTERNS = ("*_G.pth", "*.pth", "*.pt", "*.ckpt", "*.pth.tar", "*.bin")


def find_checkpoint(model_dir):
    """The first file, sorted, of the model folder matching a checkpoint pattern."""
    found = set()
    for pattern in CHECKPOINT_PATTERNS:
        found.update(p for p in glob.glob(os.path.join(model_dir, pattern)) if os.path.isfile(p))
    return sorted(found)[0] if found else None


def dataset(name, stage, h_dir, l_dir, batch):
    """One KAIR dataset entry; train and test differ in name and the sigma key."""
    entry = {
        "name": f"mini_{name}_{stage}",
        "dataset_type": "drunet",
        "dataroot_H": h_dir,
        "dataroot_L": l_dir,
    }
    entry.update({"sigma": [0, 0]} if name == "train" else {"sigma_test": 0})
    entry.update({
        "use_all_patches": False,
        "skip_natural_patches": False,
        "num_patches_per_image": 1,
        "H_size": 128,
        "dataloader_shuffle": False,
        "dataloader_num_workers": 0,
        "dataloader_batch_size": batch,
    })
    return entry


def options(stage, h_dir, l_dir, checkpoint, root):
    gpu_ids, _, batch = STAGES[stage]
    return {
        "task": "drunet",
        "model": "plain",
        "gpu_ids": gpu_ids,
        "scale": 0,
        "n_channels": 1,
        "n_channels_datasetload": 3,
        "use_abs_value": True,
        "path": {"root": root, "pretrained_netG": checkpoint},
        "datasets": {
            "train": dataset("train", stage, h_dir, l_dir, batch),
            "test": dataset("test", stage, h_dir, l_dir, batch),
        },
        "netG": {
            "net_type": "drunet", "in_nc": 2, "out_nc": 1, "nc": [64, 128, 256, 512],
            "nb": 4, "gc": 32, "ng": 2, "reduction": 16, "act_mode": "R",
            "upsample_mode": "convtranspose", "downsample_mode": "strideconv", "bias": False,
            "init_type": "kaiming_normal", "init_bn_type": "uniform", "init_gain": 0.2,
        },
        "train": {
            "manual_seed": 123,
            "epochs": 1,
            "G_lossfn_type": "l2",
            "G_lossfn_weight": 1.0,
            "G_tvloss_weight": 0.0,
            "G_tvloss_reduction": "mean",
            "G_optimizer_type": "adam",
            "G_optimizer_lr": 1e-4,
            "G_optimizer_clipgrad": None,
            "G_scheduler_type": "MultiStepLR",
            "G_scheduler_milestones": [],
            "G_scheduler_gamma": 0.1,
            "checkpoint_test": 999999,
            "checkpoint_test_save": 999999,
            "checkpoint_save": 999999,
            "checkpoint_print": 999999,
            "E_decay": 0,
            "G_optimizer_betas": [0.9, 0.999],
            "G_optimizer_wd": 0,
            "G_optimizer_reuse": False,
            "G_param_strict": True,
        },
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", help="the options file to write")
    parser.add_argument("--stage", required=True, choices=sorted(STAGES))
    parser.add_argument("--prepared", required=True,
                        help="the folder holding dataset/mini_<n>/{H,L} and model/")
    parser.add_argument("--root", required=True, help="KAIR's output root (path.root)")
    args = parser.parse_args(argv)

    norm = lambda p: os.path.normpath(os.path.abspath(p))  # noqa: E731 - no '//' for KAIR
    data = os.path.join(args.prepared, "dataset", STAGES[args.stage][1])
    h_dir, l_dir = norm(os.path.join(data, "H")), norm(os.path.join(data, "L"))
    if not (os.path.isdir(h_dir) and os.path.isdir(l_dir)):
        sys.exit(f"Missing dataset dirs: {h_dir} and/or {l_dir}")
    checkpoint = find_checkpoint(os.path.join(args.prepared, "model"))
    if checkpoint is None:
        sys.exit("No checkpoint-like file ({}) in {}".format(
            ", ".join(CHECKPOINT_PATTERNS), os.path.join(args.prepared, "model")))

    opt = options(args.stage, h_dir, l_dir, norm(checkpoint), norm(args.root))
    os.makedirs(os.path.dirname(norm(args.out)), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as fh:
        fh.write(json.dumps(opt, indent=2) + "\n")
    print("wrote " + args.out)


if __name__ == "__main__":
    main()
