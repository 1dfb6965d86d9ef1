"""Token splitting and interning, compiled (numba), straight from Arrow buffers.

Tokenizers prepare a column with Polars passes (regex rules leave tokens separated by
whitespace), or name the compiled rules that split it (sacrebleu's 13a); this module splits
every text and numbers equal tokens equally, without ever building a list of small strings.
Ids are dense, in order of first appearance.
"""

from __future__ import annotations

import itertools
import os
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
from numba import get_num_threads, njit

from evalnb.text.rules13a import MAY_ISOLATE, isolated_13a
from evalnb.text.utf8 import SPACE_LEADS, space_width

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = [
    "byte_blocks",
    "intern_buffers",
    "intern_tokens",
    "joined_buffers",
    "spans_in_blocks",
    "spans_to_strings",
    "split_intern",
    "thread_pool",
    "utf8_buffers",
]


# Per splitting (white space; white space and 13a), the bytes that may end a token: one
# lookup settles most bytes before the exact tests run.
_MAY_END = np.stack([SPACE_LEADS, SPACE_LEADS | MAY_ISOLATE])
_SPACE = 32
_FNV_START = np.uint64(14695981039346656037)
_FNV_PRIME = np.uint64(1099511628211)


@njit(cache=True, inline="always")
def _finish(h: np.uint64) -> np.uint64:
    return h ^ (h >> np.uint64(29))


@njit(cache=True, inline="always")
def _same(store: np.ndarray, a: int, b: int, data: np.ndarray, c: int, d: int) -> bool:
    if b - a != d - c:
        return False
    for k in range(b - a):  # noqa: SIM110 - numba compiles no generator inside all()
        if store[a + k] != data[c + k]:
            return False
    return True


@njit(cache=True)
def _fill(
    data: np.ndarray,
    lows: np.ndarray,
    highs: np.ndarray,
    first: int,
    ids: np.ndarray,
    text_off: np.ndarray,
    slots: np.ndarray,
    vhash: np.ndarray,
    voff: np.ndarray,
    store: np.ndarray,
    vocab: int,
    rules13a: bool,
    spaces: bool,
) -> tuple[int, int]:
    """Intern texts from ``first`` on until done, the table half full or the store full.

    Returns the next text to do (``lows.size`` when done) and the vocabulary size.
    The arrays are parameters, never reassigned here: that keeps this loop fast. With
    ``spaces`` the texts' tokens are separated by ASCII spaces alone (what the compiled
    tokenizers write), and no other white space is looked for.
    """
    mask = np.uint64(slots.size - 1)
    count = text_off[first]
    may_end = _MAY_END[1 if rules13a else 0]
    for t in range(first, lows.size):
        lo = lows[t]
        i, end = lo, highs[t]
        while i < end:
            if spaces:  # tokens end at a space, and nothing else
                if data[i] == _SPACE:
                    i += 1
                    continue
            else:
                w = space_width(data, i, end)
                if w:
                    i += w
                    continue
            # The token's hash is taken while its end is sought: one read of each byte.
            h = (_FNV_START ^ np.uint64(data[i])) * _FNV_PRIME
            j = i + 1
            if spaces:
                while j < end and data[j] != _SPACE:
                    h = (h ^ np.uint64(data[j])) * _FNV_PRIME
                    j += 1
            elif not (rules13a and isolated_13a(data, i, lo, end)):
                while j < end:
                    if may_end[data[j]] and (
                        space_width(data, j, end) or (rules13a and isolated_13a(data, j, lo, end))
                    ):
                        break
                    h = (h ^ np.uint64(data[j])) * _FNV_PRIME
                    j += 1
            h = _finish(h)
            s = np.int64(h & mask)
            # Known tokens live in a compact store (the vocabulary handed back); their full
            # hash is compared before their bytes.
            while slots[s] != -1 and not (
                vhash[slots[s]] == h
                and _same(store, voff[slots[s]], voff[slots[s] + 1], data, i, j)
            ):
                s = np.int64((s + 1) & mask)
            if slots[s] == -1:
                used = voff[vocab]
                if 2 * (vocab + 1) > slots.size or used + j - i > store.size:
                    return t, vocab  # grow, then redo this text (its new tokens are kept)
                slots[s] = vocab
                vhash[vocab] = h
                store[used : used + j - i] = data[i:j]
                voff[vocab + 1] = used + j - i
                vocab += 1
            ids[count] = slots[s]
            count += 1
            i = j
        text_off[t + 1] = count
    return lows.size, vocab


@njit(cache=True)
def _rehash(vhash: np.ndarray, vocab: int, cap: int) -> np.ndarray:
    slots = np.full(cap, -1, dtype=np.int64)
    for v in range(vocab):
        q = np.int64(vhash[v] & np.uint64(cap - 1))
        while slots[q] != -1:
            q = (q + 1) & (cap - 1)
        slots[q] = v
    return slots


@njit(cache=True)
def _grown(values: np.ndarray, size: int) -> np.ndarray:
    out = np.empty(size, dtype=values.dtype)
    out[: values.size] = values
    return out


