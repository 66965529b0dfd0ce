"""Convert RenderFormer's example scenes to h5 with the repository's converter, as prepare did.

The official prepare step ran, under the report's python from the checkout, for each of
``cbox`` and ``shader-ball``::

    scene_processor/convert_scene.py examples/<scene>.json \\
        --mesh_path benchmark_assets/cache/scene_meshes/<scene>.obj \\
        --output_h5_path benchmark_assets/dataset/<scene>/<scene>.h5

and failed (category ``data``) when an h5 was not written. This script does the same from the
prepared copies of the scene JSONs (read-only) into an output folder: ``OUT/<scene>/<scene>.h5``
and ``OUT/scene_meshes/<scene>.obj``. The converter resolves a scene's mesh files against the
JSON's own folder, which the copies lack, so each JSON is first copied to ``OUT/scenes/``
beside links to the checkout's ``examples/`` sub-folders (``objects/``, ``templates/``): the
same files the official conversion read. The converter is the repository's (it needs trimesh,
h5py, dacite and pymeshlab, which RenderFormer's requirements carry).

Usage: convert_scenes.py --repo DIR --out DIR SCENE.json [SCENE.json ...]     (stdlib only)
"""

import argparse
import os
import shutil
import subprocess
import sys


def stage_scene(scene_json, examples, scenes_dir):
    """Copy ``scene_json`` into ``scenes_dir`` beside links to the examples' folders."""
    os.makedirs(scenes_dir, exist_ok=True)
    for name in sorted(os.listdir(examples)):
        src, link = os.path.join(examples, name), os.path.join(scenes_dir, name)
        if os.path.isdir(src) and not os.path.lexists(link):
            os.symlink(src, link)
    staged = os.path.join(scenes_dir, os.path.basename(scene_json))
    shutil.copyfile(scene_json, staged)
    return staged


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", required=True, help="the checkout (read only)")
    parser.add_argument("--out", required=True, help="where the h5 files and meshes go")
    parser.add_argument("scenes", nargs="+", help="scene JSON files (the prepared copies)")
    args = parser.parse_args(argv)

    repo, out = os.path.abspath(args.repo), os.path.abspath(args.out)
    converter = os.path.join(repo, "scene_processor", "convert_scene.py")
    meshes = os.path.join(out, "scene_meshes")
    os.makedirs(meshes, exist_ok=True)
    for scene_json in args.scenes:
        name = os.path.splitext(os.path.basename(scene_json))[0]
        staged = stage_scene(scene_json, os.path.join(repo, "examples"),
                             os.path.join(out, "scenes"))
        h5 = os.path.join(out, name, name + ".h5")
        os.makedirs(os.path.dirname(h5), exist_ok=True)
        cmd = [sys.executable, converter, staged,
               "--mesh_path", os.path.join(meshes, name + ".obj"), "--output_h5_path", h5]
        print("[convert_scenes] " + " ".join(cmd), flush=True)
        code = subprocess.call(cmd, cwd=repo)
        if code or not os.path.isfile(h5):
            sys.exit(f"[convert_scenes] failed to generate {h5} (rc={code})")
    print("[convert_scenes] wrote " + ", ".join(
        os.path.join(out, n, n + ".h5")
        for n in (os.path.splitext(os.path.basename(s))[0] for s in args.scenes)))


if __name__ == "__main__":
    main()
