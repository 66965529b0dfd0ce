"""FlagGems's shim (``repos/shims/test_flagos_ai__FlagGems``): the first test_accuracy_bert
node, then only that node.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from support.repomodules import module
from support.shims import Tree, run

from pytest_reb.spec import PYTEST_NODE

GEMS = "test_flagos_ai__FlagGems"


#: A stand-in of examples/model_bert_test.py: the same parametrize stack, no torch.
STANDIN_BERT = """\
import pytest

def test_other():
    pass

@pytest.mark.parametrize("prompt", ["How are you today?", "What is your name?"])
@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_accuracy_bert(prompt, dtype):
    print("RAN", prompt, dtype)
"""


#: pytest in the stand-in checkout loads no plugin of this machine (ours included).
QUIET_PYTEST = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTEST_ADDOPTS": "-p no:cacheprovider"}


def gems_tree(tmp_path: Path, test_file: str) -> Tree:
    tree = Tree(tmp_path, GEMS)
    (tree["repo"] / "examples").mkdir()
    (tree["repo"] / "examples" / "model_bert_test.py").write_text(test_file)
    (tree["repo"] / "pytest.ini").write_text("[pytest]\ntestpaths = tests\n")
    return tree


def test_flaggems_first_node_then_only_that_node(tmp_path: Path) -> None:
    """Setup collects -k test_accuracy_bert and writes the first node; the stage's argv then
    runs exactly that one node."""
    tree = gems_tree(tmp_path, STANDIN_BERT)
    stage = module(GEMS).repo.single_gpu
    tree.setup(stage, **QUIET_PYTEST)
    node = (tree["out"] / "bert_node").read_text().strip()
    assert node == "examples/model_bert_test.py::test_accuracy_bert[float16-How are you today?]"

    argv = tree.argv(stage.argv)
    assert argv == [sys.executable, "-c", PYTEST_NODE, "-q", "-p", "no:cacheprovider",
                    "--assert=plain", node]
    res = run([*argv, "-s"], tree["repo"], **QUIET_PYTEST)
    assert res.returncode == 0, res.stdout
    assert res.stdout.count("RAN ") == 1 and "RAN How are you today? float16" in res.stdout
    assert "1 passed" in res.stdout


@pytest.mark.parametrize("test_file", ["def test_other():\n    pass\n", "import nope\n"])
def test_flaggems_no_node_exits_16(tmp_path: Path, test_file: str) -> None:
    """No matching node, or a collection error: exit 16 and no node file."""
    tree = gems_tree(tmp_path, test_file)
    step = module(GEMS).repo.single_gpu.setup[0]
    res = run(tree.argv(step), tree["repo"], **QUIET_PYTEST)
    assert res.returncode == 16, res.stdout
    assert not (tree["out"] / "bert_node").exists()
