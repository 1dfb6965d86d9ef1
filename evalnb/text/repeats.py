"""Longest non-overlapping repeated substring in O(n log² n).

Suffix array by prefix doubling (numpy), LCP by Kasai (numba), and a binary search on the
length.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["longest_repeat"]


def _suffix_array(codes: np.ndarray) -> np.ndarray:
    n = codes.size
    rank = np.unique(codes, return_inverse=True)[1].astype(np.int64)
    idx = np.arange(n)
    k = 1
    while True:
        second = np.where(idx + k < n, rank[np.minimum(idx + k, n - 1)] + 1, 0)
        order = np.lexsort((second, rank))
        r, s = rank[order], second[order]
        change = np.empty(n, dtype=bool)
        change[0] = False
        change[1:] = (r[1:] != r[:-1]) | (s[1:] != s[:-1])
        new = np.empty(n, dtype=np.int64)
        new[order] = np.cumsum(change)
        rank = new
        if rank.max() == n - 1 or k >= n:
            return order
        k *= 2


@njit(cache=True)
def _kasai(codes: np.ndarray, sa: np.ndarray) -> np.ndarray:
    """lcp[i] = common prefix length of the suffixes sa[i - 1] and sa[i] (lcp[0] = 0)."""
    n = codes.size
    rank = np.empty(n, dtype=np.int64)
    for i in range(n):
        rank[sa[i]] = i
    lcp = np.zeros(n, dtype=np.int64)
    h = 0
    for i in range(n):
        if rank[i] > 0:
            j = sa[rank[i] - 1]
            while i + h < n and j + h < n and codes[i + h] == codes[j + h]:
                h += 1
            lcp[rank[i]] = h
            if h > 0:
                h -= 1
        else:
            h = 0
    return lcp


def _first_start(sa: np.ndarray, lcp: np.ndarray, length: int) -> int:
    """Smallest start of a length-``length`` substring that reappears without overlap, or -1."""
    group = np.cumsum(lcp < length)  # suffixes sharing >= length characters share a group
    starts = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
    lo = np.minimum.reduceat(sa, starts)
    hi = np.maximum.reduceat(sa, starts)
    ok = hi - lo >= length
    return int(lo[ok].min()) if ok.any() else -1


def longest_repeat(text: str) -> str:
    """Return the longest substring occurring twice without overlap.

    On ties, the one starting first (H2O's choice); ``""`` when nothing repeats.

    Examples
    --------
    >>> longest_repeat("abcXabcYabc")
    'abc'
    >>> longest_repeat("aaaa")
    'aa'
    """
    n = len(text)
    if n < 2:
        return ""
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32).astype(
        np.int64
    )
    sa = _suffix_array(codes)
    lcp = _kasai(codes, sa)
    lo, hi, best = 1, n // 2, (0, -1)
    while lo <= hi:
        mid = (lo + hi) // 2
        start = _first_start(sa, lcp, mid)
        if start >= 0:
            best = (mid, start)
            lo = mid + 1
        else:
            hi = mid - 1
    length, start = best
    return text[start : start + length] if length else ""
