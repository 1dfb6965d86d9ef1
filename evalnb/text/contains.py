"""Whether each text holds its own literal, for whole columns, compiled over UTF-8 bytes.

Polars' ``str.contains(pl.col(...), literal=True)`` builds a searcher per row (about 0.4 µs
a row, 8 ms at 20k sentence pairs); short needles in sentence-long texts are found faster by
a plain scan on the first byte and a comparison, in parallel over the pairs (under 1 ms).
A scan's worst case grows with both lengths (``"aaa…b"`` in ``"aaaa…"``), so each pair's
scan stops after a few comparisons per byte of the pair and leaves it to Polars, whose
search is linear. A UTF-8 needle found at any byte of valid UTF-8 text starts at a
character boundary, so bytes give the same answer as characters.
"""

from __future__ import annotations

import numpy as np
import polars as pl
from numba import njit, prange

from evalnb.text.intern import utf8_buffers

__all__ = ["contains_each"]

# Comparisons a scan may make per byte of its pair before it leaves the pair to Polars:
# ordinary text needs about one (the first-byte test), repetitive text may need many.
_SCAN_WORK = 4


@njit(parallel=True, cache=True)
def _scan(
    data: np.ndarray, offsets: np.ndarray, ndata: np.ndarray, noffsets: np.ndarray, work: int
) -> tuple[np.ndarray, np.ndarray]:
    """Found flags for pairs (text ``i``, needle ``i``); ``done`` false: left unsettled."""
    n = offsets.size - 1
    found = np.zeros(n, dtype=np.bool_)
    done = np.zeros(n, dtype=np.bool_)
    for i in prange(n):
        h0, h1 = offsets[i], offsets[i + 1]
        n0, n1 = noffsets[i], noffsets[i + 1]
        size, span = n1 - n0, h1 - h0
        if size == 0:
            found[i], done[i] = True, True
            continue
        if size > span:
            done[i] = True
            continue
        budget, spent = work * (span + size), 0
        first = ndata[n0]
        for at in range(h0, h1 - size + 1):
            spent += 1
            if data[at] != first:
                continue
            same = True
            for k in range(1, size):
                spent += 1
                if data[at + k] != ndata[n0 + k]:
                    same = False
                    break
            if same:
                found[i] = True
                break
            if spent > budget:
                break
        done[i] = found[i] or spent <= budget
    return found, done


def contains_each(texts: pl.Series, needles: pl.Series) -> np.ndarray:
    """Return whether ``needles[i]`` occurs in ``texts[i]`` (literally; both without nulls)."""
    n = len(texts)
    if n == 0:
        return np.zeros(0, dtype=bool)
    # Each column's own buffer: joining them would copy every byte once more.
    data, offsets = utf8_buffers(texts.to_arrow())
    ndata, noffsets = utf8_buffers(needles.to_arrow())
    found, done = _scan(data, offsets, ndata, noffsets, _SCAN_WORK)
    if not done.all():  # long pairs: Polars' linear search
        rest = pl.DataFrame({"t": texts.filter(~done), "n": needles.filter(~done)})
        hits = rest.select(pl.col("t").str.contains(pl.col("n"), literal=True))["t"]
        found[~done] = hits.to_numpy()
    return found
