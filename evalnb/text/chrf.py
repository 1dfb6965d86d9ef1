"""sacrebleu's chrF over whole columns: character n-grams counted by the compiled counter.

chrF with sacrebleu's defaults (character 1- to 6-grams, no word n-grams, β = 2, white space
removed as Python's ``str.split`` does, effective-order averaging, one reference per text):
the per-order clipped matches come from :func:`evalnb.text.ngram_kernel.clipped_counts`
with characters' code points as token ids.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import polars as pl

__all__ = ["chrf"]

_EPS = 1e-16  # sacrebleu chrF's


def _chars(texts: pl.Series) -> tuple[np.ndarray, np.ndarray]:
    """Return the texts' characters without white space (as Python's split), as code points.

    One join and one UTF-32 encoding for the whole column: the code points are the ids the
    n-gram counter hashes, with no per-character string made.
    """
    stripped = texts.fill_null("").str.replace_all(r"[\s\x1c-\x1f]", "")
    lens = stripped.str.len_chars().to_numpy().astype(np.int64)
    points = np.frombuffer("".join(stripped.to_list()).encode("utf-32-le"), dtype=np.uint32)
    return points.astype(np.int64), lens


def chrf(
    response: pl.Series, reference: pl.Series, *, beta: float = 2.0, order: int = 6
) -> np.ndarray:
    """Return sacrebleu's chrF of each pair (characters only, effective order), in [0, 1].

    Characters are the tokens of the compiled n-gram counter. A text that is empty or only
    white space scores 0 (sacrebleu would score it too; ragas returns 0 before calling it).
    """
    from evalnb.text.ngram_kernel import clipped_counts  # noqa: PLC0415 - compiles on first use

    h_chars, h_len = _chars(response)
    r_chars, r_len = _chars(reference)
    ids = np.concatenate([h_chars, r_chars])
    h_off = np.concatenate([[0], np.cumsum(h_len)])
    r_off = np.concatenate([[0], np.cumsum(r_len)]) + h_off[-1]
    n = h_len.size
    match, hyp_count, _ = clipped_counts(
        ids, h_off[:-1], h_off[1:], r_off[:-1], r_off[1:], np.arange(n + 1, dtype=np.int64), order
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
    empty = (response.fill_null("").str.strip_chars() == "") | (
        reference.fill_null("").str.strip_chars() == ""
    )
    return np.where(empty.to_numpy(), 0.0, score)
