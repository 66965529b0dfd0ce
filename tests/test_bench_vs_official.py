"""The pure parts of ``bench/vs_official.py`` and the ``vs_official_sides.py`` it imports: where
run_all.sh's stages start and end in its stamped output, the pyright stage's split, a sampled CPU
counter's value between samples, the recorder's lines read back per tier, and the stages each
subject compares.  Nothing here is timed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import vs_official as bench  # bench/ is on the suite's pythonpath
import vs_official_sides as sides


def test_stages_start_at_their_headers_in_each_bundles_spelling() -> None:
    events = [(0.0, 0.0, "===== [pyright] ====="),
              (0.5, 0.1, "+ bash benchmark_scripts/run_pyright_missing_imports.sh"),
              (4.0, 2.0, "[run_all] stage=pyright => OK"),
              (4.1, 2.0, "===== stage: prepare ====="),
              (6.0, 3.0, "[run_all] Running stage: cpu"),
              (9.0, 7.0, "===== [single_gpu] ====="),
              (9.5, 7.1, "Stage single_gpu command_exit_code=1 outcome=failure"),
              (9.6, 7.1, "=============================="),
              (9.6, 7.1, "Stage: cuda"),
              (9.8, 7.2, "result: status=failure exit_code=1 script_rc=1"),
              (9.9, 7.3, "=== [run_all] stage: env_size ===")]
    spans = sides.stage_spans(events, (10.0, 7.5))
    assert spans == {"pyright": (0.0, 4.1, 0.0, 2.0), "prepare": (4.1, 6.0, 2.0, 3.0),
                     "cpu": (6.0, 9.0, 3.0, 7.0), "single_gpu": (9.0, 9.6, 7.0, 7.1),
                     "cuda": (9.6, 9.9, 7.1, 7.3), "env_size": (9.9, 10.0, 7.3, 7.5)}


def test_a_stage_named_again_or_outside_a_header_starts_nothing() -> None:
    events = [(0.0, 0.0, "===== [cpu] ====="),
              (1.0, 0.5, "the cpu stage says cuda and env_size in plain text"),
              (2.0, 1.0, "===== [cpu] ===== (again)"),
              (3.0, 2.0, "================================"),
              (4.0, 3.0, "===== [cuda] =====")]
    spans = sides.stage_spans(events, (5.0, 3.5))
    assert list(spans) == ["cpu", "cuda"]
    assert spans["cpu"] == (0.0, 4.0, 0.0, 3.0)


def test_single_gpu_is_not_read_as_cpu_nor_multi_gpu_as_a_gpu_stage() -> None:
    spans = sides.stage_spans([(0.0, 0.0, "===== [multi_gpu] =====")], (1.0, 1.0))
    assert list(spans) == ["multi_gpu"]


def test_the_pyright_stages_processes_are_told_apart_by_their_command_lines() -> None:
    assert sides.classify(["/opt/b/bin/python", "-m", "pip", "install", "-q", "pyright"]) \
        == "pip install"
    assert sides.classify(["/venv/bin/pip", "install", "pyright[nodejs]"]) == "pip install"
    assert sides.classify(["/usr/bin/node", "/usr/local/bin/npm", "install", "pyright@1.1"]) \
        == "npm (pyright's JS package)"
    assert sides.classify(["/usr/bin/node", "/root/.cache/pyright-python/1.1/node_modules/"
                           "pyright/index.js", "--outputjson"]) == "pyright analysis"
    assert sides.classify(["python", "-m", "pyright", "src"]) == "pyright analysis"
    assert sides.classify(["bash", "benchmark_scripts/run_cpu_entrypoint.sh"]) is None
    assert sides.classify(["/venv/bin/pip", "list"]) is None


def test_the_pyright_stage_splits_by_what_ran_between_samples() -> None:
    pip, node = frozenset({"pip install"}), frozenset({"pyright analysis"})
    samples = [(9.0, 0.0, pip),  # before the stage: not counted
               (10.0, 1.0, frozenset()), (11.0, 1.5, pip), (12.0, 2.5, pip),
               (13.0, 3.0, frozenset({"pip install", "pyright analysis"})),
               (14.0, 4.0, node), (15.0, 5.0, frozenset())]
    split = sides.pyright_split(samples, (10.0, 16.0, 1.0, 5.5))
    assert split == {"pip install": (3.0, 2.0), "npm (pyright's JS package)": (0.0, 0.0),
                     "pyright analysis": (1.0, 1.0), "the rest": (2.0, 1.5)}
    # the parts add up to the stage
    assert sum(v[0] for v in split.values()) == 6.0


def test_a_sampled_counter_is_interpolated_and_zero_before_its_container() -> None:
    series = [(10.0, 1.0), (11.0, 3.0), (12.0, 3.5)]
    assert sides.value_at(series, 9.0) == 0.0
    assert sides.value_at(series, 10.0) == 1.0
    assert sides.value_at(series, 10.5) == pytest.approx(2.0)
    assert sides.value_at(series, 12.0) == 3.5
    assert sides.value_at(series, 99.0) == 3.5
    assert sides.value_at([], 1.0) == 0.0


def test_the_recorders_lines_are_read_back_per_tier() -> None:
    node = "repos/test_x.py::test_{}[img]"
    lines = [{"session": "start", "t": 1.0, "cpu": 0.5},
             {"phase": "setup", "nodeid": node.format("c0_imports"), "duration": 0.25},
             {"test": node.format("c0_imports") + " (call)", "argv": ["/reb/node", "x"],
              "duration": 2.0},
             {"phase": "call", "nodeid": node.format("c0_imports"), "duration": 2.5},
             {"item": node.format("c0_imports"), "start": 2.0, "end": 5.0, "cpu": 1.0},
             {"test": node.format("c5_audit") + " (call)",
              "argv": ["/env/bin/python", "-c", "import torch"], "duration": 1.5},
             {"test": node.format("c5_audit") + " (call)",
              "argv": ["/reb/sh", "/reb/env_size_probe.py"], "duration": 0.3},
             {"item": node.format("c5_audit"), "start": 5.0, "end": 7.0, "cpu": 0.5},
             {"session": "end", "t": 8.0, "cpu": 2.5}]
    got = sides.read_record(json.dumps(x) for x in lines)
    assert got["session"] == {"start": (1.0, 0.5), "end": (8.0, 2.5)}
    c0 = got["tiers"]["c0"]
    assert (c0["wall"], c0["cpu"], c0["spans"]) == (3.0, 1.0, [(2.0, 5.0)])
    assert c0["phases"] == {"setup": 0.25, "call": 2.5}
    assert got["commands"]["c0"] == {"pyright": 2.0}
    assert got["commands"]["c5"] == {"C5's interpreter questions": 1.5,
                                     "env-size walk": 0.3}



def test_commands_are_also_read_back_by_the_thread_that_sent_them() -> None:
    """Under lanes the C0 item is current while lane 1 runs C1's entrypoint: grouping by
    the sending thread keeps the lanes' commands, and their containers' CPU, apart."""
    node = "repos/test_x.py::test_c0_imports[img] (call)"
    lines = [{"test": node, "argv": ["/reb/node", "x"], "duration": 2.0, "cpu": 1.5,
              "thread": "reb-lane-c0-c2"},
             {"test": node, "argv": ["/env/bin/python", "train.py"], "duration": 6.0,
              "cpu": 5.0, "thread": "reb-lane-c1"},
             {"test": node, "argv": ["/reb/node", "y"], "duration": 1.0, "cpu": None,
              "thread": "reb-lane-c0-c2"}]
    got = sides.read_record(json.dumps(x) for x in lines)
    assert got["by_thread"] == {"reb-lane-c0-c2": {"pyright": [3.0, 1.5]},
                                "reb-lane-c1": {"the tier's own command": [6.0, 5.0]}}
    assert got["commands"]["c0"] == {"pyright": 3.0, "the tier's own command": 6.0}


def test_each_tiers_work_counts_its_commands_wherever_a_lane_ran_them() -> None:
    """C2's sweep sent by lane 2 while C1's item waits is C2's work, not C1's: compared by
    work, C2 costs its commands, where by items' walls it cost nothing."""
    c1 = "repos/test_x.py::test_c1_cpu[img] (call)"
    lines = [{"test": c1, "argv": ["/env/bin/python", "/reb/probes/ext_probe.py"],
              "duration": 14.0, "cpu": 13.0, "thread": "reb-lane-c0-c2"},
             {"test": c1, "argv": ["/env/bin/python", "/reb/probes/cuda_probe.py"],
              "duration": 2.0, "cpu": 1.5, "thread": "reb-lane-c0-c2"},
             {"test": c1, "argv": ["/env/bin/python", "train.py"], "duration": 17.0,
              "cpu": 16.0, "thread": "reb-lane-c1"},
             {"test": c1, "argv": ["/env/bin/python", "-c", "import torch"], "duration": 2.0,
              "cpu": None, "thread": "reb-lane-c1"}]
    got = sides.read_record(json.dumps(x) for x in lines)
    assert got["work"] == {"c2": (16.0, 14.5), "c1": (17.0, 16.0), "c5": (2.0, 0.0)}
    own = sides.Subject("reb-real:x", "o/n", Path("m.py"), cpu_own=True)
    off = {"status": {"prepare": "failure"},
           "stages": {"pyright": (10.0, 5.0), "cuda": (2.0, 1.0), "env_size": (1.0, 0.5),
                      "hallucination": (3.0, 2.0)}}
    mine = {"tiers": {"c1": {"wall": 40.0, "cpu": 35.0}}, "work": got["work"]}
    assert bench.ratios(own, off, mine) == (16.0, 8.5, 0.0, 0.0)
    assert bench.ratios(own, off, mine, by_work=True) == (16.0, 8.5, 18.0, 14.5)

