"""SenseVoice — a multilingual speech recognition model (FunASR-based).

Repository: https://github.com/FunAudioLLM/SenseVoice
Commit: 1a90d46cb933ef9e213b7d90292b9301b3e20f40
Domain: audio: speech recognition (FunASR-based ASR)
Category: 3_single_gpu+multi_gpu (tiers that apply: C0 C1 C2 C3 C4 C5)

C1 and C3 start the repository's FastAPI server (api.py, port 50000) and judge it over HTTP: one
multipart POST of an English sample wav to /api/v1/asr must return JSON with a 'result' key. The
model iic/SenseVoiceSmall comes from ModelScope and the wav from an OSS URL (network);
--reb-prepare downloads the model with the host's modelscope client into ModelScope's own cache
layout under the stages' HOME ({assets}/cache/home/.cache/modelscope/hub/models/iic/
SenseVoiceSmall/), where FunASR's download looks for it by id. FunASR fetches the id with
modelscope.hub.snapshot_download.snapshot_download, which asks the hub for the revision even when
the files are cached; the official harness had the network, our containers do not. So every stage
carries repos/shims/test_FunAudioLLM__SenseVoice/sitecustomize.py (ours, not an official shim):
for an id whose folder under ModelScope's cache (MODELSCOPE_CACHE, else the HOME's) holds
configuration.json, that function returns the folder without contacting the hub; other calls are
untouched. C4 fine-tunes with FunASR's installed funasr/bin/train_ds.py from site-packages, not a
repository file, so that stage declares no entrypoint; the official <site-packages> path is
spelled {module:funasr.bin.train_ds}, the file the report python imports for that module.
"""

from pytest_reb import SHIMS, Asset, C2Variant, CompatVariant, Http, Repo, Run

# Our support file (sitecustomize.py: the prepared ModelScope model returned by id, offline).

#: How this module spells what the reference argv leaves to run time.
TOKENS = {"<site-packages>/funasr/bin/train_ds.py": ["{module:funasr.bin.train_ds}"]}

#: Environment shared by every stage.
ENV = {
    "HOME": "{assets}/cache/home",
    "XDG_CACHE_HOME": "{assets}/cache/xdg_cache",
    "HF_HOME": "{assets}/cache/hf_home",
    "HF_HUB_CACHE": "{assets}/cache/hf_hub",
    "HF_DATASETS_CACHE": "{assets}/cache/hf_datasets",
    "TRANSFORMERS_CACHE": "{assets}/cache/transformers",
    "TORCH_HOME": "{assets}/cache/torch",
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONUNBUFFERED": "1",
}

#: What our shim does, appended to each stage note.
OFFLINE_NOTE = (
    " Our sitecustomize.py (not an official shim; it bridges the offline container, where the "
    "official harness had the network) makes modelscope's snapshot_download, which FunASR calls "
    "for the id iic/SenseVoiceSmall, return the prepared folder "
    "{assets}/cache/home/.cache/modelscope/hub/models/iic/SenseVoiceSmall/ without contacting the "
    "hub."
)

#: How C1 and C3 judge the server: one multipart POST of the sample wav must answer a 'result'.
ASR = Http(
    port=50000,
    ready="GET /",
    ready_within=90,
    request="POST /api/v1/asr",
    form_files={"files": "{assets}/dataset/asr_example_en.wav"},
    form_fields={"lang": "auto"},
    expect_json_key="result",
    request_timeout=120,
)

