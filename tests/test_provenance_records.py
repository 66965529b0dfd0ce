"""The ``RECORD`` copies a loaded file is judged against (``pytest_reb/evidence/provenance.py``).

What must hold: every layer's copy is read, the container's own (its writable layer) at every
judgement, an image layer's once per process (image layers never change; every image built on
the demo's environment holds the same torch ``RECORD``).
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

from pytest_reb.evidence import loaded, provenance

SITE = "/env/lib/python3.11/site-packages"


def _record(root: Path, dist: str, rows: str) -> None:
    folder = root / SITE.lstrip("/") / f"{dist}.dist-info"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "RECORD").write_text(rows)


def test_an_image_layers_records_are_read_once_and_the_containers_every_time(
        tmp_path: Path, monkeypatch: Any) -> None:
    upper, lower = tmp_path / "upper", tmp_path / "lower"
    _record(lower, "yaml-6.0", "yaml/__init__.py,sha256=aaa,10\nyaml/x.py,,\n")
    _record(lower, "torch-2.13", "torch/__init__.py,sha256=bbb,5\n")
    _record(upper, "yaml-6.0", "yaml/__init__.py,sha256=ccc,10\n")
    reads: list[str] = []
    real = loaded.read_beneath
    monkeypatch.setattr(loaded, "read_beneath",
                        lambda root, path, limit: reads.append(root) or real(root, path, limit))
    watch = SimpleNamespace(upper=str(upper), lowers=[str(lower)])
    provenance._layer_records.cache_clear()
    first = provenance._Records(watch)._site(SITE)  # type: ignore[arg-type]
    assert first == {"yaml/__init__.py": [("yaml-6.0.dist-info", 0, "ccc"),
                                          ("yaml-6.0.dist-info", 1, "aaa")],
                     "yaml/x.py": [("yaml-6.0.dist-info", 1, "")],
                     "torch/__init__.py": [("torch-2.13.dist-info", 1, "bbb")]}
    assert sorted(reads) == [str(lower), str(lower), str(upper)]
    _record(upper, "yaml-6.0", "yaml/__init__.py,sha256=ddd,10\n")  # the container wrote it
    reads.clear()
    again = provenance._Records(watch)._site(SITE)  # type: ignore[arg-type]
    assert reads == [str(upper)]
    assert again["yaml/__init__.py"][0] == ("yaml-6.0.dist-info", 0, "ddd")
