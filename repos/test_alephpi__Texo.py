"""Texo — LaTeX formula recognition (image to LaTeX).

Repository: https://github.com/alephpi/Texo
Commit: a462c537a9726545d2bcfb639c9f99224d1e36c2
Domain: OCR: LaTeX formula recognition (Lightning + Hydra)
Category: 3_single_gpu+multi_gpu (tiers that apply: C0 C1 C2 C3 C4 C5)

All stages train for one step with Lightning and Hydra on one UniMER-Train sample, starting from
the first *.pt of the FormulaNet snapshot (the official <first *.pt> token, spelled here as the
run-time resolver {glob:{assets}/model/FormulaNet/**/*.pt}: the first sorted match, expected to
be checkpoints/formulanet.pt, the checkpoint of the default model config formulanet-S); dataset
and model come from the Hugging Face hub. C4 lets Lightning spawn the DDP ranks.

Prepare downloads the alephpi/UniMER-Train hub files raw (to {assets}/dataset/UniMER-Train/); a
setup step of every stage (shims/test_alephpi__Texo/save_unimer.py, under the report's python)
does what the official prepare did after downloading: loads train[:1], keeps the image bytes and
the LaTeX text, and saves that one-sample dataset with save_to_disk as {out}/UniMER-Train and
{out}/UniMER-Eval, the paths data.train_dataset_path and data.eval_dataset_path name.

src/task.py imports texo.utils.scores, whose module code runs evaluate.load("bleu"): the metric
script comes from the hub's evaluate-metric/bleu space, and its import of nmt_bleu from the
tensorflow/nmt repository on GitHub (the script's "# From:" comment). The official prepare fetched
neither; its stages downloaded them at run time. Ours have no network, so both are declared as
assets after the official ones, each note beginning "pytest-reb's addition" (repos/README.md),
where evaluate's own loader looks when the hub cannot be reached: its modules cache under HF_HOME,
{assets}/cache/hf/modules/evaluate_modules/metrics/evaluate-metric--bleu/<hash>/ (the hash evaluate
computes from the three files).
"""

from pytest_reb import SHIMS, Asset, CompatVariant, Repo, Run, hf_asset, self_launching

#: How a note of an asset the official prepare did not fetch begins (repos/README.md): the
#: official stage downloaded it at run time, with the network; ours has none.
ADDITION = ("pytest-reb's addition (not fetched by the official prepare; the official stage "
            "downloaded it at run time)")

#: Where evaluate.load("bleu") finds the metric without the network: evaluate's dynamic modules
#: cache under HF_HOME, in the folder named by the hash evaluate computes from bleu.py,
#: nmt_bleu.py and tokenizer_13a.py (datasets' _hash_python_lines; evaluate's cached-module
#: fallback takes the newest 64-character folder there).
BLEU_MODULE = ("cache/hf/modules/evaluate_modules/metrics/evaluate-metric--bleu/"
               "9e0985c1200e367cce45605ce0ecb5ede079894e0f24f54613fca08eeb8aff76/")

# Our setup script (save_unimer.py), mounted read-only at {repo}/benchmark_scripts.

#: Before every stage: the one-sample train and eval datasets from the raw hub files.
SETUP = [["{python}", "{shims}/save_unimer.py", "{assets}/dataset/UniMER-Train", "{out}", "1"]]

#: What the setup step does, appended to each stage note.
MADE = (" Ours: the setup step {shims}/save_unimer.py loads train[:1] of the raw hub files at "
        "{assets}/dataset/UniMER-Train and saves it (image bytes, text) with save_to_disk as "
        "{out}/UniMER-Train and {out}/UniMER-Eval.")

#: Environment shared by every stage.
ENV = {
    "TOKENIZERS_PARALLELISM": "false",
    "HF_HOME": "{assets}/cache/hf",
    "HF_DATASETS_CACHE": "{assets}/cache/hf/datasets",
    "HF_HUB_CACHE": "{assets}/cache/hf/hub",
    "TRANSFORMERS_CACHE": "{assets}/cache/hf/transformers",
    "XDG_CACHE_HOME": "{assets}/cache/xdg",
}

#: The command and its Hydra overrides up to the trainer's device settings, in every stage.
HYDRA = ["{python}", "src/train.py", "hydra.run.dir={out}/hydra", "hydra.job.chdir=false"]

#: The official override naming the first *.pt of the FormulaNet snapshot, found at run time.
PRETRAINED = "model.pretrained={assets}/model/FormulaNet/<first *.pt>"

#: How this module spells what the reference argv leaves to run time.
TOKENS = {
    PRETRAINED: ["model.pretrained={glob:{assets}/model/FormulaNet/**/*.pt}"],
    "data.train_dataset_path={assets}/dataset/UniMER-Train": [
        "data.train_dataset_path={out}/UniMER-Train"],
    "data.eval_dataset_path={assets}/dataset/UniMER-Eval": [
        "data.eval_dataset_path={out}/UniMER-Eval"],
}

