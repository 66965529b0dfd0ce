"""The host-side parts of the GPU machine's C3 stand-ins (``tests/realruns/standin_J.py``,
``standin_K.py``): what they write without the image's interpreter, checked against the
layout and ids the repositories' code reads."""

from __future__ import annotations

import json
from pathlib import Path

import standin_J
import standin_K

from pytest_reb.assets.cache import AssetCache


def test_bert_vocab_keeps_bert_base_uncased_special_ids() -> None:
    vocab = standin_J.bert_vocab()
    assert len(vocab) == len(set(vocab)) < 30522  # below BertConfig()'s embedding rows
    assert [vocab.index(t) for t in ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")] == [
        0, 100, 101, 102, 103]
    words = {w.strip("?").lower() for p in standin_J.BERT_PROMPTS for w in p.split()}
    assert words <= set(vocab)


def test_hub_cache_layout_is_what_the_hub_client_reads(tmp_path: Path) -> None:
    folder = tmp_path / "files"
    folder.mkdir()
    (folder / "vocab.txt").write_text("[PAD]\n")
    root = standin_J.hub_cache_layout(folder, "google-bert/bert-base-uncased", tmp_path / "hub")
    entry = root / "models--google-bert--bert-base-uncased"
    revision = (entry / "refs" / "main").read_text()
    assert (entry / "snapshots" / revision / "vocab.txt").read_text() == "[PAD]\n"


def test_qwen_tokenizer_files_name_the_tokenizer_json_ids(tmp_path: Path) -> None:
    added = [{"id": 350 + i, "content": c, "special": True}
             for i, c in enumerate(("<|endoftext|>", "<|im_start|>", "<|im_end|>"))]
    (tmp_path / "tokenizer.json").write_text(json.dumps({"added_tokens": added}))
    standin_J.qwen_tokenizer_files(tmp_path)
    config = json.loads((tmp_path / "tokenizer_config.json").read_text())
    assert config["eos_token"] == "<|im_end|>" and config["pad_token"] == "<|endoftext|>"
    assert set(config["added_tokens_decoder"]) == {"350", "351", "352"}
    generation = json.loads((tmp_path / "generation_config.json").read_text())
    assert generation["eos_token_id"] == [352, 350]


def test_stand_in_configs_fit_the_code_that_reads_them() -> None:
    sizes = standin_J.QWEN3_SIZES  # nano-vllm's tensor-parallel 2 splits heads and vocabulary
    assert sizes["num_attention_heads"] % 2 == sizes["num_key_value_heads"] % 2 == 0
    assert sizes["vocab_size"] % 2 == 0
    qwen25 = standin_K.QWEN25_CONFIG  # SpecForge: auxiliary layers 1, n/2 - 1, n - 4
    assert qwen25["num_hidden_layers"] - 4 > 1 and qwen25["vocab_size"] >= 16000


def test_asset_names_match_the_modules_and_bert_lands_under_hf_home(tmp_path: Path) -> None:
    for module, names in (("sgl_project__SpecForge", {"sharegpt_train", "target_model"}),
                          ("rllm_team__rllm", {"rel-f1", "glove-6B-300d"}),
                          ("apple__ml_aim", {"imagefolder_1img", "aim-600M_attnprobe"}),
                          ("kyegomez__MultiModalMamba", {"lena", "tiny-random-vit"}),
                          ("GeeeekExplorer__nano_vllm", {"Qwen3-0.6B"}),
                          ("flagos_ai__FlagGems", {"bert-base-uncased-tokenizer"}),
                          ("OpenBMB__VoxCPM", {"VoxCPM-0.5B"}),
                          ("HaozheLiu_ST__T_GATE", {"pixart_alpha"})):
        repo = standin_J._repo(module)
        assert names <= {a.name for a in repo.assets}, module
    repo = standin_J._repo("flagos_ai__FlagGems")
    store = AssetCache(tmp_path / "cache")
    folder = tmp_path / "bert"
    folder.mkdir()
    (folder / "vocab.txt").write_text("".join(t + "\n" for t in standin_J.bert_vocab()))
    hub = standin_J.hub_cache_layout(folder, "google-bert/bert-base-uncased", tmp_path / "hub")
    store.ingest(repo, "bert-base-uncased-tokenizer", hub, origin="test")
    snapshot = (store.view(repo) / "cache/hf_home/hub/models--google-bert--bert-base-uncased"
                / "snapshots" / standin_J.STANDIN_REVISION)
    assert (snapshot / "vocab.txt").is_file()  # where HF_HOME={assets}/cache/hf_home looks
