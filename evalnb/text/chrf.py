"""sacrebleu's chrF over whole columns: character n-grams counted by the compiled counter.

chrF with sacrebleu's defaults (character 1- to 6-grams, no word n-grams, β = 2, white space
removed as Python's ``str.split`` does, effective-order averaging, one reference per text):
the per-order clipped matches come from the compiled n-gram counter with characters' code
points as token ids (:func:`~evalnb.text.ngram_kernel.packed_clipped_counts`, whose n-grams
are exact integer keys, when the characters seen are few enough to pack six in 63 bits).
"""

from __future__ import annotations

import numpy as np
import polars as pl

from evalnb.text.intern import joined_buffers

__all__ = ["chrf"]

_EPS = 1e-16  # sacrebleu chrF's


def _chars(texts: pl.Series, order: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Return the texts' characters without white space (as Python's split): ids, lengths, top.

    Read straight from the column's UTF-8 bytes in one compiled parallel pass
    (:func:`evalnb.text.utf8.char_ids`; encoding the column to UTF-32 and dropping white
    space in a sequential pass took 45 ms of chrF's 135 at 20k sentence pairs). Characters
    below U+0400 keep their code point (+ 1) as id; the others are numbered after them, so
    the ids stay small enough to pack ``order`` of them in 63 bits whenever they can.
    """
    from evalnb.text.utf8 import NARROW, char_ids  # noqa: PLC0415 - compiles on first use

    data, offsets = joined_buffers([texts.to_arrow()])
    limit = int((2**63 - 1) ** (1 / order)) - 1 - NARROW  # wide characters that still pack
    ids, kept, top = char_ids(data, offsets[:-1], offsets[1:], max(limit, 0))
    return ids, kept, int(top)


def chrf(
    response: pl.Series, reference: pl.Series, *, beta: float = 2.0, order: int = 6
) -> np.ndarray:
    """Return sacrebleu's chrF of each pair (characters only, effective order), in [0, 1].

    Characters are the tokens of the compiled n-gram counter. A text that is empty or only
    white space scores 0 (sacrebleu would score it too; ragas returns 0 before calling it).
    """
    from evalnb.text.ngram_kernel import (  # noqa: PLC0415 - compiles on first use
        clipped_counts,
        packed_clipped_counts,
    )

    n = len(response)
    # One pass over both columns: the hypotheses' and references' ids share one vocabulary.
    ids, both_len, top = _chars(pl.concat([response, reference]), order)
    h_len, r_len = both_len[:n], both_len[n:]
    h_off = np.concatenate([[0], np.cumsum(h_len)])
    r_off = np.concatenate([[0], np.cumsum(r_len)]) + h_off[-1]
    # The n-grams are exact integer keys when (top + 1) ** order fits 63 bits.
    if (top + 1) ** order < 2**63:
        match, hyp_count = packed_clipped_counts(
            ids, h_off[:-1], h_off[1:], r_off[:-1], r_off[1:], order, top + 1
        )
    else:  # thousands of distinct characters: the general counter
        match, hyp_count, _ = clipped_counts(
            ids,
            h_off[:-1],
            h_off[1:],
            r_off[:-1],
            r_off[1:],
            np.arange(n + 1, dtype=np.int64),
            order,
        )
    match = match.astype(np.float64)
    orders = np.arange(1, order + 1)
    ref_count = np.maximum(r_len[:, None] - orders[None, :] + 1, 0).astype(np.float64)
    hyp_total = np.where(ref_count > 0, hyp_count, 0).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        prec = np.where(hyp_total > 0, match / np.maximum(hyp_total, 1), _EPS)
        rec = np.where(ref_count > 0, match / np.maximum(ref_count, 1), _EPS)
    eff = (hyp_total > 0) & (ref_count > 0)
    k = eff.sum(axis=1)
    avg_p = np.where(k > 0, (prec * eff).sum(axis=1) / np.maximum(k, 1), 0.0)
    avg_r = np.where(k > 0, (rec * eff).sum(axis=1) / np.maximum(k, 1), 0.0)
    f2 = beta**2
    with np.errstate(divide="ignore", invalid="ignore"):
        score = np.where(avg_p + avg_r > 0, (1 + f2) * avg_p * avg_r / (f2 * avg_p + avg_r), 0.0)
    # Python's strip() and split() drop the same white space: nothing left is empty.
    return np.where((h_len == 0) | (r_len == 0), 0.0, score)
