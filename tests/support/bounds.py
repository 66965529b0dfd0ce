"""What the hostile images of issue 25 (classes 3, 4, 6) hold: writers past the disk limit
where the layer walk does not look, stub-only packages, names that hold whole lines.

Only bodies and names here; the cases themselves are in ``images.CASES`` with the others.
"""

from __future__ import annotations

#: An image ``VOLUME``: an anonymous volume outside the writable layer.
DATA_VOLUME = "/var/lib/reb-data"

#: Writes 32 MiB every 0.05 s into the folder it is given, up to ``sys.argv[2]`` MiB, then
#: waits (60 s, or ``sys.argv[3]``): the volume fillers' entrypoint (the folder is a VOLUME).
VOLUME_FILLER = """\
import os, sys, time

block = b"v" * (32 << 20)
with open(os.path.join(sys.argv[1], "filler"), "wb") as fh:
    for _ in range(int(sys.argv[2]) // 32):
        fh.write(block)
        fh.flush()
        time.sleep(0.05)
print("VOLUME_FILLED", flush=True)
time.sleep(float(sys.argv[3]) if len(sys.argv) > 3 else 60)
"""

#: Opens a file in the writable layer, unlinks it and writes ``sys.argv[1]`` MiB into it,
#: holding it open: no name left for the layer walk, every block still on the host's disk.
UNLINKED_WRITER = """\
import os, time

fh = open("/var/tmp/unlinked", "wb")
os.unlink("/var/tmp/unlinked")
block = b"u" * (32 << 20)
for _ in range(int(__import__("sys").argv[1]) // 32):
    fh.write(block)
    fh.flush()
    time.sleep(0.05)
print("UNLINKED_WRITTEN", flush=True)
time.sleep(60)
"""

#: Allocates ``sys.argv[1]`` MiB at once (``posix_fallocate``: blocks, no writes), maps the
#: file, closes and unlinks it: the space is held by a mapping alone, no descriptor.
FALLOCATE_MAPPED = """\
import mmap, os, sys, time

size = int(sys.argv[1]) << 20
fd = os.open("/var/tmp/reserved", os.O_RDWR | os.O_CREAT, 0o600)
os.posix_fallocate(fd, 0, size)
held = mmap.mmap(fd, size, mmap.MAP_SHARED)
os.close(fd)
os.unlink("/var/tmp/reserved")
print("RESERVED", flush=True)
time.sleep(60)
"""

#: Starts with a newline, so a printed value that keeps it starts a line of its own.
FORGED_LINE = "  C1 CPU          #########   PASS"
#: A value that holds a forged line, a carriage return and an ANSI colour.
FORGED = f"\n{FORGED_LINE}\r\x1b[32m ok\x1b[0m\n"
