"""Secrets of an agent run: where they come from, and proof that none is in what is kept.

A key given to the agent's process can reach disk in many ways the agent does not choose:
a CLI's shell snapshot (``declare -x OPENAI_API_KEY=…``), a config or cache file, a
``~/.bashrc`` line, a pip config, a log under ``/tmp``. ``docker commit`` keeps all of it.
So before a container becomes a kept image, the host reads the layer the container added
(overlay2's upper directory, read by the host while the container is stopped: a channel
the agent cannot answer for) and looks for every secret value in the forms it is commonly
written in: as is, base64 (at each of the three alignments, standard and URL-safe),
URL-encoded, JSON-escaped and hex. The record names the paths, never the value.

Everything a layer carries is read, not only file bytes: names (whiteouts and every hard
link's name included), symbolic links' targets (``ln -s /x/$KEY`` holds the key in the
link, not in a file), extended attributes (names and values). The committed image's config
and history are checked after the commit (``run._keep``). What is not read: data an agent
encodes on purpose in modes, times, sizes or the order of files (a mode holds 12 bits; no
scan finds an encoding the writer chooses). The scan is against the accidents of CLIs, not
an agent that smuggles a key out.

Values shorter than ``MIN_SCAN`` characters are scrubbed from text but not looked for in
the layer: four characters are found in any few megabytes of binary by chance.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import json
import os
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, quote_plus

from pytest_reb.loop.agent.backends import NOT_SECRET, Backend

REDACTED = "<redacted>"
#: The shortest value that is looked for in a layer (a real API key is 20 and more).
MIN_SCAN = 8
#: The shortest encoded fragment worth looking for.
MIN_FRAGMENT = 8


def secrets_for(backend: Backend, env_file: Path | None, names: Sequence[str],
                environ: Mapping[str, str] = os.environ) -> dict[str, str]:
    """What the agent's process is given: its backend's variables that are set, ``--secret``
    names from the environment, then an env file's ``KEY=VALUE`` lines (which win)."""
    found = {n: environ[n] for n in (*backend.passes, *names) if environ.get(n)}
    if env_file is not None:
        for line in env_file.read_text().splitlines():
            key, sep, value = line.strip().removeprefix("export ").partition("=")
            if sep and key and not key.startswith("#"):
                found[key.strip()] = value.strip().strip("'\"")
    return found


def secret_values(secrets: Mapping[str, str]) -> list[str]:
    """The values that are secret (a base URL or a model name is not)."""
    return [v for k, v in secrets.items() if k not in NOT_SECRET and len(v) >= 4]


def scrub(text: str, secrets: Mapping[str, str]) -> str:
    """Replace every secret value, and its common encodings, in ``text``."""
    for value in secret_values(secrets):
        for form in sorted({value, *encodings(value)}, key=len, reverse=True):
            text = text.replace(form, REDACTED)
    return text


