"""The WordNet stand-in of ``tests/realruns/standin_H.py`` (kvpress's ``wordnet`` addition):
the real database layout, read by nltk's own WordNet reader where nltk is installed."""

from __future__ import annotations

from pathlib import Path

import pytest
import standin_H


def test_data_lines_are_keyed_by_their_byte_offset() -> None:
    files = standin_H.wordnet_files()
    for suffix in ("noun", "verb", "adj", "adv"):
        data = files[f"data.{suffix}"].encode()
        offsets = set()
        for line in files[f"index.{suffix}"].splitlines():
            if line.startswith("  "):
                continue
            fields = line.split()
            count = int(fields[2])
            offsets.update(int(o) for o in fields[-count:])
        assert offsets
        for offset in offsets:
            assert data[offset:offset + 8] == f"{offset:08d}".encode()
    assert len(files["lexnames"].splitlines()) == 45


def test_nltk_reads_the_stand_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    nltk = pytest.importorskip("nltk")
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    folder = tmp_path / "corpora" / "wordnet"
    folder.mkdir(parents=True)
    for name, text in standin_H.wordnet_files().items():
        (folder / name).write_text(text)
    monkeypatch.setattr(nltk.data, "path", [str(tmp_path)])  # as our shim appends it
    wordnet = WordNetCorpusReader(nltk.data.find("corpora/wordnet"), None)
    assert wordnet.get_version() == "3.0"
    assert [s.name() for s in wordnet.synsets("halls")] == ["hall.n.01"]
    assert wordnet.synsets("gather")[0].lemma_names() == ["meet", "gather", "assemble"]
    assert wordnet.synsets("unknown") == []
