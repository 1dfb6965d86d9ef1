"""Whitespace splitting and token interning, compiled (numba), straight from Arrow buffers.

Tokenizers prepare a column with Polars passes (regex rules leave tokens separated by
whitespace); this module splits every text and numbers equal tokens equally, without ever
building a list of small strings. Ids are dense, in order of first appearance.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from numba import njit

__all__ = ["intern_tokens"]


@njit(cache=True, inline="always")
def _space(data: np.ndarray, i: int, end: int) -> int:
    r"""Byte length of the white space character at ``data[i]`` (0 when it is not one).

    White space as Python's ``str.split`` and Rust's ``\s`` (Unicode White_Space) see it.
    """
    b = np.int64(data[i])
    if b < 0x80:
        return 1 if b == 32 or (b >= 9 and b <= 13) or (b >= 0x1C and b <= 0x1F) else 0
    return _wide_space(data, i, end, b)


@njit(cache=True, inline="always")
def _wide_space(data: np.ndarray, i: int, end: int, b: np.int64) -> int:
    if b == 0xC2 and i + 1 < end:
        c = data[i + 1]
        return 2 if c == 0x85 or c == 0xA0 else 0
    if (b != 0xE1 and b != 0xE2 and b != 0xE3) or i + 2 >= end:
        return 0
    c, d = np.int64(data[i + 1]), np.int64(data[i + 2])
    if b == 0xE1:  # U+1680
        return 3 if c == 0x9A and d == 0x80 else 0
    if b == 0xE3:  # U+3000
        return 3 if c == 0x80 and d == 0x80 else 0
    if c == 0x80 and ((d >= 0x80 and d <= 0x8A) or d == 0xA8 or d == 0xA9 or d == 0xAF):
        return 3  # U+2000..200A, U+2028, U+2029, U+202F
    return 3 if c == 0x81 and d == 0x9F else 0  # U+205F


@njit(cache=True, inline="always")
def _hash(data: np.ndarray, a: int, b: int) -> np.uint64:
    h = np.uint64(14695981039346656037)  # FNV-1a
    for i in range(a, b):
        h = (h ^ np.uint64(data[i])) * np.uint64(1099511628211)
    return h ^ (h >> np.uint64(29))


@njit(cache=True, inline="always")
def _same(data: np.ndarray, a: int, b: int, c: int, d: int) -> bool:
    if b - a != d - c:
        return False
    for k in range(b - a):  # noqa: SIM110 - numba compiles no generator inside all()
        if data[a + k] != data[c + k]:
            return False
    return True


@njit(cache=True)
def _fill(
    data: np.ndarray,
    offsets: np.ndarray,
    first: int,
    ids: np.ndarray,
    text_off: np.ndarray,
    slots: np.ndarray,
    starts: np.ndarray,
    ends: np.ndarray,
    vocab: int,
) -> tuple[int, int]:
    """Intern texts from ``first`` on until done or the table is half full.

    Returns the next text to do (``offsets.size - 1`` when done) and the vocabulary size.
    The arrays are parameters, never reassigned here: that keeps this loop fast.
    """
    mask = np.uint64(slots.size - 1)
    count = text_off[first]
    for t in range(first, offsets.size - 1):
        i, end = offsets[t], offsets[t + 1]
        while i < end:
            w = _space(data, i, end)
            if w:
                i += w
                continue
            j = i + 1
            while j < end and _space(data, j, end) == 0:
                j += 1
            s = np.int64(_hash(data, i, j) & mask)
            while slots[s] != -1 and not _same(data, starts[slots[s]], ends[slots[s]], i, j):
                s = np.int64((s + 1) & mask)
            if slots[s] == -1:
                if 2 * (vocab + 1) > slots.size:
                    return t, vocab  # grow, then redo this text (its new tokens are kept)
                slots[s] = vocab
                starts[vocab], ends[vocab] = i, j
                vocab += 1
            ids[count] = slots[s]
            count += 1
            i = j
        text_off[t + 1] = count
    return offsets.size - 1, vocab


@njit(cache=True)
def _rehash(
    data: np.ndarray, starts: np.ndarray, ends: np.ndarray, vocab: int, cap: int
) -> np.ndarray:
    slots = np.full(cap, -1, dtype=np.int64)
    for v in range(vocab):
        q = np.int64(_hash(data, starts[v], ends[v]) & np.uint64(cap - 1))
        while slots[q] != -1:
            q = (q + 1) & (cap - 1)
        slots[q] = v
    return slots


@njit(cache=True)
def _split_intern(
    data: np.ndarray, offsets: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Token ids, token offsets per text, and each id's first (start, end) in ``data``."""
    n = offsets.size - 1
    # A text of L bytes holds at most ceil(L / 2) tokens (one byte, one space, ...).
    ids = np.empty(data.size // 2 + n + 1, dtype=np.int64)
    text_off = np.zeros(n + 1, dtype=np.int64)
    cap = 1 << 12
    slots = np.full(cap, -1, dtype=np.int64)
    starts = np.empty(cap // 2, dtype=np.int64)
    ends = np.empty(cap // 2, dtype=np.int64)
    t, vocab = 0, 0
    while True:
        t, vocab = _fill(data, offsets, t, ids, text_off, slots, starts, ends, vocab)
        if t == n:
            break
        cap *= 2
        slots = _rehash(data, starts, ends, vocab, cap)
        starts = np.concatenate((starts, np.empty(cap // 2 - starts.size, np.int64)))
        ends = np.concatenate((ends, np.empty(cap // 2 - ends.size, np.int64)))
    count = text_off[n]
    return ids[:count].copy(), text_off, starts[:vocab].copy(), ends[:vocab].copy()


@njit(cache=True)
def _gather(
    data: np.ndarray, starts: np.ndarray, ends: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    off = np.zeros(starts.size + 1, dtype=np.int64)
    for v in range(starts.size):
        off[v + 1] = off[v] + ends[v] - starts[v]
    out = np.empty(off[-1], dtype=np.uint8)
    for v in range(starts.size):
        out[off[v] : off[v + 1]] = data[starts[v] : ends[v]]
    return out, off


def _buffers(texts: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """UTF-8 bytes and int64 offsets (from 0) of a string array; nulls read as empty."""
    texts = texts.cast(pa.large_string())
    _, off_buf, data_buf = texts.buffers()
    offsets = np.frombuffer(off_buf, dtype=np.int64)[texts.offset : texts.offset + len(texts) + 1]
    if data_buf is None or not len(texts):
        return np.zeros(0, np.uint8), np.zeros(len(texts) + 1, np.int64)
    data = np.frombuffer(data_buf, dtype=np.uint8)[offsets[0] : offsets[-1]]
    offsets = offsets - offsets[0]
    if texts.null_count:
        # A null's offsets may still span bytes: drop them.
        lengths = np.where(np.asarray(texts.is_valid()), np.diff(offsets), 0)
        data = data[np.repeat(lengths > 0, np.diff(offsets))]
        offsets = np.concatenate([[0], np.cumsum(lengths)])
    return data, offsets


def intern_tokens(
    columns: list[pa.Array],
) -> tuple[np.ndarray, list[np.ndarray], pa.LargeStringArray]:
    """Split white-space separated texts into tokens and give equal tokens equal ids.

    Parameters
    ----------
    columns
        String arrays (e.g. ``series.to_arrow()``) whose tokens are separated by white space.

    Returns
    -------
    ids
        Token ids of all columns, one after another (column 0's tokens first).
    offsets
        Per column, ``ids[off[i]:off[i + 1]]`` are the tokens of text ``i`` (positions in the
        shared ``ids``).
    vocab
        The token of each id.
    """
    parts = [_buffers(c) for c in columns]
    data = np.concatenate([p[0] for p in parts]) if parts else np.zeros(0, np.uint8)
    shift = np.cumsum([0] + [p[0].size for p in parts])
    joined = np.concatenate([[0]] + [p[1][1:] + shift[k] for k, p in enumerate(parts)]).astype(
        np.int64
    )
    ids, text_off, starts, ends = _split_intern(data, joined)
    chars, vocab_off = _gather(data, starts, ends)
    vocab = pa.LargeStringArray.from_buffers(
        len(starts), pa.py_buffer(vocab_off), pa.py_buffer(chars)
    )
    bounds = np.cumsum([0] + [len(c) for c in columns])
    offsets = [text_off[bounds[k] : bounds[k + 1] + 1] for k in range(len(columns))]
    return ids, offsets, vocab
