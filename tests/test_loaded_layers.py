"""``evidence/loaded.py``'s reads of layer folders: never through a link the image made.

Layer folders are plain directories on the host, so these run on folders made here.
"""

from __future__ import annotations

import base64
import hashlib
import os
from pathlib import Path

from pytest_reb.evidence import loaded


def layers(tmp_path: Path) -> tuple[Path, Path, Path]:
    upper, top, base = (tmp_path / n for n in ("upper", "top", "base"))
    for d in (upper, top, base):
        (d / "opt/env").mkdir(parents=True)
    (base / "opt/env/mod.py").write_text("x = 1\n")
    (top / "opt/env/mod.py").write_text("x = 2\n")
    return upper, top, base


def watch_of(upper: Path, *lowers: Path) -> loaded.Watch:
    return loaded.Watch(os.getpid(), str(upper), [str(d) for d in lowers])


def test_the_topmost_layer_that_holds_a_file(tmp_path: Path) -> None:
    upper, top, base = layers(tmp_path)
    w = watch_of(upper, top, base)
    assert loaded.layer_of(w, "/opt/env/mod.py") == 1
    (upper / "opt/env/mod.py").write_text("x = 3\n")  # the container wrote it
    assert loaded.layer_of(w, "/opt/env/mod.py") == 0
    assert loaded.layer_of(w, "/opt/env/none.py") is None


def test_a_link_in_a_layer_is_never_followed(tmp_path: Path) -> None:
    _, top, _ = layers(tmp_path)
    outside = tmp_path / "host"
    outside.mkdir()
    (outside / "secret.py").write_text("host\n")
    (top / "opt/evil").symlink_to(outside)  # a parent that leads out of the layer
    (top / "opt/env/link.py").symlink_to(outside / "secret.py")
    assert loaded.layer_stat(str(top), "/opt/evil/secret.py") is None
    assert loaded.read_beneath(str(top), "/opt/evil/secret.py", 100) is None
    assert loaded.hash_beneath(str(top), "/opt/env/link.py") is None  # the link, not a file


def test_a_hash_as_record_writes_it(tmp_path: Path) -> None:
    _, _, base = layers(tmp_path)
    want = base64.urlsafe_b64encode(hashlib.sha256(b"x = 1\n").digest()).rstrip(b"=").decode()
    assert loaded.hash_beneath(str(base), "/opt/env/mod.py") == want
