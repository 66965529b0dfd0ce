"""A CPU-only ``torch`` stand-in on a folder of its own, for probes run under this host's
interpreter (``PYTHONPATH`` set to it): what the CUDA probe reads of a real torch, no more."""

from __future__ import annotations

from pathlib import Path


def cpu_torch_site(root: Path, first: str = "") -> Path:
    """The site folder under ``root`` holding a ``torch`` 2.4.0 that sees no CUDA, its module
    beginning with ``first`` (say, the import of a real compiled module, as torch's does)."""
    torch = root / "site" / "torch"
    torch.mkdir(parents=True)
    (torch / "__init__.py").write_text(
        f"{first}__version__ = '2.4.0'\nclass version:\n    cuda = None\n"
        "class cuda:\n    is_available = staticmethod(lambda: False)\n"
        "    device_count = staticmethod(lambda: 0)\n")
    return torch.parent
