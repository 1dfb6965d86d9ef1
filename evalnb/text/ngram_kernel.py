"""Compiled per-pair n-gram matching (numba), run in parallel over all pairs.

Tokens arrive as one integer id array with (start, end) positions per text.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

__all__ = ["clipped_counts", "lcs_lengths", "packed_clipped_counts"]


_MIX = np.uint64(0x9E3779B97F4A7C15)
_BLOCK = 512  # pairs per task: each task reuses one scratch table


@njit(cache=True, inline="always")
def _mix(h: np.uint64, token: np.int64) -> np.uint64:
    h = (h ^ np.uint64(token)) * _MIX
    return h ^ (h >> np.uint64(31))


@njit(cache=True, inline="always")
def _find(
    tokens: np.ndarray,
    at: int,
    n: int,
    h: np.uint64,
    mask: int,
    pos: np.ndarray,
    order: np.ndarray,
    hashes: np.ndarray,
) -> np.int64:
    """Slot of the ``n``-gram at ``tokens[at:]``: its own, or the empty one it would take."""
    s = np.int64(h & np.uint64(mask))
    while pos[s] != -1:
        if hashes[s] == h and order[s] == n:
            same = True
            for k in range(n):
                if tokens[pos[s] + k] != tokens[at + k]:
                    same = False
                    break
            if same:
                return s
        s = (s + 1) & mask
    return s


@njit(parallel=True, cache=True)
def clipped_counts(
    tokens: np.ndarray,
    hyp_lo: np.ndarray,
    hyp_hi: np.ndarray,
    ref_lo: np.ndarray,
    ref_hi: np.ndarray,
    pair_refs: np.ndarray,
    max_order: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Count clipped matches and hypothesis n-grams per pair (each pairs × N).

    Also returns the reference length closest to the hypothesis length (ties to the
    shorter).

    Hypothesis ``i`` is ``tokens[hyp_lo[i]:hyp_hi[i]]``, reference ``j`` is
    ``tokens[ref_lo[j]:ref_hi[j]]``, and pair ``i`` has references
    ``pair_refs[i]:pair_refs[i + 1]``. Each pair fills a small hash table with its
    hypothesis n-grams (compared token by token: exact, whatever the vocabulary), then
    counts each reference's n-grams found there; a hypothesis n-gram is clipped by its
    largest count in any one reference, as sacrebleu does.
    """
    n_pairs = hyp_lo.size
    correct = np.zeros((n_pairs, max_order), dtype=np.int64)
    total = np.zeros((n_pairs, max_order), dtype=np.int64)
    closest = np.zeros(n_pairs, dtype=np.int64)
    for block in prange((n_pairs + _BLOCK - 1) // _BLOCK):
        first, last = block * _BLOCK, min((block + 1) * _BLOCK, n_pairs)
        longest = 1
        for i in range(first, last):
            longest = max(longest, hyp_hi[i] - hyp_lo[i])
        size = 16
        while size < 2 * max_order * longest:
            size *= 2
        pos = np.full(size, -1, dtype=np.int64)
        order = np.empty(size, dtype=np.int64)
        used = np.empty(size, dtype=np.int64)  # the slots a pair filled: summed, then cleared
        hashes = np.empty(size, dtype=np.uint64)
        hyp_count = np.empty(size, dtype=np.int64)
        best = np.empty(size, dtype=np.int64)
        current = np.empty(size, dtype=np.int64)
        seen_in = np.empty(size, dtype=np.int64)
        for i in range(first, last):
            h0, h1 = hyp_lo[i], hyp_hi[i]
            m = h1 - h0
            r0, r1 = pair_refs[i], pair_refs[i + 1]
            best_diff, best_len = -1, 0
            for j in range(r0, r1):
                length = ref_hi[j] - ref_lo[j]
                diff = abs(m - length)
                if best_diff == -1 or diff < best_diff or (diff == best_diff and length < best_len):
                    best_diff, best_len = diff, length
            closest[i] = best_len
            for n in range(1, max_order + 1):
                total[i, n - 1] = max(m - n + 1, 0)
            cap = 16
            while cap < 2 * max_order * m:
                cap *= 2
            mask = cap - 1
            filled = 0
            for a in range(h0, h1):
                h = np.uint64(0)
                for n in range(1, min(max_order, h1 - a) + 1):
                    h = _mix(h, tokens[a + n - 1])
                    s = _find(tokens, a, n, h, mask, pos, order, hashes)
                    if pos[s] == -1:
                        pos[s], order[s], hashes[s] = a, n, h
                        hyp_count[s], best[s], seen_in[s] = 1, 0, -1
                        used[filled] = s
                        filled += 1
                    else:
                        hyp_count[s] += 1
            for j in range(r0, r1):
                for a in range(ref_lo[j], ref_hi[j]):
                    h = np.uint64(0)
                    for n in range(1, min(max_order, ref_hi[j] - a) + 1):
                        h = _mix(h, tokens[a + n - 1])
                        s = _find(tokens, a, n, h, mask, pos, order, hashes)
                        if pos[s] == -1:
                            break  # not in the hypothesis, nor any longer n-gram from here
                        if seen_in[s] != j:
                            seen_in[s], current[s] = j, 0
                        current[s] += 1
                        best[s] = max(best[s], current[s])
            for u in range(filled):
                q = used[u]
                correct[i, order[q] - 1] += min(hyp_count[q], best[q])
                pos[q] = -1
    return correct, total, closest


@njit(parallel=True, cache=True)
def lcs_lengths(
    tokens: np.ndarray, a_lo: np.ndarray, a_hi: np.ndarray, b_lo: np.ndarray, b_hi: np.ndarray
) -> np.ndarray:
    """Longest common subsequence length of ``tokens[a_lo[i]:a_hi[i]]`` and the ``b`` one."""
    n_pairs = a_lo.size
    out = np.zeros(n_pairs, dtype=np.int64)
    for i in prange(n_pairs):
        x = tokens[a_lo[i] : a_hi[i]]
        y = tokens[b_lo[i] : b_hi[i]]
        if x.size == 0 or y.size == 0:
            continue
        row = np.zeros(y.size + 1, dtype=np.int64)
        for p in range(x.size):
            diag = 0  # row[j - 1] of the previous line
            for q in range(1, y.size + 1):
                above = row[q]
                if x[p] == y[q - 1]:
                    row[q] = diag + 1
                elif row[q - 1] > above:
                    row[q] = row[q - 1]
                diag = above
        out[i] = row[y.size]
    return out


@njit(cache=True, inline="always")
def _slot(keys: np.ndarray, key: np.int64, mask: int, shift: np.uint64) -> np.int64:
    """Slot of ``key`` in an open-addressed table: its own, or the empty one it would take."""
    s = np.int64((np.uint64(key) * _MIX) >> shift)
    while keys[s] != 0 and keys[s] != key:
        s = (s + 1) & mask
    return s


@njit(parallel=True, cache=True)
def packed_clipped_counts(
    tokens: np.ndarray,
    hyp_lo: np.ndarray,
    hyp_hi: np.ndarray,
    ref_lo: np.ndarray,
    ref_hi: np.ndarray,
    max_order: int,
    base: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Clipped matches and hypothesis n-grams per pair (pairs × N), one reference a pair.

    For a small vocabulary (characters): ``tokens`` are ids in ``1..base-1`` and
    ``base ** max_order`` fits 63 bits, so an n-gram *is* its key (``key * base + id``,
    which also tells the orders apart), and the hash table compares one integer per probe
    where :func:`clipped_counts` compares the n-gram token by token. With one reference,
    a match count is symmetric (the sum of the smaller of the two counts of each n-gram),
    so the shorter text of a pair fills the table and the longer one probes it, stopping
    at an n-gram not there. On chrF's 1- to 6-grams of 20k sentence pairs, two cores:
    0.08 s, where :func:`clipped_counts` took 0.19 s (before either summed only the slots
    it filled: 0.12 s).
    """
    n_pairs = hyp_lo.size
    correct = np.zeros((n_pairs, max_order), dtype=np.int64)
    total = np.zeros((n_pairs, max_order), dtype=np.int64)
    for block in prange((n_pairs + _BLOCK - 1) // _BLOCK):
        first, last = block * _BLOCK, min((block + 1) * _BLOCK, n_pairs)
        shortest = 1
        for i in range(first, last):
            shortest = max(shortest, min(hyp_hi[i] - hyp_lo[i], ref_hi[i] - ref_lo[i]))
        size = 16
        while size < 2 * max_order * shortest:
            size *= 2
        # Narrow columns keep a pair's table (2k slots for a 170-character text) in L1/L2.
        keys = np.zeros(size, dtype=np.int64)  # 0 is no n-gram: ids start at 1
        length = np.empty(size, dtype=np.int8)
        fill_count = np.empty(size, dtype=np.int32)
        probe_count = np.empty(size, dtype=np.int32)
        # The slots a pair filled, to sum and clear just those (a table is mostly empty).
        used = np.empty(size, dtype=np.int64)
        for i in range(first, last):
            for n in range(1, max_order + 1):
                total[i, n - 1] = max(hyp_hi[i] - hyp_lo[i] - n + 1, 0)
            f0, f1, p0, p1 = hyp_lo[i], hyp_hi[i], ref_lo[i], ref_hi[i]
            if p1 - p0 < f1 - f0:
                f0, f1, p0, p1 = p0, p1, f0, f1
            cap, bits = 16, 4
            while cap < 2 * max_order * (f1 - f0):
                cap *= 2
                bits += 1
            mask, shift = cap - 1, np.uint64(64 - bits)
            filled = 0
            for a in range(f0, f1):
                key = np.int64(0)
                for n in range(1, min(max_order, f1 - a) + 1):
                    key = key * base + tokens[a + n - 1]
                    s = _slot(keys, key, mask, shift)
                    if keys[s] == 0:
                        keys[s], length[s], fill_count[s], probe_count[s] = key, n, 1, 0
                        used[filled] = s
                        filled += 1
                    else:
                        fill_count[s] += 1
            for a in range(p0, p1):
                key = np.int64(0)
                for n in range(1, min(max_order, p1 - a) + 1):
                    key = key * base + tokens[a + n - 1]
                    s = _slot(keys, key, mask, shift)
                    if keys[s] == 0:
                        break  # not in the other text, nor any longer n-gram from here
                    probe_count[s] += 1
            for u in range(filled):
                q = used[u]
                correct[i, length[q] - 1] += min(fill_count[q], probe_count[q])
                keys[q] = 0
    return correct, total
