"""Local models: the shared sentence encoder, Hugging Face loaders, UMAP, similarity kernels.

Loaders read only local folders or the local cache and fail fast, naming what is missing,
when a model is not there.

May import ``lab``.
"""

from __future__ import annotations