def encodings(value: str) -> set[str]:
    """The forms ``value`` is commonly written in, each at least ``MIN_FRAGMENT`` long.

    Base64 of a value inside a longer text depends on where it starts: of the three
    alignments, only the characters made of the value's bits alone are kept, so the
    fragment is found whatever came before or after it.
    """
    raw = value.encode()
    forms = {value, quote(value, safe=""), quote_plus(value), json.dumps(value)[1:-1],
             binascii.hexlify(raw).decode()}
    for shift in range(3):
        data = b"\0" * shift + raw + b"\0\0"
        first = -(-8 * shift // 6)  # the first character made of the value's bits only
        last = (8 * (shift + len(raw)) - 6) // 6  # the last such character
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            forms.add(encode(data).decode()[first:last + 1])
    return {f for f in forms if len(f) >= MIN_FRAGMENT}


def scan_patterns(secrets: Mapping[str, str]) -> list[str]:
    """Every form of every secret long enough to be looked for in a layer."""
    return sorted({f for v in secret_values(secrets) if len(v) >= MIN_SCAN
                   for f in encodings(v)})


@dataclass
class Leaks:
    """Where secrets were found in a container's layer (container paths, no values)."""

    contents: list[str] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    #: symbolic (or hard) links whose target holds one, paths with an extended attribute that does
    targets: list[str] = field(default_factory=list)
    xattrs: list[str] = field(default_factory=list)
    #: what was read: "upper directory" or "export"
    channel: str = ""
    #: how many forms of how many secrets were looked for
    forms: int = 0
    secrets: int = 0
    #: the bytes of the regular files of the layer, where they were counted
    layer_bytes: int | None = None

    def summary(self) -> str:
        """One line for the record: what was read, for what, and what was found."""
        if not self.forms:
            return f"not scanned: {self.channel}"
        return (f"{self.channel}: {self.forms} form(s) of {self.secrets} secret(s) looked for, "
                f"{len(self.paths)} path(s) hold one")

    @property
    def paths(self) -> list[str]:
        return sorted({*self.contents, *self.names, *self.targets, *self.xattrs})

    def __bool__(self) -> bool:
        return bool(self.paths)


def upper_dir(ctr: Any) -> Path | None:
    """The container's own layer on this host (overlay2), or None where it cannot be read."""
    ctr.reload()
    driver = ctr.attrs.get("GraphDriver") or {}
    upper = (driver.get("Data") or {}).get("UpperDir")
    if driver.get("Name") != "overlay2" or not upper or not Path(upper).is_dir():
        return None
    return Path(upper)


def scan_layer(ctr: Any, secrets: Mapping[str, str]) -> Leaks:
    """Look for the secrets in what the stopped container added to its image."""
    patterns = scan_patterns(secrets)
    if not patterns:
        return Leaks(channel=f"no secret of {MIN_SCAN} characters or more was given")
    upper = upper_dir(ctr)
    found = _scan_dir(upper, patterns) if upper is not None else _scan_export(ctr, patterns)
    found.forms = len(patterns)
    found.secrets = sum(1 for v in secret_values(secrets) if len(v) >= MIN_SCAN)
    return found


def _named(name: str, patterns: Iterable[str]) -> bool:
    return any(p in name for p in patterns)


def _scan_dir(upper: Path, patterns: list[str]) -> Leaks:
    """``grep -F`` over the upper directory (fast on many GB), names by a walk."""
    leaks = Leaks(channel="upper directory")
    with tempfile.NamedTemporaryFile("w", suffix=".patterns") as fh:
        fh.write("\n".join(patterns) + "\n")
        fh.flush()
        # -r does not follow links; -D skip leaves FIFOs and devices (overlay whiteouts) alone
        done = subprocess.run(["grep", "-r", "-l", "-F", "-a", "-D", "skip", "-f", fh.name,
                               "--", str(upper)], capture_output=True, check=False)
    if done.returncode > 1 and not done.stdout:
        raise OSError(f"cannot read the container's layer: {done.stderr.decode()[-300:]}")
    for line in done.stdout.decode(errors="surrogateescape").splitlines():
        leaks.contents.append("/" + os.path.relpath(line, upper))
    total = 0
    for root, dirs, files in os.walk(upper):
        for name in (*dirs, *files):
            local = os.path.join(root, name)
            path = "/" + os.path.relpath(local, upper)
            if _named(name, patterns):
                leaks.names.append(path)
            if os.path.islink(local) and _named(os.readlink(local), patterns):
                leaks.targets.append(path)
            if _xattr_has(local, patterns):
                leaks.xattrs.append(path)
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(root, name)).st_size
    leaks.layer_bytes = total
    return leaks


def _xattr_has(local: str, patterns: list[str]) -> bool:
    """Whether an extended attribute of ``local`` (the link itself, not its target) holds a
    secret in its name or value; overlay's own ``trusted.overlay.*`` are read like the rest."""
    try:
        names = os.listxattr(local, follow_symlinks=False)
    except OSError:
        return False
    for name in names:
        with contextlib.suppress(OSError):
            value = os.getxattr(local, name, follow_symlinks=False)
            if _named(name + "=" + value.decode(errors="surrogateescape"), patterns):
                return True
    return False


