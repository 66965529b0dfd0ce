"""Kokoro-FastAPI — an OpenAI-compatible FastAPI server for the Kokoro-82M TTS model.

Repository: https://github.com/remsky/Kokoro-FastAPI
Commit: 3af45719940c915b53ad2a63f9cdb6f22680d276
Domain: audio: TTS inference server (Kokoro-82M behind an OpenAI-compatible FastAPI)
Category: 2_cpu+single_gpu (tiers that apply: C0 C1 C2 C3 C5)

C1 and C3 start the server with uvicorn on a free port ({port}) and judge it over HTTP: GET /health
must answer 200 (within 120 s on CPU, 180 s on GPU), then POST /v1/audio/speech must return at
least 256 bytes of mp3. The model is fetched with the repository's download script from a GitHub
release (network). C4 does not apply (CSV: repo_not_supported). espeak-ng is a native dependency.
"""

from dataclasses import replace

from pytest_reb import Asset, C2Variant, CompatVariant, Http, Repo, Run, Synthetic

#: Environment shared by every stage.
ENV = {
    "MODEL_DIR": "{assets}/model",
    "VOICES_DIR": "src/voices/v1_0",
    "TEMP_FILE_DIR": "{out}/temp_files",
    "TMPDIR": "{out}/tmp",
    "PYTHONPATH": "{repo}:{repo}/api",
    "PYTHONDONTWRITEBYTECODE": "1",
}

#: The command every stage runs; only the environment differs.
ARGV = [
    "{python}", "-m", "uvicorn",
    "api.src.main:app",
    "--host", "127.0.0.1", "--port", "{port}", "--log-level", "info",
]

#: How C1 judges the server; C3 waits 180 s for /health instead of 120 s.
SPEECH = Http(
    port=0,
    ready="GET /health",
    ready_within=120,
    request="POST /v1/audio/speech",
    json_body={
        "model": "kokoro",
        "input": "Hello world!",
        "voice": "af_heart",
        "response_format": "mp3",
        "stream": False,
    },
    min_bytes=256,
    request_timeout=300,
)

#: What {port} in ARGV stands for, in the note of every stage.
FREE_PORT = (
    "{port} stands for the reference's <free port> token: Http(port=0) picks a free port at run "
    "time."
)

repo = Repo(
    "remsky/Kokoro-FastAPI",
    commit="3af45719940c915b53ad2a63f9cdb6f22680d276",
    c2_compat=C2Variant(no_python="deps"),
    c5_compat=CompatVariant(compare_empty_observed=True, version_strip=True, torch_strip=True,
        torch_import="always", gpu_observed_coerce=True, gpu_null_zero=True),
    imports_total=75,  # the C0 denominator
    domain="audio: TTS inference server (Kokoro-82M behind an OpenAI-compatible FastAPI)",
    assets=[
        Asset(
            "prompts", "data", "synthetic",
            path="{assets}/dataset/prompts.txt",
            dest="dataset/prompts.txt",
            synthetic=Synthetic.lines("Hello world!"),
            note="one line, 'Hello world!'; the first line is the request input",
        ),
        Asset(
            "kokoro-v1_0", "model", "url",
            url="https://github.com/remsky/Kokoro-FastAPI/releases/download/v0.1.4/",
            files=["kokoro-v1_0.pth", "config.json"],
            dest="model/v1_0/",
            note=(
                "fetched with the repo's docker/scripts/download_model.py --output <cache> under "
                "the report python, copied to {assets}/model/v1_0; voices come from the repo's "
                "src/voices/v1_0"
            ),
        ),
    ],
    cpu=Run(
        ARGV,
        env={"CUDA_VISIBLE_DEVICES": "", "USE_GPU": "false", "DEVICE_TYPE": "cpu", **ENV},
        timeout=600,
        launcher="server_http",
        entrypoint="api/src/main.py",
        http=SPEECH,
        note=(
            "argv is the server (background) on a free local port picked at run time. The client "
            "polls http://127.0.0.1:<port>/health every 0.5 s for up to 120 s, then POSTs JSON "
            "{model: kokoro, input: <first prompt line>, voice: af_heart, response_format: mp3, "
            "stream: false} with a 300 s timeout and requires at least 256 bytes of audio (saved "
            "as sample_cpu.mp3); the server is then stopped (SIGINT, then SIGKILL). The stage "
            "script writes its own results, no runner. " + FREE_PORT
        ),
    ),
    single_gpu=Run(
        ARGV,
        env={"CUDA_VISIBLE_DEVICES": "0", "USE_GPU": "true", "DEVICE_TYPE": "cuda", **ENV},
        timeout=600,
        launcher="server_http",
        min_gpus=1,
        entrypoint="api/src/main.py",
        http=replace(SPEECH, ready_within=180),
        note=(
            "Same client as the CPU stage with a 180 s health wait, after a torch check that CUDA "
            "is available with at least one device. " + FREE_PORT
        ),
    ),
    multi_gpu=None,  # C4 does not apply: repo_not_supported
    skip={"multi_gpu": "repo_not_supported"},
)
