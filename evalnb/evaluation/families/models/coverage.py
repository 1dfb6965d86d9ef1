"""Geometric coverage of a document by its summary (H2O's summarization *completeness*).

Document and summary sentence embeddings are projected with a UMAP fitted on the document;
each summary point snaps to its nearest document point; completeness is the ratio of the
"three-segment length" of the snapped summary points to that of the document points.
"""

from __future__ import annotations

import warnings

import numpy as np

from evalnb.models.reduce import fit_transform, umap_model

__all__ = ["completeness", "three_segment_length"]


def three_segment_length(points: np.ndarray) -> float:
    """Longest pairwise distance plus, with > 2 points, the runner-up distances of its two ends.

    >>> three_segment_length(np.array([[0.0, 0.0], [3.0, 0.0], [0.0, 1.0]]))
    7.16...
    """
    if len(points) < 2:
        return 0.0
    dist = np.linalg.norm(points[:, None, :] - points[None, :, :], axis=-1)
    i, j = np.unravel_index(int(dist.argmax()), dist.shape)
    total = float(dist[i, j])
    if len(points) > 2:
        total += float(np.sort(dist[i])[-2]) + float(np.sort(dist[:, j])[-2])
    return total


def completeness(doc: np.ndarray, summary: np.ndarray, seed: int = 42) -> float:
    """Coverage in [0, 1] of the document embeddings by the summary embeddings."""
    reducer = umap_model(len(doc), n_neighbors=10, n_components=5, min_dist=0.0, seed=seed)
    doc_pts = fit_transform(reducer, doc)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # as in fit_transform: seeded UMAP, tiny graphs
        sum_pts = reducer.transform(summary)
    nearest = np.linalg.norm(sum_pts[:, None, :] - doc_pts[None, :, :], axis=-1).argmin(axis=1)
    whole = three_segment_length(doc_pts)
    if whole <= 0:
        return 0.0
    return float(np.clip(three_segment_length(doc_pts[nearest]) / whole, 0.0, 1.0))
