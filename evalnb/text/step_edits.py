"""Step-level edit distance (numba), over many pairs of step sequences at once.

A pair is an answer's steps against a reference's steps, given as a boolean match matrix
(answer step *i* matches reference step *j*). The Levenshtein table is filled with unit costs
(a substitution costs nothing when the steps match), and one optimal path is read back
preferring the diagonal, then a deletion, then an insertion, so that its counts are well
defined: insertions (reference steps the answer lacks), deletions (answer steps the reference
lacks), mismatches (substitutions) and matches.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

__all__ = ["edit_counts"]


@njit(cache=True)
def _one(match: np.ndarray, base: int, n: int, m: int, out: np.ndarray, p: int) -> None:
    d = np.empty((n + 1, m + 1), dtype=np.int64)
    for i in range(n + 1):
        d[i, 0] = i
    for j in range(m + 1):
        d[0, j] = j
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            cost = 0 if match[base + (i - 1) * m + (j - 1)] else 1
            best = d[i - 1, j - 1] + cost
            best = min(best, d[i - 1, j] + 1)
            d[i, j] = min(best, d[i, j - 1] + 1)
    i, j = n, m
    ins = dele = sub = same = 0
    while i > 0 or j > 0:
        if i > 0 and j > 0:
            hit = match[base + (i - 1) * m + (j - 1)]
            if d[i, j] == d[i - 1, j - 1] + (0 if hit else 1):
                if hit:
                    same += 1
                else:
                    sub += 1
                i -= 1
                j -= 1
                continue
        if i > 0 and d[i, j] == d[i - 1, j] + 1:
            dele += 1
            i -= 1
        else:
            ins += 1
            j -= 1
    out[p, 0] = ins
    out[p, 1] = dele
    out[p, 2] = sub
    out[p, 3] = same


@njit(cache=True, parallel=True)
def _all(
    match: np.ndarray, offsets: np.ndarray, ns: np.ndarray, ms: np.ndarray, out: np.ndarray
) -> None:
    for p in prange(ns.size):
        _one(match, offsets[p], ns[p], ms[p], out, p)


def edit_counts(match: np.ndarray, ns: np.ndarray, ms: np.ndarray) -> np.ndarray:
    """Return ``(insertions, deletions, mismatches, matches)`` per pair, an (n, 4) int array.

    ``match`` holds every pair's ``ns[p] × ms[p]`` matrix, row-major, one after the other.
    """
    ns = np.ascontiguousarray(ns, dtype=np.int64)
    ms = np.ascontiguousarray(ms, dtype=np.int64)
    sizes = ns * ms
    offsets = np.zeros(ns.size, dtype=np.int64)
    if ns.size:
        offsets[1:] = np.cumsum(sizes)[:-1]
    if int(sizes.sum()) != match.size:
        msg = f"match holds {match.size} cells; the pairs' matrices need {int(sizes.sum())}"
        raise ValueError(msg)
    out = np.zeros((ns.size, 4), dtype=np.int64)
    _all(np.ascontiguousarray(match, dtype=np.bool_), offsets, ns, ms, out)
    return out