#: The overrides after those settings: one step, no validation or checkpoint, one prepared sample.
ONE_STEP = [
    "trainer.num_nodes=1",
    "trainer.precision=32-true",
    "+trainer.max_steps=1",
    "trainer.max_epochs=1",
    "+trainer.limit_train_batches=1",
    "trainer.val_check_interval=1",
    "+trainer.limit_val_batches=0.0",
    "+trainer.num_sanity_val_steps=0",
    "trainer.log_every_n_steps=1",
    "+trainer.enable_checkpointing=false",
    "trainer.logger=false",
    "trainer.callbacks=[]",
    "training.lr_scheduler.num_training_steps=1",
    "training.lr_scheduler.num_warmup_steps=0",
    "data.train_batch_size=1",
    "data.val_batch_size=1",
    "data.num_workers=1",
    "data.train_dataset_path={out}/UniMER-Train",
    "data.eval_dataset_path={out}/UniMER-Eval",
    "data.text_processor.tokenizer_path={repo}/data/unimernet_tokenizer",
    *TOKENS[PRETRAINED],
]

#: What the <first *.pt> token of every stage stands for.
FIRST_PT = (
    "<first *.pt> stands for the first *.pt file prepare found in the FormulaNet snapshot "
    "(depth <= 3). Here {glob:{assets}/model/FormulaNet/**/*.pt} resolves it in the target before "
    "the run (the first sorted match; checkpoints/formulanet.pt is expected); a "
    "snapshot without any *.pt fails the stage before it runs instead of training with an empty "
    "model.pretrained."
)

repo = Repo(
    "alephpi/Texo",
    commit="a462c537a9726545d2bcfb639c9f99224d1e36c2",
    c5_compat=CompatVariant(version_claim="truthy", compare_empty_observed=True,
        torch_claim="truthy", cuda_from="observed", gpu_count_coerce=True,
        gpu_observed_coerce=True),
    imports_total=47,  # the C0 denominator
    domain="OCR: LaTeX formula recognition (Lightning + Hydra)",
    assets=[
        Asset(
            "UniMER-Train", "dataset", "hf_dataset",
            id="alephpi/UniMER-Train",
            dest="dataset/UniMER-Train/",  # raw; setup saves [:1]
            note=(
                "load_dataset split train[:1], saved with save_to_disk to "
                "{assets}/dataset/UniMER-Train and again as {assets}/dataset/UniMER-Eval (the same "
                "single sample is used for eval)"
            ),
        ),
        hf_asset(
            "FormulaNet", "alephpi/FormulaNet",
            dest="model/FormulaNet",
            note=(
                "snapshot_download to {assets}/model/FormulaNet; the first *.pt found (depth <= 3) "
                "becomes model.pretrained, otherwise model.pretrained is set empty"
            ),
        ),
        Asset(
            "unimernet_tokenizer", "tokenizer", "repo",
            path="data/unimernet_tokenizer",
            dest="tokenizer/unimernet_tokenizer",
            note=(
                "falls back to data/unimernet_tokenizer_distill, then data/tokenizer, whichever "
                "exists"
            ),
        ),
        Asset(
            "bleu", "data", "url",
            url="https://huggingface.co/spaces/evaluate-metric/bleu/resolve/main/",
            files=["bleu.py", "tokenizer_13a.py"],
            dest=BLEU_MODULE,
            note=(
                f"{ADDITION}: evaluate.load('bleu') in src/texo/utils/scores.py, imported by "
                "src/task.py; the metric script of the hub's evaluate-metric/bleu space, in "
                "evaluate's modules cache under HF_HOME={assets}/cache/hf"
            ),
        ),
        Asset(
            "nmt_bleu", "data", "url",
            url="https://raw.githubusercontent.com/tensorflow/nmt/master/nmt/scripts/",
            files=["nmt_bleu.py"],
            url_paths={"nmt_bleu.py": "bleu.py"},
            dest=BLEU_MODULE,
            note=(
                f"{ADDITION}: bleu.py's 'from .nmt_bleu import compute_bleu  # From: "
                "https://github.com/tensorflow/nmt/blob/master/nmt/scripts/bleu.py', which "
                "evaluate fetched beside the script, in the same folder of its modules cache"
            ),
        ),
    ],
    cpu=Run(
        [*HYDRA, "trainer.accelerator=cpu", "trainer.devices=1", *ONE_STEP],
        env={"CUDA_VISIBLE_DEVICES": "", **ENV},
        timeout=600,
        entrypoint="src/train.py",
        setup=SETUP,
        shim_dir=SHIMS,
        note=(
            "If no .pt file exists in the model snapshot the last override is 'model.pretrained=' "
            "(empty). The runner first checks the report python is runnable (path_hallucination "
            "otherwise). " + FIRST_PT + MADE
        ),
    ),
    single_gpu=Run(
        [*HYDRA, "trainer.accelerator=gpu", "trainer.devices=1", *ONE_STEP],
        env={"CUDA_VISIBLE_DEVICES": "0", **ENV},
        timeout=600,
        entrypoint="src/train.py",
        setup=SETUP,
        shim_dir=SHIMS,
        note=FIRST_PT + MADE,
    ),
    multi_gpu=self_launching(
        [*HYDRA, "trainer.accelerator=gpu", "trainer.devices=2", "+trainer.strategy=ddp",
         *ONE_STEP],
        launcher="lightning",
        nproc=2,
        env={"CUDA_VISIBLE_DEVICES": "0,1", **ENV},
        timeout=1200,
        entrypoint="src/train.py",
        setup=SETUP,
        shim_dir=SHIMS,
        note=(
            "Lightning spawns the DDP ranks itself (no torchrun); devices = number of ids in "
            "SCIMLOPSBENCH_MULTI_GPU_IDS (default 0,1). GPU count for the gate comes from "
            "build_output/cuda/results.json observed.gpu_count, else 'nvidia-smi -L'. " + FIRST_PT
            + MADE
        ),
    ),
)