repo = Repo(
    "FunAudioLLM/SenseVoice",
    commit="1a90d46cb933ef9e213b7d90292b9301b3e20f40",
    c2_compat=C2Variant(no_python="missing_report:none", missing="missing_report:none",
        not_executable="missing_report:none", directory="missing_report:none",
        timeout="timeout:none", crashed="runtime", failed="runtime", silent="runtime",
        garbage="runtime"),
    c5_compat=CompatVariant(empty_report_missing=True, version_claim="string",
        # a failed import is an item, and a string torch_version beside it another (that one
        # alone when the interpreter was unusable)
        torch_claim="string", torch_import="always", torch_failed_claim_item=True,
        torch_unprobed="always",
        gpu_observed_coerce=True),
    imports_total=33,  # the C0 denominator
    domain="audio: speech recognition (FunASR-based ASR)",
    assets=[
        Asset(
            "asr_example_en", "dataset", "url",
            url="https://isv-data.oss-cn-hangzhou.aliyuncs.com/ics/MaaS/ASR/test_audio/asr_example_en.wav",
            dest="dataset/asr_example_en.wav",
            note=(
                "saved as {assets}/dataset/asr_example_en.wav; prepare also writes tiny "
                "{assets}/dataset/train.jsonl and val.jsonl for fine-tuning; URL override "
                "SENSEVOICE_BENCH_DATASET_URL"
            ),
        ),
        Asset(
            "SenseVoiceSmall", "model", "modelscope",
            id="iic/SenseVoiceSmall",
            # ModelScope's cache under HOME
            dest="cache/home/.cache/modelscope/hub/models/iic/SenseVoiceSmall/",
            note=(
                "downloaded through the repo's SenseVoiceSmall.from_pretrained (FunASR/ModelScope) "
                "with HOME redirected into {assets}/cache/home; the stages load it again by id "
                "from that cache; override SENSEVOICE_BENCH_MODEL_ID"
            ),
        ),
    ],
    cpu=Run(
        ["{python}", "{repo}/api.py"],
        env={"CUDA_VISIBLE_DEVICES": "", "SENSEVOICE_DEVICE": "cpu", **ENV},
        timeout=600,
        launcher="server_http",
        entrypoint="api.py",
        http=ASR,
        note=(
            "argv is the server. A client under the report python waits up to 90 s for GET "
            "http://127.0.0.1:50000/ to return 200, then POSTs multipart form fields files=<wav> "
            "and lang=auto to /api/v1/asr (120 s timeout) and requires a JSON object with a "
            "'result' key (saved to {out}/response.json); the server is then sent SIGTERM."
            + OFFLINE_NOTE
        ),
        shim_dir=SHIMS,
    ),
    single_gpu=Run(
        ["{python}", "{repo}/api.py"],
        env={"CUDA_VISIBLE_DEVICES": "0", "SENSEVOICE_DEVICE": "cuda:0", **ENV},
        timeout=600,
        launcher="server_http",
        min_gpus=1,
        entrypoint="api.py",
        http=ASR,
        note=(
            "Same client as the CPU stage, preceded by a torch check that CUDA is available with "
            "at least 1 device." + OFFLINE_NOTE
        ),
        shim_dir=SHIMS,
    ),
    multi_gpu=Run(
        [
            "{python}", "-m", "torch.distributed.run",
            "--nnodes", "1", "--nproc_per_node", "2", "--node_rank", "0",
            "--master_addr", "127.0.0.1",
            "--master_port", "29669",
            *TOKENS["<site-packages>/funasr/bin/train_ds.py"],
            "++model=iic/SenseVoiceSmall",
            "++trust_remote_code=true",
            "++train_data_set_list={assets}/dataset/train.jsonl",
            "++valid_data_set_list={assets}/dataset/val.jsonl",
            "++dataset_conf.data_split_num=1",
            "++dataset_conf.batch_sampler=BatchSampler",
            "++dataset_conf.batch_size=6000",
            "++dataset_conf.sort_size=2",
            "++dataset_conf.batch_type=token",
            "++dataset_conf.num_workers=0",
            "++train_conf.max_epoch=1",
            "++train_conf.log_interval=1",
            "++train_conf.resume=false",
            "++train_conf.validate_interval=1000000000",
            "++train_conf.save_checkpoint_interval=1000000000",
            "++train_conf.keep_nbest_models=1",
            "++train_conf.avg_nbest_model=1",
            "++train_conf.use_deepspeed=false",
            "++train_conf.deepspeed_config={repo}/deepspeed_conf/ds_stage1.json",
            "++optim_conf.lr=0.0002",
            "++output_dir={out}/outputs",
        ],
        env={"CUDA_VISIBLE_DEVICES": "0,1", **ENV},
        timeout=1200,
        launcher="torchrun",
        nproc=2,
        min_gpus=2,
        note=(
            "The training script is FunASR's installed funasr/bin/train_ds.py, found next to the "
            "'funasr' console script or inside the imported funasr package; missing means "
            "entrypoint_not_found. nproc = number of ids in "
            "SCIMLOPSBENCH_MULTI_GPU_VISIBLE_DEVICES (default 0,1); master port is $MASTER_PORT or "
            "29669. Both jsonl files must exist. Here {module:funasr.bin.train_ds} resolves the "
            "script in the target before the run (importlib's find_spec under the report python); "
            "a funasr without it fails the stage before it runs." + OFFLINE_NOTE
        ),
        shim_dir=SHIMS,
    ),
)
