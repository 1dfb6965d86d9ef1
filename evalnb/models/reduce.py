"""UMAP dimensionality reduction, shared by summarization coverage, topics and failures."""

from __future__ import annotations

import functools
import sys
import warnings
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import umap

__all__ = ["fit_transform", "umap_model"]


@functools.cache
def _import_umap() -> None:
    """Import UMAP once per process, with numba's on-disk cache on for its kernels.

    umap-learn and pynndescent declare about 250 numba functions without ``cache=True``, so
    every new process (a notebook kernel, a CLI call, a worker) compiled them again before
    its first reduction: 20 of the 30 s of topic modeling on an 80 KB corpus (measured on two
    cores). ``enable_caching`` is what ``cache=True`` does at decoration; numba keys each entry
    on the source file's timestamp and the signature, so an upgrade recompiles and the
    projection is the same as compiled fresh.
    """
    from numba.core.dispatcher import Dispatcher  # noqa: PLC0415 - numba comes with umap

    with warnings.catch_warnings():
        # umap warns at import that TensorFlow (for ParametricUMAP, unused here) is missing
        warnings.simplefilter("ignore", ImportWarning)
        import umap  # noqa: PLC0415, F401 - slow import (numba): only when a reduction runs

    for name, module in list(sys.modules.items()):
        if name.partition(".")[0] in {"umap", "pynndescent"}:
            for value in list(vars(module).values()):
                if isinstance(value, Dispatcher):
                    try:
                        value.enable_caching()
                    except RuntimeError:  # no writable cache folder: compile in memory, as before
                        continue


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
    _import_umap()
    import umap  # noqa: PLC0415 - imported above, with its numba cache on

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
