"""long-context-attention's sitecustomize (``repos/shims/test_feifeibear__long_context_attention``):
``--attn_type torch`` accepted as the pinned AttnType's TORCH_EFFICIENT.

The shim runs on the host python against a stand-in of ``yunchang.kernels`` with the
pinned code; an environment's own sitecustomize, hidden by ours, still runs.
"""

from __future__ import annotations

from pathlib import Path

from support.repomodules import REPOS
from support.shims import python_code


def test_long_context_attention_shim(tmp_path: Path) -> None:
    """--attn_type torch maps to TORCH_EFFICIENT, everything else passes, a hidden sitecustomize
    still runs; checked on a stand-in of yunchang.kernels with the pinned AttnType code."""
    kernels = tmp_path / "repo" / "yunchang" / "kernels"
    kernels.mkdir(parents=True)
    (kernels.parent / "__init__.py").write_text("")
    (kernels / "__init__.py").write_text(
        "from enum import Enum\n"
        "class AttnType(Enum):\n"
        "    FA = 'fa'\n    TORCH_EFFICIENT = 'torch_efficient'\n"
        "    @classmethod\n"
        "    def from_string(cls, s):\n"
        "        for member in cls:\n"
        "            if member.value == s:\n"
        "                return member\n"
        "        raise ValueError(f\"'{s}' is not a valid {cls.__name__}\")\n")
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "sitecustomize.py").write_text("import os\nos.environ['THEIRS_RAN'] = '1'\n")
    shim = REPOS / "shims" / "test_feifeibear__long_context_attention"
    out = python_code(
        "import os\nfrom yunchang.kernels import AttnType as A\n"
        "print(A.from_string('torch'), A.from_string('fa'), os.environ.get('THEIRS_RAN'))\n"
        "try:\n    A.from_string('nope')\nexcept ValueError as e:\n    print(e)\n",
        [shim, tmp_path / "repo", theirs], tmp_path)
    assert out.splitlines() == ["AttnType.TORCH_EFFICIENT AttnType.FA 1",
                                "'nope' is not a valid AttnType"]
