"""The honest GPU workloads of ``workloads/`` as one repository module, one workload per run.

Not collected by the normal suite (the name does not start with ``test_``);
``run_family.py`` passes it on a GPU machine once per workload, named by
``REB_WORKLOAD``, with ``--reb-repo-dir`` a git checkout of ``workloads/``.
None of the workloads was written for a rule: each is how research code
commonly uses a GPU (a framework, a launcher, a worker process, a server), and
strict C3 must pass every one of them (docs/gpu.md).
"""

import os

from pytest_reb import Http, Repo, Run, accelerate, torchrun

ENV = {"CUDA_VISIBLE_DEVICES": "0", "XLA_PYTHON_CLIENT_PREALLOCATE": "false",
       "TOKENIZERS_PARALLELISM": "false", "HF_HUB_OFFLINE": "1"}
DONE = ["TRAIN_OK"]


def plain(script: str, *args: str) -> Run:
    """``python script args`` in the checkout: the workload's own entrypoint."""
    return Run(["{python}", script, *args], env=ENV, timeout=300, expect_log=DONE,
               entrypoint=script)


#: name -> the stage's run. Launchers name the file the user runs as the entrypoint.
WORKLOADS: dict[str, Run] = {
    "two_step": plain("train.py", "--steps", "2"),
    "infer_b1": plain("infer.py"),
    "hf_trainer": plain("hf_trainer.py"),
    "lightning_workers": plain("lightning_train.py"),
    "torch_compile": plain("compiled.py"),
    "jax": plain("jax_train.py"),
    "cupy": plain("cupy_work.py"),
    "triton": plain("triton_kernel.py"),
    "mp_spawn": plain("spawn_train.py"),
    "bf16_pinned": plain("bf16_pinned.py"),
    "torchrun_1": torchrun("ddp_train.py", nproc=1, env=ENV, timeout=300, expect_log=DONE,
                           entrypoint="ddp_train.py"),
    "accelerate_1": accelerate("accel_train.py", nproc=1, env=ENV, timeout=300,
                               expect_log=DONE, entrypoint="accel_train.py"),
    "fsdp_torchrun_1": torchrun("fsdp_train.py", nproc=1, env=ENV, timeout=300,
                                expect_log=DONE, entrypoint="fsdp_train.py"),
    "shell_script": Run(["bash", "run.sh"], env=ENV, timeout=300, expect_log=DONE,
                        entrypoint="run.sh"),
    "launcher_subprocess": plain("launch.py", "--via", "subprocess"),
    "launcher_os_system": plain("launch.py", "--via", "os.system"),
    "engine_worker": plain("engine.py"),
    "diffusion_pipeline": plain("diffusion.py"),
    "http_server": Run(["{python}", "server.py", "{port}"], env=ENV, timeout=300,
                       entrypoint="server.py",
                       http=Http(port=0, ready="GET /", ready_within=120,
                                 request="POST /predict",
                                 json_body={"inputs": [[0.5] * 16, [-0.5] * 16]},
                                 expect_json_key="outputs")),
}
#: The attacks of ``attacks.py``: the plain training script, in an interpreter made hostile.
ATTACKS: dict[str, Run] = {"attack_borrowed_name": plain("train.py", "--steps", "2"),
                           "attack_edited_optimizer": plain("train.py", "--steps", "2")}
NAME = os.environ.get("REB_WORKLOAD", "two_step")

repo = Repo(
    f"reb/workload-{NAME}",
    commit="0" * 40,  # made at run time: run_family.py passes --reb-allow-commit-mismatch
    imports_total=1,
    single_gpu={**WORKLOADS, **ATTACKS}[NAME],
    skip={"cpu": "repo_not_supported", "multi_gpu": "repo_not_supported"},
)
