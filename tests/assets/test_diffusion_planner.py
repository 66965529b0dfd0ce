"""Diffusion-Planner's sample (``repos/test_ZhengYinan_AIR__Diffusion_Planner.py``): made by
the setup itself, with the shapes the training reads (numpy is real).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from support.assets import names, run_step
from support.repomodules import module
from support.repomodules import runs as stages


def test_diffusion_planner_sample_is_made_by_setup(tmp_path: Path) -> None:
    mod = module("test_ZhengYinan_AIR__Diffusion_Planner")
    made = next(a for a in mod.repo.assets if a.name == "synthetic_sample").synthetic
    assert made is not None and made.text is None and "setup" in made.made_by
    for run in stages(mod.repo):
        assert "synthetic_sample" not in names(mod.repo, run)  # made by the stage itself
        argv = list(run.argv)
        assert argv[argv.index("--train_set") + 1] == "{out}/dataset"
        assert argv[argv.index("--train_set_list") + 1] == "{out}/dataset/train_list.json"
        (step,) = run.setup
        out = tmp_path / str(run.nproc)
        done = run_step(step, run, tmp_path, out=str(out))
        assert done.returncode == 0, done.stderr
        assert json.loads((out / "dataset" / "train_list.json").read_text()) == ["sample_0.npz"]
        with np.load(out / "dataset" / "sample_0.npz") as npz:
            got = {k: (npz[k].shape, npz[k].dtype, bool(npz[k].any())) for k in npz.files}
    f32, b = np.dtype("float32"), np.dtype("bool")
    assert got == {
        "ego_current_state": ((10,), f32, False),
        "ego_agent_future": ((8, 3), f32, False),
        "neighbor_agents_past": ((2, 2, 11), f32, False),
        "neighbor_agents_future": ((2, 8, 3), f32, False),
        "lanes": ((2, 4, 12), f32, False),
        "lanes_speed_limit": ((2, 1), f32, False),
        "lanes_has_speed_limit": ((2, 1), b, False),
        "route_lanes": ((1, 4, 12), f32, False),
        "route_lanes_speed_limit": ((1, 1), f32, False),
        "route_lanes_has_speed_limit": ((1, 1), b, False),
        "static_objects": ((1, 10), f32, False),
    }
