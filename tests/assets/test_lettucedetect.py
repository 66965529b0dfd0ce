"""LettuceDetect's RAGTruth sample (``repos/test_KRLabsOrg__LettuceDetect.py``): the raw
download, preprocessed by the repository's own script and reduced by the setup.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from support.assets import assert_real, fetched
from support.repomodules import Stage, module, stages

#: A stand-in of the repository's sample class (the real one also imports torch).
LETTUCE_DATASET = '''
class HallucinationSample:
    def __init__(self, prompt, answer, labels, split, task_type, dataset, language):
        self.d = dict(prompt=prompt, answer=answer, labels=labels, split=split,
                      task_type=task_type, dataset=dataset, language=language)

    def to_json(self):
        return dict(self.d)


class HallucinationData:
    def __init__(self, samples):
        self.samples = samples

    def to_json(self):
        return [s.to_json() for s in self.samples]
'''


#: A stand-in of lettucedetect/preprocess/preprocess_ragtruth.py: same arguments, same output.
LETTUCE_PREPROCESS = '''
import argparse, json
from pathlib import Path
from lettucedetect.datasets.hallucination_dataset import HallucinationData, HallucinationSample

p = argparse.ArgumentParser()
p.add_argument("--input_dir", required=True)
p.add_argument("--output_dir", required=True)
a = p.parse_args()
src = Path(a.input_dir)
responses = [json.loads(x) for x in (src / "response.jsonl").read_text().splitlines()]
sources = {s["source_id"]: s for s in
           (json.loads(x) for x in (src / "source_info.jsonl").read_text().splitlines())}
data = HallucinationData([])
for r in responses:
    s = sources[r["source_id"]]
    labels = [{"start": x["start"], "end": x["end"], "label": x["label_type"]}
              for x in r["labels"]]
    data.samples.append(HallucinationSample(s["prompt"], r["response"], labels, r["split"],
                                            s["task_type"], "ragtruth", "en"))
(Path(a.output_dir) / "ragtruth_data.json").write_text(json.dumps(data.to_json(), indent=4))
'''


def lettuce_checkout(repo: Path) -> None:
    pkg = repo / "lettucedetect"
    (pkg / "datasets").mkdir(parents=True)
    (pkg / "preprocess").mkdir()
    for folder in (pkg, pkg / "datasets", pkg / "preprocess"):
        (folder / "__init__.py").write_text("")
    (pkg / "datasets" / "hallucination_dataset.py").write_text(LETTUCE_DATASET)
    (pkg / "preprocess" / "preprocess_ragtruth.py").write_text(LETTUCE_PREPROCESS)


def lettuce_raw(raw: Path, splits: list[str]) -> None:
    raw.mkdir(parents=True, exist_ok=True)
    sources = [{"source_id": str(i), "prompt": f"context {i}", "task_type": "QA"}
               for i in range(len(splits))]
    responses = [{"source_id": str(i), "response": f"answer {i}", "split": split,
                  "labels": [{"start": 0, "end": 6, "label_type": "Evident Conflict"}]}
                 for i, split in enumerate(splits)]
    (raw / "source_info.jsonl").write_text("".join(json.dumps(s) + "\n" for s in sources))
    (raw / "response.jsonl").write_text("".join(json.dumps(r) + "\n" for r in responses))


def test_lettucedetect_ragtruth_reduced_by_setup(tmp_path: Path) -> None:
    mod = module("test_KRLabsOrg__LettuceDetect")
    repo = mod.repo
    assert_real(repo, "ragtruth_mini", ["cpu", "single_gpu"])
    for name, run in stages(repo):
        stage = Stage(run, tmp_path / name, name, repo)
        lettuce_checkout(stage.repo)
        raw = stage.raw("ragtruth_mini")
        assert raw == stage.assets / "dataset" / "ragtruth"
        lettuce_raw(raw, ["test", "train", "train", "train"])
        before = sorted(p.name for p in raw.iterdir())
        stage.setup()
        assert sorted(p.name for p in raw.iterdir()) == before, "the raw asset is only read"
        full = json.loads((stage.out / "ragtruth" / "ragtruth_data.json").read_text())
        assert len(full) == 4 and {s["dataset"] for s in full} == {"ragtruth"}
        mini = json.loads(Path(stage.arg("--ragbench-path")).read_text())
        assert [(s["answer"], s["split"], s["dataset"]) for s in mini] == [
            ("answer 1", "train", "ragbench"), ("answer 2", "dev", "ragbench")]
        assert mini[0]["labels"] == [{"start": 0, "end": 6, "label": "Evident Conflict"}]
        assert mini[0]["prompt"] == "context 1" and mini[0]["task_type"] == "QA"
        assert json.loads(Path(stage.arg("--ragtruth-path")).read_text()) == []
        assert Path(stage.arg("--ragbench-path")).parent == stage.out


def test_lettucedetect_needs_two_train_samples(tmp_path: Path) -> None:
    repo = module("test_KRLabsOrg__LettuceDetect").repo
    assert repo.cpu is not None
    stage = Stage(repo.cpu, tmp_path, "cpu", repo)
    lettuce_checkout(stage.repo)
    lettuce_raw(stage.raw("ragtruth_mini"), ["test", "train"])
    done = stage.setup(check=False)
    assert done.returncode != 0 and "need at least 2 train samples" in done.stderr
    assert not (stage.out / "ragbench_min.json").exists()


def test_lettucedetect_raw_download_is_what_the_setup_reads(
        tmp_path: Path, served: tuple[str, Path]) -> None:
    host, www = served
    repo = module("test_KRLabsOrg__LettuceDetect").repo
    lettuce_raw(www / "ParticleMedia" / "RAGTruth" / "main" / "dataset", ["train", "train"])
    staging = fetched(repo, "ragtruth_mini", host, tmp_path / "staging")
    assert sorted(p.name for p in staging.iterdir()) == ["response.jsonl", "source_info.jsonl"]
    stage = Stage(repo.cpu, tmp_path, "cpu", repo)
    lettuce_checkout(stage.repo)
    shutil.copytree(staging, stage.raw("ragtruth_mini"))
    stage.setup()
    assert len(json.loads((stage.out / "ragbench_min.json").read_text())) == 2
