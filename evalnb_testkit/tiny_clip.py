"""A tiny CLIP built here (random weights, a byte-level vocabulary): no download, real code.

What ``clip_score`` loads is what a real CLIP folder holds: ``config.json``, the weights, a
CLIP tokenizer's ``vocab.json`` and ``merges.txt`` and an image processor's config, written
by transformers' own ``save_pretrained``. Its numbers mean nothing; that they equal what
transformers computes with the same folder is what the tests check.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["tiny_clip"]


def tiny_clip(folder: Path, *, seed: int = 0) -> Path:
    """Write a tiny CLIP model, tokenizer and image processor to ``folder``; return it."""
    import torch
    import transformers

    folder.mkdir(parents=True, exist_ok=True)
    chars = _byte_chars()
    vocab = {
        t: i
        for i, t in enumerate(
            [*chars, *[c + "</w>" for c in chars], "<|startoftext|>", "<|endoftext|>"]
        )
    }
    (folder / "vocab.json").write_text(json.dumps(vocab), encoding="utf-8")
    (folder / "merges.txt").write_text("#version: 0.2\n", encoding="utf-8")
    tokenizer = transformers.CLIPTokenizer(str(folder / "vocab.json"), str(folder / "merges.txt"))
    images = transformers.CLIPImageProcessorPil(  # torchvision is not needed for the tests
        size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32}
    )
    config = transformers.CLIPConfig(
        text_config={
            "vocab_size": len(vocab),
            "hidden_size": 32,
            "intermediate_size": 64,
            "num_attention_heads": 4,
            "num_hidden_layers": 2,
            "max_position_embeddings": 77,
            "bos_token_id": vocab["<|startoftext|>"],
            "eos_token_id": vocab["<|endoftext|>"],
            "pad_token_id": vocab["<|endoftext|>"],
        },
        vision_config={
            "hidden_size": 32,
            "intermediate_size": 64,
            "num_attention_heads": 4,
            "num_hidden_layers": 2,
            "image_size": 32,
            "patch_size": 8,
        },
        projection_dim=16,
    )
    torch.manual_seed(seed)
    transformers.CLIPModel(config).save_pretrained(folder)
    transformers.CLIPProcessor(image_processor=images, tokenizer=tokenizer).save_pretrained(folder)
    return folder


def _byte_chars() -> list[str]:
    """The 256 characters byte-level BPE spells bytes with (GPT-2's table, which CLIP uses)."""
    printable = [
        *range(ord("!"), ord("~") + 1),
        *range(ord("¡"), ord("¬") + 1),
        *range(ord("®"), ord("ÿ") + 1),
    ]
    extra = 0
    chars = {}
    for b in range(256):
        if b in printable:
            chars[b] = chr(b)
        else:
            chars[b] = chr(256 + extra)
            extra += 1
    return [chars[b] for b in range(256)]
