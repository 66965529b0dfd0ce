"""pytest-reb setup for ZhengYinan-AIR/Diffusion-Planner: the one-sample training set.

The official prepare wrote, under the report's python with numpy, one
``sample_0.npz`` holding every array DiffusionPlannerData reads (all zeros,
float32 except the two ``*_has_speed_limit`` masks, bool) with shapes sized by
the stages' tiny options (--agent_num 2, --time_len 2, --future_len 8,
--lane_num 2, --lane_len 4, --route_num 1, --static_objects_num 1), and a
``train_list.json`` naming it.  This script writes the same two files into
OUT_DIR (the stage passes {out}/dataset as --train_set).  numpy is a
dependency of the repository itself.

Usage: make_sample.py OUT_DIR
"""

import json
import os
import sys

#: The stages' tiny sizes (train_predictor.py options of every stage).
AGENTS, TIME_LEN, FUTURE_LEN = 2, 2, 8
LANES, LANE_LEN, ROUTES, STATIC = 2, 4, 1, 1


def arrays(np):
    """Every key DiffusionPlannerData loads, as zeros of the official shapes and dtypes."""
    f32 = np.float32
    return {
        "ego_current_state": np.zeros((10,), f32),
        "ego_agent_future": np.zeros((FUTURE_LEN, 3), f32),
        "neighbor_agents_past": np.zeros((AGENTS, TIME_LEN, 11), f32),
        "neighbor_agents_future": np.zeros((AGENTS, FUTURE_LEN, 3), f32),
        "lanes": np.zeros((LANES, LANE_LEN, 12), f32),
        "lanes_speed_limit": np.zeros((LANES, 1), f32),
        "lanes_has_speed_limit": np.zeros((LANES, 1), bool),
        "route_lanes": np.zeros((ROUTES, LANE_LEN, 12), f32),
        "route_lanes_speed_limit": np.zeros((ROUTES, 1), f32),
        "route_lanes_has_speed_limit": np.zeros((ROUTES, 1), bool),
        "static_objects": np.zeros((STATIC, 10), f32),
    }


def main(argv):
    if len(argv) != 1:
        sys.exit(__doc__.strip().splitlines()[-1])
    import numpy as np

    out_dir = argv[0]
    os.makedirs(out_dir, exist_ok=True)
    np.savez(os.path.join(out_dir, "sample_0.npz"), **arrays(np))
    with open(os.path.join(out_dir, "train_list.json"), "w") as handle:
        json.dump(["sample_0.npz"], handle, indent=2)
    print(f"make_sample.py: wrote sample_0.npz and train_list.json to {out_dir}")


if __name__ == "__main__":
    main(sys.argv[1:])
