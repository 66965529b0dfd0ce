"""ClearerVoice-Studio's sample wav (``repos/test_modelscope__ClearerVoice_Studio.py``): the
setup writes the scp lists that name the prepared wav.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support.assets import Target, write
from support.repomodules import module


@pytest.mark.parametrize("stage", ["cpu", "single_gpu", "multi_gpu"])
def test_clearervoice_scp_lists_name_the_prepared_wav(tmp_path: Path, stage: str) -> None:
    checkout = tmp_path / "checkout"
    write(checkout / "clearvoice" / "samples" / "input.wav", b"RIFF")
    write(checkout / "train" / "speech_enhancement" / "train.py", "")
    target = Target(tmp_path, module("test_modelscope__ClearerVoice_Studio").repo, checkout)
    snapshot = tmp_path / "hub" / "FRCRN_SE_16K"
    write(snapshot / "last_best_checkpoint.pt", b"pt")
    target.prepare(FRCRN_SE_16K=snapshot)
    wav = target.view / "dataset" / "input.wav"
    assert wav.read_bytes() == b"RIFF"
    run = getattr(target.repo, stage)
    target.setup(run)
    line = f"{wav} {wav}\n"
    assert (target.out / "train.scp").read_text() == (target.out / "cv.scp").read_text() == line
    times = 2 if stage == "multi_gpu" else 1
    assert target.arg(run, "--tr-list").read_text() == line * times
    assert target.arg(run, "--cv-list").read_text() == line * times
    wav.unlink()
    done = target.setup(run, check=False)
    assert done.returncode == 1 and "missing sample audio" in done.stderr
