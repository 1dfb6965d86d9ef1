"""rouge-score's tokenizer, compiled: lower-case, keep ``[a-z0-9]`` runs, Porter-stem, intern.

rouge-score lower-cases a text (Python's ``str.lower``), turns every run outside
``[a-z0-9]`` into a space, splits, and Porter-stems the words longer than three letters. Two
Polars regex passes did the first part at about a third of ROUGE's time; here one compiled
pass over the columns' Arrow bytes does it (:func:`_clean`), the interning of
:mod:`evalnb.text.intern` numbers the words, and :mod:`evalnb.text.porter` stems each
distinct word once.

Lower-casing is the only step that needs Unicode: of every code point outside ASCII, exactly
two lower-case to something holding ``[a-z0-9]`` (``İ`` U+0130 to ``i`` and a combining dot,
the Kelvin sign U+212A to ``k``; checked over all of Unicode in
``tests/text/test_rouge_tokens.py``); every other one is a separator, as the regex makes it.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING

import numpy as np
import polars as pl
import pyarrow as pa
from numba import get_num_threads, njit

from evalnb.text.intern import intern_buffers, joined_buffers, thread_pool
from evalnb.text.ngram import TokenIds
from evalnb.text.porter import stem_words

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["rouge_token_ids"]

_SPACE, _I, _K = 32, ord("i"), ord("k")
_PARALLEL_BYTES = 1 << 18  # below this, one thread cleans everything


@njit(cache=True, nogil=True)
def _clean(data: np.ndarray, offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``re.sub("[^a-z0-9]+", " ", text.lower())`` of every text, up to runs of spaces."""
    n = offsets.size - 1
    out = np.empty(offsets[-1] - offsets[0], dtype=np.uint8)  # no character gets longer
    out_off = np.zeros(n + 1, dtype=np.int64)
    at = 0
    for t in range(n):
        i, end = offsets[t], offsets[t + 1]
        while i < end:
            b = data[i]
            if b < 0x80:
                if 65 <= b <= 90:
                    out[at] = b + 32
                elif 97 <= b <= 122 or 48 <= b <= 57:
                    out[at] = b
                else:
                    out[at] = _SPACE
                at += 1
                i += 1
                continue
            width = 2 if b < 0xE0 else (3 if b < 0xF0 else 4)
            if b == 0xC4 and data[i + 1] == 0xB0:  # İ: "i" and a combining dot (a separator)
                out[at] = _I
                out[at + 1] = _SPACE
                at += 2
            elif b == 0xE2 and data[i + 1] == 0x84 and data[i + 2] == 0xAA:  # the Kelvin sign
                out[at] = _K
                at += 1
            else:
                out[at] = _SPACE
                at += 1
            i += width
        out_off[t + 1] = at
    return out[:at], out_off


def _cleaned(data: np.ndarray, offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_clean` in a block of texts per core (the kernel frees the GIL)."""
    blocks = get_num_threads() if data.size >= _PARALLEL_BYTES else 1
    if blocks < 2 or offsets.size < 2 * blocks + 1:
        return _clean(data, offsets)
    cuts = np.searchsorted(offsets, offsets[-1] * np.arange(1, blocks) / blocks)
    bounds = np.unique(np.concatenate([[0], cuts, [offsets.size - 1]])).tolist()
    parts = list(
        thread_pool().map(
            lambda ab: _clean(data, offsets[ab[0] : ab[1] + 1]), itertools.pairwise(bounds)
        )
    )
    shift = np.cumsum([0] + [part[0].size for part in parts])
    return (
        np.concatenate([part[0] for part in parts]),
        np.concatenate([[0]] + [part[1][1:] + shift[k] for k, part in enumerate(parts)]),
    )


def rouge_token_ids(columns: Sequence[pl.Series], *, stem: bool) -> TokenIds:
    """Tokenize several columns as rouge-score does, to shared ids (nulls read as empty).

    Parameters
    ----------
    columns
        String columns; their texts are numbered one after another.
    stem
        Porter-stem words longer than three letters (rouge-score's ``use_stemmer``); equal
        stems then share an id.

    Returns
    -------
    TokenIds
        Ids, offsets per column, and the vocabulary (stems with ``stem``).
    """
    data, offsets = joined_buffers([c.to_arrow() for c in columns])
    clean, clean_off = _cleaned(data, offsets)
    ids, offs, vocab = intern_buffers(
        clean, clean_off[:-1], clean_off[1:], [len(c) for c in columns], spaces=True
    )
    tokens = TokenIds(ids, tuple(offs), vocab)
    if not stem or not len(vocab):
        return tokens
    stems = pl.Series(stem_words(vocab, min_len=4), dtype=pl.String)
    # Equal stems, equal ids. A stem of [a-z0-9] letters stays in them, so rouge-score's
    # filter of tokens outside [a-z0-9] after stemming drops nothing here.
    code = (stems.rank("dense").cast(pl.Int64) - 1).to_numpy()
    return TokenIds(
        code[tokens.ids], tokens.offsets, stems.unique().sort().to_arrow().cast(pa.large_string())
    )
