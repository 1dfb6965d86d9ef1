"""String similarity of many pairs at once: rapidfuzz's normalised distances, batched in C++.

:func:`similarity` is ``1 − normalized_distance`` of each pair (the number ragas'
``NonLLMStringSimilarity`` computes, one call per pair there); :func:`best_matches` gives each
item of a row's list its best similarity to the items of another list of the same row.
"""

from __future__ import annotations

import numpy as np
import polars as pl

__all__ = ["MEASURES", "best_matches", "similarity"]

MEASURES = ("levenshtein", "hamming", "jaro", "jaro_winkler")


def _measure(name: str) -> object:
    from rapidfuzz import distance  # noqa: PLC0415 - loads its C++ extension once needed

    return {
        "levenshtein": distance.Levenshtein,
        "hamming": distance.Hamming,
        "jaro": distance.Jaro,
        "jaro_winkler": distance.JaroWinkler,
    }[name]


def similarity(
    left: list[str], right: list[str], measure: str, floor: float | None = None
) -> np.ndarray:
    """Return 1 − normalised distance of each (left[i], right[i]) pair, in parallel C++.

    With ``floor``, a similarity below it may come back as 0 (exact at and above it):
    rapidfuzz then stops each distance once it is out of reach, about 3× faster on
    sentences for a floor of 0.5.
    """
    from rapidfuzz.process import cpdist  # noqa: PLC0415

    if not left:
        return np.zeros(0)
    scorer = _measure(measure).normalized_distance  # type: ignore[attr-defined]
    # 1e-6 of slack: rapidfuzz's test against the cutoff is not exact (with 1e-9 of slack,
    # pairs exactly at a floor of 0.3, 0.55 or 0.65 came back as out of reach; from 1e-7
    # none did, on 50k sentence pairs), and a pair right at the floor must keep its value.
    cutoff = None if floor is None or floor <= 0 else min(1.0, 1.0 - floor + 1e-6)
    # float64: cpdist returns float32 by default, 3e-8 away from ragas' Python floats
    out = cpdist(left, right, scorer=scorer, workers=-1, dtype=np.float64, score_cutoff=cutoff)
    return 1.0 - np.asarray(out, dtype=np.float64)


def best_matches(
    left_col: pl.Series, right_col: pl.Series, measure: str, floor: float | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each row and each item of ``left``, its best similarity to the row's ``right`` items.

    Returns (best per left item, row of each left item, left items per row); a left item of
    a row with no right item gets NaN. The pairs are built by a join, not a Python loop.
    ``floor`` as in :func:`similarity`: for callers that only compare with a threshold.
    """
    n_left = left_col.list.len().fill_null(0).to_numpy().astype(np.int64)
    left = (
        pl.DataFrame({"l": left_col})
        .with_row_index("row")
        .explode("l")
        .filter(pl.col("l").is_not_null())
        .with_row_index("item")
    )
    right = (
        pl.DataFrame({"r": right_col})
        .with_row_index("row")
        .explode("r")
        .filter(pl.col("r").is_not_null())
        .with_row_index("other")
    )
    pairs = left.select("row", "item").join(right.select("row", "other"), on="row")
    best = np.full(left.height, np.nan)
    if pairs.height:
        # Each text becomes a Python string once; the pairs share them (a context met by
        # three references was converted three times, half the time of the whole metric).
        lefts, rights = left["l"].to_list(), right["r"].to_list()
        at_left, at_right = pairs["item"].to_list(), pairs["other"].to_list()
        sims = similarity(
            [lefts[i] for i in at_left], [rights[j] for j in at_right], measure, floor
        )
        np.fmax.at(best, np.asarray(at_left, dtype=np.int64), sims)
    return best, left["row"].to_numpy().astype(np.int64), n_left