@njit(cache=True, nogil=True)
def split_intern_serial(
    data: np.ndarray, lows: np.ndarray, highs: np.ndarray, rules13a: bool, spaces: bool = False
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Token ids, token offsets per text, and the vocabulary's bytes and offsets.

    ``spaces``: the tokens are separated by ASCII spaces only (:func:`_fill`).
    """
    n = lows.size
    # Split on white space, a text of L bytes holds at most ceil(L / 2) tokens (one byte, one
    # space, ...); the 13a rules may make a token of every byte ("!!!").
    ids = np.empty((data.size if rules13a else data.size // 2) + n + 1, dtype=np.int64)
    text_off = np.zeros(n + 1, dtype=np.int64)
    cap = 1 << 12
    slots = np.full(cap, -1, dtype=np.int64)
    vhash = np.empty(cap // 2, dtype=np.uint64)
    voff = np.zeros(cap // 2 + 1, dtype=np.int64)
    store = np.empty(1 << 16, dtype=np.uint8)
    t, vocab = 0, 0
    while True:
        t, vocab = _fill(
            data, lows, highs, t, ids, text_off, slots, vhash, voff, store, vocab, rules13a, spaces
        )
        if t == n:
            break
        if 2 * (vocab + 1) > cap:
            cap *= 2
            slots = _rehash(vhash, vocab, cap)
            vhash = _grown(vhash, cap // 2)
            voff = _grown(voff, cap // 2 + 1)
        else:  # the store is full: a token longer than what is left
            store = _grown(store, 2 * store.size + highs[t] - lows[t])
    count = text_off[n]
    return ids[:count].copy(), text_off, store[: voff[vocab]].copy(), voff[: vocab + 1].copy()


# Below this many bytes one thread interns everything. Measured on two cores with real
# answers (13a rules): 68 KB took 0.57 ms in one thread and 0.71 in two blocks, 160 KB
# 1.4 against 1.3 ms, 660 KB 5.6 against 3.8 ms.
_PARALLEL_BYTES = 1 << 18
_POOL: dict[int, ThreadPoolExecutor] = {}


def thread_pool() -> ThreadPoolExecutor:
    """Return the process's pool of one thread per core, for the compiled kernels.

    Kept by pid: a forked child inherits its parent's pool object, without its threads.
    """
    pid = os.getpid()
    if pid not in _POOL:
        _POOL.clear()
        _POOL[pid] = ThreadPoolExecutor(
            max_workers=get_num_threads(), thread_name_prefix="evalnb-intern"
        )
    return _POOL[pid]


@njit(cache=True, nogil=True)
def _remap_into(out: np.ndarray, remap: np.ndarray, ids: np.ndarray) -> None:
    for k in range(ids.size):
        out[k] = remap[ids[k]]


def split_intern(
    data: np.ndarray,
    lows: np.ndarray,
    highs: np.ndarray,
    rules13a: bool,
    blocks: int | None = None,
    *,
    spaces: bool = False,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`split_intern_serial` over all cores: the same ids, in order of first appearance.

    The texts are cut into blocks of about equal bytes, one per core, each split and interned
    by a thread of its own (the compiled loop releases the GIL). The blocks' vocabularies are
    then interned in block order, each token as one text: a token's global id is given where
    it first appears, so the ids are exactly the single-threaded ones. A block's local ids
    then map to global ones through its part of that pass. ``blocks`` defaults to numba's
    thread count; below ``_PARALLEL_BYTES`` one block does it all.

    Measured on two cores, 20k real answer/reference pairs (6.7 MB, 1.2M tokens, 13a rules):
    33 ms against 60 ms in one thread.
    """
    spans = byte_blocks(lows, highs, blocks)
    if len(spans) < 2:
        return split_intern_serial(data, lows, highs, rules13a, spaces)
    parts = list(
        thread_pool().map(
            lambda ab: split_intern_serial(
                data, lows[ab[0] : ab[1]], highs[ab[0] : ab[1]], rules13a, spaces
            ),
            spans,
        )
    )
    shift = np.cumsum([0] + [part[2].size for part in parts])
    store = np.concatenate([part[2] for part in parts])
    firsts = np.concatenate([part[3][:-1] + shift[k] for k, part in enumerate(parts)])
    lasts = np.concatenate([part[3][1:] + shift[k] for k, part in enumerate(parts)])
    # Tokens hold no white space (they end at it), so each vocabulary entry is one token.
    remap, _, chars, vocab_off = split_intern_serial(store, firsts, lasts, False)
    sizes = np.cumsum([0] + [part[3].size - 1 for part in parts])
    counts = np.cumsum([0] + [part[0].size for part in parts])
    ids = np.empty(int(counts[-1]), dtype=np.int64)
    list(
        thread_pool().map(
            lambda k: _remap_into(
                ids[counts[k] : counts[k + 1]], remap[sizes[k] : sizes[k + 1]], parts[k][0]
            ),
            range(len(parts)),
        )
    )
    text_off = np.concatenate([[0]] + [part[1][1:] + counts[k] for k, part in enumerate(parts)])
    return ids, text_off, chars, vocab_off


def byte_blocks(
    lows: np.ndarray, highs: np.ndarray, blocks: int | None = None
) -> list[tuple[int, int]]:
    """Cut texts into runs ``[a, b)`` of about equal bytes, ``blocks`` of them.

    ``blocks`` defaults to one per core, and to one run in all below ``_PARALLEL_BYTES``
    (a thread's start would cost more).
    """
    if blocks is None:
        size = int((highs - lows).sum()) if lows.size else 0
        blocks = get_num_threads() if size >= _PARALLEL_BYTES else 1
    if blocks < 2 or lows.size < 2 * blocks:
        return [(0, lows.size)]
    ends = np.cumsum(highs - lows)
    cuts = np.searchsorted(ends, ends[-1] * np.arange(1, blocks) / blocks)
    bounds = np.unique(np.concatenate([[0], cuts, [lows.size]])).tolist()
    return list(itertools.pairwise(bounds))


def spans_in_blocks(
    kernel: Callable[..., tuple[np.ndarray, ...]],
    data: np.ndarray,
    lows: np.ndarray,
    highs: np.ndarray,
    *args: object,
) -> tuple[np.ndarray, ...]:
    """Run a text kernel over :func:`byte_blocks` of the texts, a thread each.

    ``kernel(data, lows, highs, *args)`` must free the GIL (``nogil``) and return its output
    bytes, each text's span in them, then any per-text arrays; the blocks' outputs are
    joined, the spans shifted to match.
    """
    runs = byte_blocks(lows, highs)
    if len(runs) == 1:
        return kernel(data, lows, highs, *args)
    parts = list(
        thread_pool().map(
            lambda ab: kernel(data, lows[ab[0] : ab[1]], highs[ab[0] : ab[1]], *args), runs
        )
    )
    shift = np.cumsum([0] + [part[0].size for part in parts])
    joined = [np.concatenate([part[0] for part in parts])]
    joined += [np.concatenate([part[k] + shift[j] for j, part in enumerate(parts)]) for k in (1, 2)]
    joined += [np.concatenate([part[k] for part in parts]) for k in range(3, len(parts[0]))]
    return tuple(joined)


def spans_to_strings(data: np.ndarray, lows: np.ndarray, highs: np.ndarray) -> pa.LargeStringArray:
    """Return the spans ``data[lows[t]:highs[t]]`` (UTF-8) as one string array, in order."""
    lengths = highs - lows
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    take = np.repeat(lows - offsets[:-1], lengths) + np.arange(offsets[-1])
    return pa.LargeStringArray.from_buffers(
        lows.size, pa.py_buffer(offsets), pa.py_buffer(np.ascontiguousarray(data[take]))
    )


def utf8_buffers(texts: pa.Array) -> tuple[np.ndarray, np.ndarray]:
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
    data, offsets = joined_buffers(columns)
    return intern_buffers(data, offsets[:-1], offsets[1:], [len(c) for c in columns])


def joined_buffers(columns: list[pa.Array]) -> tuple[np.ndarray, np.ndarray]:
    """UTF-8 bytes and offsets of several string arrays, one after another (nulls empty)."""
    parts = [utf8_buffers(c) for c in columns]
    data = np.concatenate([p[0] for p in parts]) if parts else np.zeros(0, np.uint8)
    shift = np.cumsum([0] + [p[0].size for p in parts])
    joined = np.concatenate([[0]] + [p[1][1:] + shift[k] for k, p in enumerate(parts)])
    return data, joined.astype(np.int64)


def intern_buffers(
    data: np.ndarray,
    lows: np.ndarray,
    highs: np.ndarray,
    counts: list[int],
    *,
    rules13a: bool = False,
    spaces: bool = False,
) -> tuple[np.ndarray, list[np.ndarray], pa.LargeStringArray]:
    """:func:`intern_tokens` of texts already laid out as one UTF-8 buffer.

    ``data[lows[t]:highs[t]]`` is text ``t``; ``counts`` says how many texts each
    column holds, in order. With ``rules13a``, tokens also end where sacrebleu's 13a rules
    set a character apart (:func:`evalnb.text.rules13a.isolated_13a`): the texts must have
    had 13a's replacements (:func:`evalnb.text.rules13a.replaced_13a`). With ``spaces``,
    tokens are separated by ASCII spaces alone (the compiled tokenizers' output): faster.
    """
    ids, text_off, chars, vocab_off = split_intern(data, lows, highs, rules13a, spaces=spaces)
    vocab = pa.LargeStringArray.from_buffers(
        vocab_off.size - 1, pa.py_buffer(vocab_off), pa.py_buffer(chars)
    )
    bounds = np.cumsum([0, *counts])
    offsets = [text_off[bounds[k] : bounds[k + 1] + 1] for k in range(len(counts))]
    return ids, offsets, vocab
