"""Texts cut at a separator, as byte spans of their UTF-8 buffer (compiled, parallel).

The same segments as ``str.split(separator)`` (leftmost, non-overlapping occurrences; empty
segments kept), without building the segments as new strings: what follows reads them where
they lie. ragas' BLEU cuts answers and references at ". " this way; Polars' ``str.split``
then ``explode`` took 15 ms of its 77 on 20k real pairs, these spans 2 ms.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

__all__ = ["segment_spans"]


@njit(cache=True, inline="always")
def _at(data: np.ndarray, i: int, sep: np.ndarray) -> bool:
    for k in range(sep.size):  # noqa: SIM110 - numba compiles no generator inside all()
        if data[i + k] != sep[k]:
            return False
    return True


@njit(parallel=True, cache=True)
def _counts(data: np.ndarray, offsets: np.ndarray, sep: np.ndarray) -> np.ndarray:
    n = offsets.size - 1
    counts = np.ones(n, dtype=np.int64)
    k = sep.size
    for t in prange(n):
        i, end, c = offsets[t], offsets[t + 1], 1
        while i + k <= end:
            if _at(data, i, sep):
                c += 1
                i += k
            else:
                i += 1
        counts[t] = c
    return counts


@njit(parallel=True, cache=True)
def _fill(
    data: np.ndarray, offsets: np.ndarray, sep: np.ndarray, starts: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    total = starts[-1]
    lows = np.empty(total, dtype=np.int64)
    highs = np.empty(total, dtype=np.int64)
    k = sep.size
    for t in prange(offsets.size - 1):
        s, a, end = starts[t], offsets[t], offsets[t + 1]
        i = a
        while s < starts[t + 1] - 1 and i + k <= end:
            if _at(data, i, sep):
                lows[s], highs[s] = a, i
                s += 1
                i += k
                a = i
            else:
                i += 1
        lows[s], highs[s] = a, end
    return lows, highs


@njit(parallel=True, cache=True)
def _first_ends(data: np.ndarray, offsets: np.ndarray, sep: np.ndarray) -> np.ndarray:
    n = offsets.size - 1
    ends = offsets[1:].copy()
    k = sep.size
    for t in prange(n):
        i, end = offsets[t], offsets[t + 1]
        while i + k <= end:
            if _at(data, i, sep):
                ends[t] = i
                break
            i += 1
    return ends


def segment_spans(
    data: np.ndarray, offsets: np.ndarray, separator: str, *, first_only: bool = False
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Cut every text at ``separator``: the segments' byte spans and their count per text.

    Parameters
    ----------
    data, offsets
        The texts' UTF-8 bytes, ``data[offsets[t]:offsets[t + 1]]`` text ``t``.
    separator
        Cut at each leftmost, non-overlapping occurrence, as ``str.split`` does.
    first_only
        Keep each text's first segment only (``text.split(separator)[0]``).

    Returns
    -------
    tuple
        ``lows``, ``highs`` (segment ``s`` is ``data[lows[s]:highs[s]]``, texts in order) and
        the segments of each text (all 1 with ``first_only``).
    """
    sep = np.frombuffer(separator.encode(), dtype=np.uint8)
    if sep.size == 0:
        msg = "the separator must not be empty (str.split refuses it too)"
        raise ValueError(msg)
    if first_only:
        return (
            offsets[:-1].copy(),
            _first_ends(data, offsets, sep),
            np.ones(offsets.size - 1, np.int64),
        )
    counts = _counts(data, offsets, sep)
    starts = np.concatenate([[0], np.cumsum(counts)])
    lows, highs = _fill(data, offsets, sep, starts)
    return lows, highs, counts
