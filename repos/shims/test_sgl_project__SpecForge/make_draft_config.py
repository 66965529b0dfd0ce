"""pytest-reb setup for sgl-project/SpecForge: the one-layer EAGLE-3 draft config.

The official prepare started from the repository's
configs/qwen2.5-7b-eagle3.json, loaded the target model's config with
transformers' ``AutoConfig.from_pretrained`` and copied into the template
every template key the target config has as an attribute (a ``torch_dtype``
written as its name, e.g. ``bfloat16``), then vocab_size, hidden_size,
num_attention_heads, num_key_value_heads, intermediate_size,
max_position_embeddings, rms_norm_eps, hidden_act, bos_token_id and
eos_token_id; it set num_hidden_layers 1, tie_word_embeddings false, use_cache
true, and architectures / model_type only where the template lacked them.
This script does the same into OUT_FILE (the stage's --draft-model-config).
transformers is a dependency of SpecForge itself.

Usage: make_draft_config.py TEMPLATE_JSON TARGET_MODEL_DIR OUT_FILE
"""

import json
import os
import sys

#: Keys copied from the target config even when the template lacks them.
ALWAYS = ("vocab_size", "hidden_size", "num_attention_heads", "num_key_value_heads",
          "intermediate_size", "max_position_embeddings", "rms_norm_eps", "hidden_act",
          "bos_token_id", "eos_token_id")


def plain(value):
    """A torch dtype as its bare name (``torch.bfloat16`` -> ``bfloat16``), else unchanged."""
    if type(value).__module__ == "torch" and type(value).__name__ == "dtype":
        return str(value).replace("torch.", "")
    return value


def derive(template, target):
    """The draft config: ``template`` aligned to the ``target`` config object."""
    draft = dict(template)
    for key in list(draft):
        if hasattr(target, key):
            draft[key] = plain(getattr(target, key))
    for key in ALWAYS:
        if hasattr(target, key):
            draft[key] = plain(getattr(target, key))
    draft.update(num_hidden_layers=1, tie_word_embeddings=False, use_cache=True)
    draft.setdefault("architectures", ["LlamaForCausalLMEagle3"])
    draft.setdefault("model_type", "llama")
    return draft


def main(argv):
    if len(argv) != 3:
        sys.exit(__doc__.strip().splitlines()[-1])
    template_path, model_dir, out_file = argv
    from transformers import AutoConfig

    with open(template_path) as handle:
        template = json.load(handle)
    draft = derive(template, AutoConfig.from_pretrained(model_dir))
    os.makedirs(os.path.dirname(os.path.abspath(out_file)), exist_ok=True)
    with open(out_file, "w") as handle:
        handle.write(json.dumps(draft, indent=2, ensure_ascii=False) + "\n")
    print(f"make_draft_config.py: wrote {out_file} from {template_path} and {model_dir}")


if __name__ == "__main__":
    main(sys.argv[1:])
