"""SenseVoice's sitecustomize: FunASR's ModelScope download served from the prepared folder.

Stand-ins, on PYTHONPATH after the shim folder and our shim library: a ``modelscope`` whose
``snapshot_download`` first asks a "hub" function (which logs the call and fails, as it does with
no network) and then returns its cache folder, and a ``funasr`` whose
``get_or_download_model_dir`` imports and calls it the way FunASR 1.1-1.4.3 does.  The prepared
folder is where ``--reb-prepare`` puts the model (the layout's dest under the stage's view).
The multi-GPU stage's ``{module:..}`` names the installed train script.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from support.repomodules import SHIMLIB, Stage, module, write_tree
from support.shims import python

from pytest_reb.pyramid.shims import with_shim

SENSEVOICE = module("test_FunAudioLLM__SenseVoice").repo
MODEL = "iic/SenseVoiceSmall"

#: modelscope's hub package as 1.40 writes it (binds the function on import) and as 1.16 does.
HUB_INITS = {
    "binds_function": "from .snapshot_download import snapshot_download\n",
    "plain": "",
}

STAND_INS = {
    "modelscope/__init__.py": "",
    "modelscope/utils/__init__.py": "",
    "modelscope/utils/constant.py": """
        class Invoke:
            KEY = "invoked_by"
            PIPELINE = "pipeline"
            LOCAL_TRAINER = "local_trainer"


        class ThirdParty:
            KEY = "third_party"
    """,
    "modelscope/hub/check_model.py": """
        def check_local_model_is_latest(model_root_path, user_agent=None):
            raise AssertionError("FunASR checks only a local path, not an id")
    """,
    "modelscope/hub/api.py": """
        import json
        import os


        def get_valid_revision(model_id, revision):
            with open(os.environ["LOG"], "a") as log:
                log.write(json.dumps(["network", model_id, revision]) + "\\n")
            raise ConnectionError("no network in the container")
    """,
    "modelscope/hub/snapshot_download.py": """
        import json
        import os

        from modelscope.hub.api import get_valid_revision


        def snapshot_download(model_id=None, revision=None, cache_dir=None, user_agent=None,
                              local_files_only=False, cookies=None, ignore_file_pattern=None,
                              allow_file_pattern=None, local_dir=None, allow_patterns=None,
                              ignore_patterns=None, max_workers=8, repo_id=None,
                              repo_type="model"):
            model_id = repo_id or model_id
            with open(os.environ["LOG"], "a") as log:
                log.write(json.dumps(["original", model_id, revision]) + "\\n")
            get_valid_revision(model_id, revision)
            return os.path.join(cache_dir or "/hub-cache", model_id)
    """,
    "funasr/__init__.py": "",
    "funasr/download/__init__.py": "",
    "funasr/download/download_model_from_hub.py": """
        import os


        def get_or_download_model_dir(model, model_revision=None, is_training=False,
                                      check_latest=True):
            from modelscope.hub.check_model import check_local_model_is_latest
            from modelscope.hub.snapshot_download import snapshot_download
            from modelscope.utils.constant import Invoke, ThirdParty

            key = Invoke.LOCAL_TRAINER if is_training else Invoke.PIPELINE
            agent = {Invoke.KEY: key, ThirdParty.KEY: "funasr"}
            if os.path.exists(model) and check_latest:
                check_local_model_is_latest(model, user_agent=agent)
                return model
            return snapshot_download(model, revision=model_revision, user_agent=agent)
    """,
    # what the stage's process does: FunASR resolves the id (train_ds passes is_training)
    "load.py": """
        import json
        import sys

        from funasr.download.download_model_from_hub import get_or_download_model_dir

        try:
            print(json.dumps(get_or_download_model_dir(sys.argv[1], "master",
                                                       is_training=len(sys.argv) > 2)))
        except ConnectionError as exc:
            print(json.dumps("failed: " + str(exc)))
    """,
    # another call into modelscope, straight with options FunASR never passes
    "direct.py": """
        import json
        import sys

        from modelscope.hub.snapshot_download import snapshot_download

        print(json.dumps(snapshot_download(**json.loads(sys.argv[1]))))
    """,
}


def stand_ins(tmp_path: Path, hub_init: str = "binds_function") -> Path:
    return write_tree(tmp_path / "site", {**STAND_INS,
                                          "modelscope/hub/__init__.py": HUB_INITS[hub_init]})


def prepare(stage: Stage, files: dict[str, str] | None = None) -> Path:
    """The model's folder where --reb-prepare puts it, with ``files``."""
    if files is None:
        files = {"configuration.json": '{"framework": "pytorch"}', "model.pt": "weights",
                 "config.yaml": "model: SenseVoiceSmall", ".msc": "index"}
    return write_tree(stage.raw("SenseVoiceSmall"), files)


