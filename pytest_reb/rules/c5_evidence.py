"""C5's evidence record: what the claimed interpreter is, as the stage observed it.

``pyramid/c5_observe.py`` asks the questions in the target and fills these
records; the audit's rules (``c5``, ``c5_strict``, ``c5_compat``) read them and
nothing else, so a hand-made observation is a test row.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from pytest_reb.evidence.hostfacts import HostFacts

#: The official validator's two questions, verbatim (compat judges their stdout).
OFFICIAL_VERSION_CODE = "import platform; print(platform.python_version())"
OFFICIAL_TORCH_CODE = "import torch; print(torch.__version__)"
#: The JSON torch probe of the bundles that also read CUDA and the device count from it.
OFFICIAL_TORCH_JSON_CODE = (
    "import json\n"
    "try:\n"
    "  import torch\n"
    "  print(json.dumps({'ok': True, 'torch_version': str(torch.__version__),"
    " 'cuda_available': bool(torch.cuda.is_available()),"
    " 'gpu_count': int(torch.cuda.device_count())}))\n"
    "except Exception as e:\n"
    "  print(json.dumps({'ok': False, 'error': str(e)}))\n")


@dataclass
class Invocation:
    """One run of the claimed interpreter, as the host saw it (stdout clipped)."""

    exit_code: int | None
    stdout: str
    stderr: str
    timed_out: bool = False

    @property
    def ok(self) -> bool:
        """The official success rule: exit 0, in time, something printed."""
        return self.exit_code == 0 and not self.timed_out and bool(self.stdout.strip())


@dataclass
class PythonObservation:
    """What the claimed interpreter is, seen from inside the target.

    ``exists``/``is_dir``/``executable`` are None when the target could not
    answer (no ``test`` binary); ``runs`` is the strict answer (the nonce
    came back), ``official_*`` are the compat answers.
    """

    path: str
    absolute: bool = True
    exists: bool | None = None
    is_dir: bool | None = None
    executable: bool | None = None
    runs: bool | None = None
    problem: str = ""
    python_version: str | None = None
    sys_executable: str | None = None
    torch_version: str | None = None
    torch_error: str | None = None
    official_version: Invocation | None = None
    official_torch: Invocation | None = None
    official_torch_json: Invocation | None = None
    #: what the host read of it from the target's files (``hostfacts``; strict only)
    host: HostFacts | None = None
    #: the tier whose probe answered the strict question, where not C5's own: ``"c2"``
    #: (its CUDA probe, given the nonce in the same fresh container; ``pyramid/answers.py``)
    answered_by: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)
