"""RenderFormer's example scenes (``repos/test_microsoft__renderformer.py``): the setup converts
the raw scene copies into h5 files under ``{out}`` with the repository's
scene_processor/convert_scene.py (a stdlib stand-in that records how it was called).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.assets import Target, write
from support.repomodules import module

#: A stand-in of scene_processor/convert_scene.py: reads the scene's meshes against the JSON's
#: folder (as generate_scene_mesh does), writes the mesh and the h5, records its call.
CONVERTER = """\
import argparse, json, os
parser = argparse.ArgumentParser()
parser.add_argument("scene_config_path")
parser.add_argument("--mesh_path")
parser.add_argument("--output_h5_path")
args = parser.parse_args()
config = json.load(open(args.scene_config_path))
folder = os.path.dirname(args.scene_config_path)
meshes = [open(folder + "/" + o["mesh_path"]).read() for o in config["objects"].values()]
open(args.mesh_path, "w").write("".join(meshes))
open(args.output_h5_path, "w").write(json.dumps({"scene": config["scene_name"],
                                                  "cwd": os.getcwd()}))
"""


def renderformer(tmp_path: Path) -> Target:
    checkout = tmp_path / "checkout"
    write(checkout / "scene_processor" / "convert_scene.py", CONVERTER)
    examples = checkout / "examples"
    write(examples / "templates" / "backgrounds" / "plane.obj", "plane\n")
    for scene, mesh in (("cbox", "objects/cbox/tall-box.obj"),
                        ("shader-ball", "objects/shader-ball/ball.obj")):
        write(examples / mesh, f"{scene} mesh\n")
        write(examples / f"{scene}.json", json.dumps({"scene_name": scene, "objects": {
            "bg": {"mesh_path": "templates/backgrounds/plane.obj"},
            "obj": {"mesh_path": mesh}}}))
    target = Target(tmp_path, module("test_microsoft__renderformer").repo, checkout)
    model = tmp_path / "hub" / "renderformer-v1-base"
    write(model / "config.json", "{}")
    target.prepare(**{"renderformer-v1-base": model})
    return target


@pytest.mark.parametrize("stage", ["cpu", "single_gpu", "multi_gpu"])
def test_renderformer_scenes_converted_into_out(tmp_path: Path, stage: str) -> None:
    target = renderformer(tmp_path)
    assert sorted(p.name for p in (target.view / "dataset").iterdir()) == [
        "cbox.json", "shader-ball.json"]  # the raw copies
    run = getattr(target.repo, stage)
    target.setup(run)
    scenes = ["cbox", "shader-ball"] if stage == "multi_gpu" else ["cbox"]
    for scene in scenes:
        h5 = json.loads((target.out / scene / f"{scene}.h5").read_text())
        assert h5 == {"scene": scene, "cwd": str(target.checkout)}
        mesh = (target.out / "scene_meshes" / f"{scene}.obj").read_text()
        assert mesh == f"plane\n{scene} mesh\n"
    argv = [target.fill(a, run) for a in run.argv]
    h5s = [argv[i + 1] for i, a in enumerate(argv) if a in ("--h5_file", "--scene")]
    assert h5s == [str(target.out / s / f"{s}.h5") for s in scenes]


def test_renderformer_failed_conversion_fails_setup(tmp_path: Path) -> None:
    target = renderformer(tmp_path)
    (target.checkout / "scene_processor" / "convert_scene.py").write_text("pass\n")
    done = target.setup(target.repo.cpu, check=False)
    assert done.returncode == 1 and "failed to generate" in done.stderr
