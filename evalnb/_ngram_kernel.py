"""Compiled per-pair n-gram matching (numba), run in parallel over all pairs.

Tokens arrive as integer ids with offsets. Inside each pair the ids are renumbered densely,
so an n-gram packs exactly (no hashing, no collisions) into one int64 key; counts come from
sorting and run lengths, and a hypothesis n-gram is clipped by its largest count in any
reference — sacrebleu's statistics.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

__all__ = ["clipped_counts", "lcs_lengths"]


@njit(cache=True)
def _runs(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted unique keys and their counts."""
    if keys.size == 0:
        return keys, np.zeros(0, dtype=np.int64)
    keys.sort()  # in place: the caller's array is scratch
    u = 1
    for i in range(1, keys.size):
        if keys[i] != keys[i - 1]:
            u += 1
    uniq = np.empty(u, dtype=np.int64)
    counts = np.zeros(u, dtype=np.int64)
    k = 0
    uniq[0] = keys[0]
    for i in range(keys.size):
        if keys[i] != uniq[k]:
            k += 1
            uniq[k] = keys[i]
        counts[k] += 1
    return uniq, counts


@njit(cache=True)
def _all_keys(tokens: np.ndarray, max_order: int, bits: int) -> np.ndarray:
    """Keys of every n-gram, n = 1..max_order, with n in the low 3 bits (one sort for all)."""
    m = tokens.size
    count = 0
    for n in range(1, max_order + 1):
        count += max(m - n + 1, 0)
    out = np.empty(count, dtype=np.int64)
    pos = 0
    for n in range(1, max_order + 1):
        for i in range(m - n + 1):
            k = np.int64(0)
            for j in range(n):
                k = (k << bits) | tokens[i + j]
            out[pos] = (k << 3) | n
            pos += 1
    return out


@njit(cache=True)
def _local_ids(pair_tokens: np.ndarray) -> tuple[np.ndarray, int]:
    """Dense ids 0..U-1 for the tokens of one pair, and the bits needed per id."""
    order = np.argsort(pair_tokens, kind="mergesort")
    local = np.empty(pair_tokens.size, dtype=np.int64)
    u = -1
    prev = np.int64(-1)
    for i in range(order.size):
        t = pair_tokens[order[i]]
        if i == 0 or t != prev:
            u += 1
            prev = t
        local[order[i]] = u
    bits = 1
    while (1 << bits) <= u + 1:
        bits += 1
    return local, bits


@njit(parallel=True, cache=True)
def clipped_counts(
    hyp: np.ndarray,
    hyp_off: np.ndarray,
    refs: np.ndarray,
    ref_off: np.ndarray,
    pair_refs: np.ndarray,
    max_order: int,
    global_bits: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Count clipped matches and hypothesis n-grams per pair (each pairs × N).

    Also returns the reference length closest to the hypothesis length (ties to the
    shorter).

    ``refs[ref_off[j]:ref_off[j + 1]]`` is reference ``j``; pair ``i`` has references
    ``pair_refs[i]:pair_refs[i + 1]``. With ``global_bits > 0`` the ids are packed as
    they are; otherwise each pair renumbers its tokens densely. A pair whose distinct tokens
    need more than 60 / N bits gets -1 in ``correct`` (the caller reports it).
    """
    n_pairs = hyp_off.size - 1
    correct = np.zeros((n_pairs, max_order), dtype=np.int64)
    total = np.zeros((n_pairs, max_order), dtype=np.int64)
    closest = np.zeros(n_pairs, dtype=np.int64)
    for i in prange(n_pairs):
        h0, h1 = hyp_off[i], hyp_off[i + 1]
        r0, r1 = pair_refs[i], pair_refs[i + 1]
        if global_bits > 0:  # ids already small enough to pack: no renumbering needed
            local, bits = hyp[h0:h1], global_bits
        else:
            size = h1 - h0
            for j in range(r0, r1):
                size += ref_off[j + 1] - ref_off[j]
            joined = np.empty(size, dtype=np.int64)
            joined[: h1 - h0] = hyp[h0:h1]
            pos = h1 - h0
            for j in range(r0, r1):
                a, b = ref_off[j], ref_off[j + 1]
                joined[pos : pos + b - a] = refs[a:b]
                pos += b - a
            local, bits = _local_ids(joined)
        hyp_len = h1 - h0
        best_diff, best_len = -1, 0
        for j in range(r0, r1):
            length = ref_off[j + 1] - ref_off[j]
            diff = abs(hyp_len - length)
            if best_diff == -1 or diff < best_diff or (diff == best_diff and length < best_len):
                best_diff, best_len = diff, length
        closest[i] = best_len
        if bits * max_order > 60:
            correct[i, 0] = -1
            continue
        for n in range(1, max_order + 1):
            total[i, n - 1] = max(hyp_len - n + 1, 0)
        hk, hc = _runs(_all_keys(local[:hyp_len], max_order, bits))
        best = np.zeros(hk.size, dtype=np.int64)
        start = hyp_len
        for j in range(r0, r1):
            length = ref_off[j + 1] - ref_off[j]
            if global_bits > 0:
                ref_tokens = refs[ref_off[j] : ref_off[j + 1]]
            else:
                ref_tokens = local[start : start + length]
            rk, rc = _runs(_all_keys(ref_tokens, max_order, bits))
            start += length
            # Both key lists are sorted: one merge finds every shared n-gram.
            q, r = 0, 0
            while q < hk.size and r < rk.size:
                if hk[q] < rk[r]:
                    q += 1
                elif hk[q] > rk[r]:
                    r += 1
                else:
                    best[q] = max(best[q], rc[r])
                    q += 1
                    r += 1
        for q in range(hk.size):
            correct[i, (hk[q] & 7) - 1] += min(hc[q], best[q])
    return correct, total, closest


@njit(parallel=True, cache=True)
def lcs_lengths(a: np.ndarray, a_off: np.ndarray, b: np.ndarray, b_off: np.ndarray) -> np.ndarray:
    """Longest common subsequence length of every pair ``(a_i, b_i)`` of id sequences."""
    n_pairs = a_off.size - 1
    out = np.zeros(n_pairs, dtype=np.int64)
    for i in prange(n_pairs):
        x = a[a_off[i] : a_off[i + 1]]
        y = b[b_off[i] : b_off[i + 1]]
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
