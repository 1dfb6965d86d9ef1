"""UMAP dimensionality reduction, shared by summarization coverage, topics and failures."""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import umap

__all__ = ["fit_transform", "umap_model"]


def umap_model(
    n_points: int,
    *,
    n_neighbors: int,
    n_components: int,
    min_dist: float,
    seed: int,
    metric: str = "cosine",
) -> umap.UMAP:
    """Make a seeded UMAP sized for ``n_points`` (neighbours and components kept below it).

    Tiny inputs get a random init: UMAP's spectral init needs more points than components.
    """
    with warnings.catch_warnings():
        # umap warns at import that TensorFlow (for ParametricUMAP, unused here) is missing
        warnings.simplefilter("ignore", ImportWarning)
        import umap  # noqa: PLC0415 - slow import (numba): only when a reduction runs

    components = max(min(n_components, n_points - 2), 2)
    return umap.UMAP(
        n_neighbors=max(2, min(n_neighbors, n_points - 1)),
        n_components=components,
        min_dist=min_dist,
        metric=metric,
        random_state=seed,
        init="random" if n_points <= components + 1 else "spectral",
    )


def fit_transform(model: umap.UMAP, x: np.ndarray) -> np.ndarray:
    """Fit and project, silencing UMAP's expected warnings (seeded → one thread; tiny graphs)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.asarray(model.fit_transform(x))
