"""UMAP's numba kernels are compiled once per machine, not once per process."""

from __future__ import annotations

import sys

import numpy as np

from evalnb.models.reduce import fit_transform, umap_model


def test_umaps_kernels_are_kept_in_numbas_disk_cache() -> None:
    x = np.random.default_rng(0).normal(size=(60, 8))
    projected = fit_transform(
        umap_model(60, n_neighbors=5, n_components=2, min_dist=0.0, seed=0), x
    )
    assert projected.shape == (60, 2) and np.isfinite(projected).all()
    # Declared without cache=True by umap-learn: without evalnb's switch they have no cache
    # path, and every new process compiles them again (about 20 s on two cores).
    umap_, layouts = sys.modules["umap.umap_"], sys.modules["umap.layouts"]  # imported by it
    for kernel in (umap_.smooth_knn_dist, layouts.clip):
        assert kernel.stats.cache_path is not None, kernel
    used = umap_.smooth_knn_dist.stats
    assert sum(used.cache_hits.values()) + sum(used.cache_misses.values()) >= 1