def run(stage: Stage, site: Path, script: str, *args: str, shim: bool = True,
        **extra: str) -> tuple[object, list[list]]:
    """``script`` under the stage's env (shim folder and shim library unless ``shim`` is
    false, then the stand-ins on PYTHONPATH): what it printed and the calls the stand-in
    modelscope logged."""
    env = with_shim({k: stage.fill(v) for k, v in stage.run.env.items()},
                    stage.run.shim_dir if shim else None, str(SHIMLIB))
    env["PYTHONPATH"] = ":".join(p for p in (env.get("PYTHONPATH"), str(site)) if p)
    log = site.parent / "log"
    log.unlink(missing_ok=True)
    base = {k: v for k, v in os.environ.items() if k not in ("MODELSCOPE_CACHE", "PYTHONPATH")}
    done = subprocess.run([sys.executable, str(site / script), *args], cwd=site,
                          env={**base, **env, "LOG": str(log), **extra},
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    calls = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return json.loads(done.stdout.strip().splitlines()[-1]), calls


@pytest.mark.parametrize("hub_init", sorted(HUB_INITS))
@pytest.mark.parametrize("name", ["cpu", "single_gpu", "multi_gpu"])
def test_every_stage_gets_the_prepared_model_without_the_hub(tmp_path: Path, name: str,
                                                              hub_init: str) -> None:
    stage = Stage(getattr(SENSEVOICE, name), tmp_path, name, SENSEVOICE)
    assert stage.run.shim_dir is not None
    assert (Path(stage.run.shim_dir) / "sitecustomize.py").is_file()
    folder = prepare(stage)
    site = stand_ins(tmp_path, hub_init)
    training = ["train"] if name == "multi_gpu" else []
    got, calls = run(stage, site, "load.py", MODEL, *training)
    assert Path(str(got)) == folder
    assert (folder / "configuration.json").is_file()
    assert calls == []  # neither the original download nor the hub was asked


def test_without_the_shim_the_cached_model_still_asks_the_hub(tmp_path: Path) -> None:
    """The stand-in fails offline as modelscope does, so the test above can fail."""
    stage = Stage(SENSEVOICE.cpu, tmp_path, "cpu", SENSEVOICE)
    prepare(stage)
    site = stand_ins(tmp_path)
    got, calls = run(stage, site, "load.py", MODEL, shim=False)
    assert got == "failed: no network in the container"
    assert calls == [["original", MODEL, "master"], ["network", MODEL, "master"]]


def test_an_id_without_a_prepared_folder_goes_to_modelscope(tmp_path: Path) -> None:
    stage = Stage(SENSEVOICE.cpu, tmp_path, "cpu", SENSEVOICE)
    prepare(stage)
    site = stand_ins(tmp_path)
    got, calls = run(stage, site, "load.py", "iic/SenseVoiceLarge")
    assert got == "failed: no network in the container"
    assert calls == [["original", "iic/SenseVoiceLarge", "master"],
                     ["network", "iic/SenseVoiceLarge", "master"]]


def test_a_folder_without_configuration_json_is_not_a_prepared_model(tmp_path: Path) -> None:
    stage = Stage(SENSEVOICE.cpu, tmp_path, "cpu", SENSEVOICE)
    prepare(stage, {"model.pt": "half a download"})
    site = stand_ins(tmp_path)
    got, calls = run(stage, site, "load.py", MODEL)
    assert got == "failed: no network in the container"
    assert [c[0] for c in calls] == ["original", "network"]


def test_modelscope_cache_replaces_the_homes_cache(tmp_path: Path) -> None:
    stage = Stage(SENSEVOICE.cpu, tmp_path, "cpu", SENSEVOICE)
    prepare(stage)  # under HOME, which MODELSCOPE_CACHE overrides
    site = stand_ins(tmp_path)
    other = tmp_path / "ms_cache"
    got, calls = run(stage, site, "load.py", MODEL, MODELSCOPE_CACHE=str(other))
    assert got == "failed: no network in the container" and len(calls) == 2
    folder = write_tree(other / "models" / "iic" / "SenseVoiceSmall",
                        {"configuration.json": "{}"})
    got, calls = run(stage, site, "load.py", MODEL, MODELSCOPE_CACHE=str(other))
    assert Path(str(got)) == folder and calls == []


def test_a_dotted_name_is_found_as_modelscope_spells_it(tmp_path: Path) -> None:
    stage = Stage(SENSEVOICE.cpu, tmp_path, "cpu", SENSEVOICE)
    site = stand_ins(tmp_path)
    home = Path(stage.fill(stage.run.env["HOME"]))
    folder = write_tree(home / ".cache/modelscope/hub/models/Qwen/Qwen2___5-0___5B",
                        {"configuration.json": "{}"})
    got, calls = run(stage, site, "load.py", "Qwen/Qwen2.5-0.5B")
    assert Path(str(got)) == folder and calls == []


@pytest.mark.parametrize("kwargs", [
    {"model_id": MODEL, "cache_dir": "/elsewhere"},
    {"model_id": MODEL, "local_dir": "/elsewhere/x"},
    {"repo_id": MODEL, "repo_type": "dataset"},
])
def test_calls_for_another_place_or_a_dataset_go_to_modelscope(tmp_path: Path,
                                                               kwargs: dict) -> None:
    stage = Stage(SENSEVOICE.cpu, tmp_path, "cpu", SENSEVOICE)
    prepare(stage)
    site = stand_ins(tmp_path)
    with pytest.raises(AssertionError, match="no network in the container"):
        run(stage, site, "direct.py", json.dumps(kwargs))


def test_a_repo_id_keyword_is_served_too(tmp_path: Path) -> None:
    stage = Stage(SENSEVOICE.cpu, tmp_path, "cpu", SENSEVOICE)
    folder = prepare(stage)
    site = stand_ins(tmp_path)
    got, calls = run(stage, site, "direct.py", json.dumps({"repo_id": MODEL}))
    assert Path(str(got)) == folder and calls == []


def test_the_environments_own_sitecustomize_still_runs(tmp_path: Path) -> None:
    stage = Stage(SENSEVOICE.cpu, tmp_path, "cpu", SENSEVOICE)
    folder = prepare(stage)
    site = stand_ins(tmp_path)
    (site / "sitecustomize.py").write_text(
        "import os\nopen(os.environ['LOG'], 'a').write('[\"own sitecustomize\"]\\n')\n")
    got, calls = run(stage, site, "load.py", MODEL)
    assert Path(str(got)) == folder and calls == [["own sitecustomize"]]


def test_sensevoice_train_script_is_found_by_module_name(tmp_path: Path) -> None:
    """{module:funasr.bin.train_ds} names the installed funasr/bin/train_ds.py."""
    sense = module("test_FunAudioLLM__SenseVoice")
    (spelled,) = sense.TOKENS["<site-packages>/funasr/bin/train_ds.py"]
    name = re.fullmatch(r"\{module:([\w.]+)\}", spelled)
    assert name is not None and spelled in sense.repo.multi_gpu.argv
    site = write_tree(tmp_path / "site-packages", {
        "funasr/__init__.py": "", "funasr/bin/__init__.py": "", "funasr/bin/train_ds.py": ""})
    code = f"import importlib.util; print(importlib.util.find_spec({name.group(1)!r}).origin)"
    out = python(["-c", code], [site], tmp_path)
    assert out.stdout.strip() == str(site / "funasr" / "bin" / "train_ds.py"), out.stderr
