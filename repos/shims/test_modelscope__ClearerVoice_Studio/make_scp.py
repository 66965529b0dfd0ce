"""Write the one-line ClearerVoice scp lists the official prepare step wrote next to the wav.

The official prepare copied the repository's ``clearvoice/samples/input.wav`` to
``benchmark_assets/dataset/input.wav`` and wrote ``train.scp`` and ``cv.scp`` beside it, each
one line naming that file (absolute path) as both the noisy and the clean signal. Our asset
view holds the wav, read-only; this script writes the same line into each list given, pointing
at the wav given. A missing wav exits 1, failing the stage as the prepare step did (category
``data``).

Usage: make_scp.py WAV OUT.scp [OUT.scp ...]     (stdlib only)
"""

import sys
from pathlib import Path


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    wav = Path(argv[0]).absolute()
    if not wav.is_file():
        sys.exit(f"[make_scp] missing sample audio: {wav}")
    for dest in map(Path, argv[1:]):
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(f"{wav} {wav}\n", encoding="utf-8")
        print(f"[make_scp] {dest}: {wav} {wav}")


if __name__ == "__main__":
    main(sys.argv[1:])