def _scan_export(ctr: Any, patterns: list[str]) -> Leaks:
    """Where the layer is not on this host: the engine's export, read for the changed paths."""
    leaks = Leaks(channel="export")
    changed = {"/" + c["Path"].lstrip("/") for c in ctr.diff() or [] if c.get("Kind") != 2}
    if not changed:
        return leaks
    keep = max(len(p) for p in patterns)
    stream = _StreamReader(ctr.export(chunk_size=1 << 20))
    with tarfile.open(fileobj=stream, mode="r|") as tar:
        for member in tar:
            path = "/" + member.name.removeprefix("./").lstrip("/")  # ".bashrc" keeps its dot
            if path not in changed:
                continue
            if _named(path.rsplit("/", 1)[-1], patterns):
                leaks.names.append(path)
            if (member.issym() or member.islnk()) and _named(member.linkname, patterns):
                leaks.targets.append(path)
            if _named(" ".join(f"{k}={v}" for k, v in member.pax_headers.items()), patterns):
                leaks.xattrs.append(path)
            if member.isfile() and _file_has(tar.extractfile(member), patterns, keep):
                leaks.contents.append(path)
    return leaks


def _file_has(fh: Any, patterns: list[str], keep: int) -> bool:
    if fh is None:
        return False
    wanted = [p.encode() for p in patterns]
    tail = b""
    while chunk := fh.read(1 << 20):
        window = tail + chunk
        if any(p in window for p in wanted):
            return True
        tail = window[-keep:]
    return False


class _StreamReader:
    """A file object over the engine's chunked export, for ``tarfile``'s stream mode."""

    def __init__(self, chunks: Iterable[bytes]) -> None:
        self._chunks = iter(chunks)
        self._buf = b""

    def read(self, size: int = -1) -> bytes:
        while size < 0 or len(self._buf) < size:
            chunk = next(self._chunks, None)
            if chunk is None:
                break
            self._buf += chunk
        if size < 0:
            out, self._buf = self._buf, b""
        else:
            out, self._buf = self._buf[:size], self._buf[size:]
        return out


def revert(ctr: Any, leaks: Leaks) -> list[str]:
    """``--scrub-secrets``: take each leaking path out of the container's layer.

    A path the task image also has is back to the image's version (the agent's change is
    undone, the image never held a secret); one the agent made is gone. Done by the host
    in the stopped container's upper directory, so it needs overlay2 on this host.
    """
    upper = upper_dir(ctr)
    if upper is None:
        raise OSError("--scrub-secrets needs the container's layer on this host (overlay2)")
    done = []
    for path in sorted(leaks.paths, key=len):
        local = upper / path.lstrip("/")
        if not any(local.is_relative_to(upper / d.lstrip("/")) for d in done):
            if local.is_dir() and not local.is_symlink():
                shutil.rmtree(local)
            elif local.exists() or local.is_symlink():
                local.unlink()
            done.append(path)
    return done


def scrub_folder(folder: Path, secrets: Mapping[str, str]) -> None:
    """Scrub everything under ``folder`` that came back to the host: contents and names.

    Bytes, not text, and in chunks: a binary file stays as it was but for the secrets,
    and a file of any size is scrubbed.
    """
    forms = sorted({f.encode() for v in secret_values(secrets) for f in {v, *encodings(v)}},
                   key=len, reverse=True)
    if not forms:
        return
    for path in sorted(folder.rglob("*"), key=lambda p: len(p.parts), reverse=True):
        if path.is_file() and not path.is_symlink():
            _scrub_file(path, forms)
        name = scrub(path.name, secrets)
        if name != path.name:
            path.rename(path.with_name(name.replace("/", "_")))


def _scrub_file(path: Path, forms: list[bytes]) -> None:
    """Rewrite ``path`` without ``forms``, keeping a window of the longest form's length
    between chunks so that a value across a chunk boundary is found too."""
    keep = len(forms[0]) - 1
    changed = False
    with path.open("rb") as src, tempfile.NamedTemporaryFile("wb", dir=path.parent,
                                                             delete=False) as dst:
        carry = b""
        while chunk := src.read(1 << 20):
            buf = carry + chunk
            for form in forms:
                if form in buf:
                    buf, changed = buf.replace(form, REDACTED.encode()), True
            cut = max(0, len(buf) - keep)
            dst.write(buf[:cut])
            carry = buf[cut:]
        dst.write(carry)
    if changed:
        os.chmod(dst.name, path.stat().st_mode & 0o7777)
        os.replace(dst.name, path)
    else:
        os.unlink(dst.name)