def test_the_demo_leaves_the_cpu_stage_out_of_the_comparison() -> None:
    demo = sides.Subject("reb-demo:good", "o/n", Path("m.py"), cpu_own=False)
    own = sides.Subject("reb-real:x", "o/n", Path("m.py"), cpu_own=True)
    assert "cpu" not in bench.compared(demo)
    assert bench.compared(own) == ["pyright", "cpu", "cuda", "env_size", "hallucination"]
    off = {"stages": {"pyright": (10.0, 5.0), "cpu": (30.0, 20.0), "cuda": (2.0, 1.0),
                      "env_size": (1.0, 0.5), "hallucination": (3.0, 2.0), "prepare": (9.0, 9.0)}}
    mine = {"tiers": {t: {"wall": 2.0, "cpu": 1.0} for t in ("c0", "c1", "c2", "c5")}}
    assert bench.ratios(demo, off, mine) == (16.0, 8.5, 6.0, 3.0)
    assert bench.ratios(own, off, mine) == (46.0, 28.5, 8.0, 4.0)


def test_a_real_image_whose_official_prepare_failed_leaves_the_cpu_stage_out() -> None:
    """The official cpu stage runs on what its prepare made: with the hub unreachable it stops
    before the entrypoint, which C1 runs on the asset cache's stand-in."""
    own = sides.Subject("reb-real:x", "o/n", Path("m.py"), cpu_own=True)
    failed = {"status": {"prepare": "failure", "cpu": "failure"}}
    fine = {"status": {"prepare": "success", "cpu": "success"}}
    assert "cpu" not in bench.compared(own, [fine, failed])
    assert "cpu" in bench.compared(own, [fine, {"status": {"prepare": "not run"}}])
    off = {**failed, "stages": {"pyright": (10.0, 5.0), "cpu": (0.2, 0.2), "cuda": (2.0, 1.0),
                                "env_size": (1.0, 0.5), "hallucination": (3.0, 2.0)}}
    mine = {"tiers": {t: {"wall": 2.0, "cpu": 1.0} for t in ("c0", "c1", "c2", "c5")}}
    assert bench.ratios(own, off, mine) == (16.0, 8.5, 6.0, 3.0)


def test_a_table_of_no_rows_is_its_header() -> None:
    """A subject whose run recorded no command still prints its (empty) table."""
    from common import table

    assert table(["thread", "wall s"], []).splitlines() == ["| thread | wall s |",
                                                           "|--------|--------|"]
