"""ml-aim's sitecustomize (``repos/shims/test_apple__ml_aim``): ``AIMMixin.forward`` also
returns the attention probe the official compat mode reads.

The shim runs on the host python against a stand-in of ``aim.v1.mixins``.
"""

from __future__ import annotations

from pathlib import Path

from support.repomodules import REPOS
from support.shims import python_code


def test_ml_aim_shim(tmp_path: Path) -> None:
    mixins = tmp_path / "repo" / "aim-v1" / "aim" / "v1"
    mixins.mkdir(parents=True)
    for pkg in (mixins.parent, mixins):
        (pkg / "__init__.py").write_text("")
    (mixins / "mixins.py").write_text(
        "class AIMMixin:\n    def forward(self, x, mask=None, max_block_id=-1):\n"
        "        return x * 2\n")
    shim = REPOS / "shims" / "test_apple__ml_aim"
    code = "from aim.v1.mixins import AIMMixin\nprint(AIMMixin().forward(21))\n"
    assert python_code(code, [shim], tmp_path / "repo",
                      SCIMLOPSBENCH_AIM_ATTNPROBE_COMPAT="1").strip() == "(42, None)"
