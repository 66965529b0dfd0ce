"""Write the zero null-embedding file Sana's train.py loads instead of encoding "" with Gemma.

Reproduces the official harness helper chained before torchrun (``ensure_null_embed.py
--path=... --max-length=300 --hidden-size=2304``): a ``torch.save`` of
``{"uncond_prompt_embeds": zeros(1, L, H), "uncond_prompt_embeds_mask": ones(1, L) long}`` at
``--path`` (its folder made), left untouched when the file already exists. Sana's train.py
looks for ``{null_embed_root}/null_embed_diffusers_{encoder}_{L}token_{H}.pth`` and only runs the
text encoder when it is missing.

Needs torch, which the repository needs anyway; runs under the report's interpreter.
"""

import argparse
import sys
from pathlib import Path


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--path", required=True, type=Path)
    parser.add_argument("--max-length", required=True, type=int)
    parser.add_argument("--hidden-size", required=True, type=int)
    args = parser.parse_args(argv)

    import torch  # the environment under test must provide it

    args.path.parent.mkdir(parents=True, exist_ok=True)
    if args.path.exists():
        print(f"[ensure_null_embed] {args.path} exists; kept")
        return 0
    torch.save({
        "uncond_prompt_embeds": torch.zeros(1, args.max_length, args.hidden_size),
        "uncond_prompt_embeds_mask": torch.ones(1, args.max_length, dtype=torch.long),
    }, str(args.path))
    print(f"[ensure_null_embed] wrote {args.path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
