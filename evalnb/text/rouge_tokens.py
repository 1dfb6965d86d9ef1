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

from typing import TYPE_CHECKING

import numpy as np
import polars as pl
import pyarrow as pa
from numba import njit

from evalnb.text.intern import intern_buffers, joined_buffers, spans_in_blocks
from evalnb.text.ngram import TokenIds
from evalnb.text.porter import stem_words

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["rouge_token_ids"]

_SPACE, _I, _K = 32, ord("i"), ord("k")


@njit(cache=True, nogil=True)
def _clean(
    data: np.ndarray, lows: np.ndarray, highs: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``re.sub("[^a-z0-9]+", " ", text.lower())`` of every text, up to runs of spaces."""
    n = lows.size
    out = np.empty(int((highs - lows).sum()) + 1, dtype=np.uint8)  # no character grows
    out_lows = np.zeros(n, dtype=np.int64)
    out_highs = np.zeros(n, dtype=np.int64)
    at = 0
    for t in range(n):
        i, end = lows[t], highs[t]
        out_lows[t] = at
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
        out_highs[t] = at
    return out[:at], out_lows, out_highs


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
    clean, lows, highs = spans_in_blocks(_clean, data, offsets[:-1], offsets[1:])
    ids, offs, vocab = intern_buffers(clean, lows, highs, [len(c) for c in columns], spaces=True)
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
