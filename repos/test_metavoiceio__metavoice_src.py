"""MetaVoice-1B — a 1.2B-parameter text-to-speech model.

Repository: https://github.com/metavoiceio/metavoice-src
Commit: de3fa211ac4621e03a5f990651aeecc64da418f5
Domain: audio: text-to-speech (MetaVoice-1B)
Category: 2_cpu+single_gpu (tiers that apply: C0 C1 C2 C3 C5)

C1 and C3 synthesise 'Hello' with one new token, resolving metavoice-1B-v0.1 (several GB) through
the Hugging Face hub cache. Quirk kept from the official probe: the CPU stage sets
CUDA_VISIBLE_DEVICES=0 and relies on --device cpu. Outputs go to the repo-relative
build_output/<stage>/outputs. C4 does not apply (CSV: repo_not_supported). torch 2.1.0 and xformers
0.0.22.post7 must pair exactly.
"""

from pytest_reb import Asset, CompatVariant, Repo, Run, hf_asset

#: Environment shared by every stage.
ENV = {
    "XDG_CACHE_HOME": "{assets}/cache/xdg",
    "HF_HOME": "{assets}/cache/huggingface",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "HF_HUB_OFFLINE": "0",
    "TORCH_HOME": "{assets}/cache/torch",
    "TMPDIR": "{out}/tmp",
}

#: inference.py and its options before --device, in both stages: one token of "Hello".
INFER = [
    "{python}", "fam/llm/inference.py",
    "--spk_cond_path", "{assets}/dataset/bria.mp3",
    "--text", "Hello",
    "--huggingface_repo_id", "metavoiceio/metavoice-1B-v0.1",
    "--num_samples", "1", "--max_new_tokens", "1",
]

repo = Repo(
    "metavoiceio/metavoice-src",
    commit="de3fa211ac4621e03a5f990651aeecc64da418f5",
    # its one probe is JSON; output that is not JSON is an item and torch "" (then compared);
    # gpu_count and ddp read only that probe's count, 0 when it gave none
    c5_compat=CompatVariant(version_claim="truthy", compare_empty_observed=True,
        torch_claim="truthy", torch_import="always", torch_probe="json",
        probe_garbage="item", gpu_from="probe", gpu_default=0),
    imports_total=49,  # the C0 denominator
    domain="audio: text-to-speech (MetaVoice-1B)",
    assets=[
        Asset(
            "bria", "dataset", "repo",
            path="assets/bria.mp3",
            dest="dataset/bria.mp3",
            note="speaker reference copied to {assets}/dataset/bria.mp3",
        ),
        hf_asset(
            "metavoice-1B-v0.1", "metavoiceio/metavoice-1B-v0.1",
            files=["first_stage.pt", "second_stage.pt", "speaker_encoder.pt"],
            dest="cache/huggingface/hub",
            hf_cache=True,
            note=(
                "several GB; allow-pattern snapshot_download into the HF cache "
                "{assets}/cache/huggingface; the entrypoint resolves it again through "
                "--huggingface_repo_id (HF_HUB_OFFLINE=0)"
            ),
        ),
    ],
    cpu=Run(
        [
            *INFER, "--device", "cpu", "--dtype", "float32",
            "--output_dir", "build_output/cpu/outputs",
        ],
        env={"CUDA_VISIBLE_DEVICES": "0", "HOME": "{assets}/cache/home_cpu", **ENV},
        timeout=600,
        entrypoint="fam/llm/inference.py",
        note=(
            "Quirk of the official probe: the CPU stage sets CUDA_VISIBLE_DEVICES=0 (not empty) "
            "and relies on --device cpu to stay on CPU."
        ),
    ),
    single_gpu=Run(
        [*INFER, "--device", "cuda", "--output_dir", "build_output/single_gpu/outputs"],
        env={"CUDA_VISIBLE_DEVICES": "0", "HOME": "{assets}/cache/home_cuda0", **ENV},
        timeout=600,
        entrypoint="fam/llm/inference.py",
        note="Default dtype (no --dtype flag).",
    ),
    multi_gpu=None,  # C4 does not apply: repo_not_supported
    skip={"multi_gpu": "repo_not_supported"},
)
