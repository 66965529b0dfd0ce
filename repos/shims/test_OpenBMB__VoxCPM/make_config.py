"""Write the one-step LoRA fine-tuning config the official VoxCPM probe generated.

The official single-GPU probe wrote ``config.yaml`` next to its logs and ran
``scripts/train_voxcpm_finetune.py --config_path`` on it (the script's argbind
options): the prepared VoxCPM-0.5B snapshot, the prepared one-line training
manifest, no validation manifest, sample rate 16000, batch 1, one iteration
and one step, no warmup, lr 1e-4, weight decay 0.01, validation and saving
intervals out of reach, outputs under the stage folder, both loss weights 1.0
and LoRA (r 4, alpha 4, dropout 0) on the LM and the DiT but not the
projections.  Before writing it the probe refused a model folder without
``config.json`` and ``audiovae.pth``; so does this script.

The manifest was written by the official prepare step next to its copy of the
repository's ``examples/example.wav`` (one JSON line: that wav, a fixed
sentence, ``dataset_id`` 0).  Our asset view holds the wav (the prepared
``{assets}/dataset/example.wav``) but is read-only, so this script writes the
same line next to the config, pointing at the wav given with ``--wav``; like
the prepare step it stops when the wav is missing.

Usage: make_config.py OUT_DIR --model DIR --wav FILE   (stdlib only)
"""

import argparse
import json
import os
import sys

#: The manifest's text, as the official prepare step wrote it.
TEXT = "This is a minimal benchmark sample for VoxCPM fine-tuning."


def to_yaml(config):
    """Block YAML of a flat mapping whose values are scalars or mappings of scalars.

    Scalars are written as JSON, which YAML reads back as the same values.
    """
    lines = []
    for key, value in config.items():
        if isinstance(value, dict):
            lines.append(key + ":")
            lines.extend(f"  {k}: {json.dumps(v)}" for k, v in value.items())
        else:
            lines.append(f"{key}: {json.dumps(value)}")
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", help="the stage's output folder (config.yaml goes there)")
    parser.add_argument("--model", required=True, help="the prepared VoxCPM snapshot folder")
    parser.add_argument("--wav", required=True, help="the training sample")
    parser.add_argument("--sample-rate", type=int, default=16000,
                        help="16000 for VoxCPM-0.5B (the prepare step used 44100 for 1.5 ids)")
    args = parser.parse_args(argv)

    missing = [f for f in ("config.json", "audiovae.pth")
               if not os.path.isfile(os.path.join(args.model, f))]
    if missing:
        sys.exit("Model directory is incomplete: {} (need config.json + audiovae.pth; "
                 "missing {})".format(args.model, ", ".join(missing)))

    if not os.path.isfile(args.wav):
        sys.exit("Missing training sample " + args.wav + "; cannot build the minimal dataset.")

    out = os.path.abspath(args.out_dir)
    os.makedirs(out, exist_ok=True)
    manifest = os.path.join(out, "train_manifest.jsonl")
    with open(manifest, "w", encoding="utf-8") as fh:
        fh.write(json.dumps({"audio": os.path.abspath(args.wav), "text": TEXT,
                             "dataset_id": 0}) + "\n")

    config = {
        "pretrained_path": args.model,
        "train_manifest": manifest,
        "val_manifest": "",
        "sample_rate": args.sample_rate,
        "batch_size": 1,
        "grad_accum_steps": 1,
        "num_workers": 0,
        "num_iters": 1,
        "log_interval": 1,
        "valid_interval": 1000000,
        "save_interval": 1000000,
        "learning_rate": 0.0001,
        "weight_decay": 0.01,
        "warmup_steps": 0,
        "max_steps": 1,
        "max_batch_tokens": 0,
        "save_path": os.path.join(out, "checkpoints"),
        "tensorboard": os.path.join(out, "tensorboard"),
        "lambdas": {"loss/diff": 1.0, "loss/stop": 1.0},
        "lora": {"enable_lm": True, "enable_dit": True, "enable_proj": False,
                 "r": 4, "alpha": 4, "dropout": 0.0},
    }
    path = os.path.join(out, "config.yaml")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(to_yaml(config))
    print("wrote " + path + " and " + manifest)


if __name__ == "__main__":
    main()
