"""ROUGE-1/2/L (h2o_semantics.md §9), rouge-score compatible, over whole columns.

rouge-score's tokenizer (lower-case, ``[a-z0-9]`` runs, Porter stems of tokens longer than
three characters) runs as Polars passes plus one stemming call per distinct token; n-gram
overlaps come from the same compiled kernel as BLEU and LCS from a compiled DP. With several
expected answers each metric keeps the reference with the best F-measure, as
``RougeScorer.score_multi`` does.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, ClassVar

import numpy as np
import polars as pl
import pyarrow as pa

from evalnb._evaluator import (
    Context,
    Evaluator,
    MetricSpec,
    Param,
    register,
    result_frame,
    threshold_param,
)
from evalnb._ngram import _global_bits, _ids, _offsets

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["Rouge", "rouge_scores", "tokenize_rouge", "tokenize_rouge_many"]


def tokenize_rouge(texts: pl.Series, *, stem: bool) -> pl.Series:
    """Tokenize like rouge-score's ``DefaultTokenizer``."""
    return tokenize_rouge_many(texts, stem=stem)[0]


def tokenize_rouge_many(*columns: pl.Series, stem: bool) -> list[pl.Series]:
    """Tokenize several columns; with ``stem``, each distinct token is stemmed once."""
    # rouge-score lower-cases, turns every run outside [a-z0-9] into a space and splits:
    # the tokens are exactly the [a-z0-9] runs of the lower-cased text.
    frames = [
        pl.LazyFrame({"t": c.fill_null("")}).select(
            pl.col("t").str.to_lowercase().str.extract_all(r"[a-z0-9]+").fill_null([])
        )
        for c in columns
    ]
    tokens = [f.to_series() for f in pl.collect_all(frames)]
    if not stem:
        return tokens
    from nltk.stem import porter  # noqa: PLC0415 - only when stemming

    stemmer = porter.PorterStemmer()
    unique = pl.concat([t.explode().drop_nulls() for t in tokens]).unique()
    stems = pl.Series(
        [stemmer.stem(t) if len(t) > 3 else t for t in unique.to_list()], dtype=pl.String
    )
    return [_stemmed(t, unique, stems) for t in tokens]


def _stemmed(tokens: pl.Series, unique: pl.Series, stems: pl.Series) -> pl.Series:
    lengths = tokens.list.len().to_numpy()
    flat = tokens.explode(empty_as_null=False).drop_nulls() if len(tokens) else tokens.explode()
    stemmed = flat.replace_strict(unique, stems)
    # rouge-score drops tokens the stemmer left outside [a-z0-9] (e.g. empty ones).
    keep = stemmed.str.contains(r"^[a-z0-9]+$").to_numpy()
    row = np.repeat(np.arange(len(tokens)), lengths)
    kept = np.bincount(row[keep], minlength=len(tokens))
    offsets = np.concatenate([[0], np.cumsum(kept)]).astype(np.int64)
    values = stemmed.filter(pl.Series(keep)).to_arrow()
    nested = pl.from_arrow(pa.LargeListArray.from_arrays(pa.array(offsets), values))
    assert isinstance(nested, pl.Series)
    return nested


def _f(p: np.ndarray, r: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(p + r > 0, 2 * p * r / np.where(p + r > 0, p + r, 1.0), 0.0)


def rouge_scores(pred: pl.Series, targets: pl.Series) -> dict[str, np.ndarray]:
    """F-measures of ROUGE-1, -2 and -L for token lists ``pred[i]`` vs ``targets[i]``."""
    from evalnb._ngram_kernel import clipped_counts, lcs_lengths  # noqa: PLC0415

    both = pl.concat([pred.explode().drop_nulls(), targets.explode().drop_nulls()])
    ids = _ids(both)
    n_pred = int(pred.list.len().sum())
    p_ids, t_ids = ids[:n_pred], ids[n_pred:]
    p_off, t_off = _offsets(pred.list.len()), _offsets(targets.list.len())
    one_ref = np.arange(len(targets) + 1, dtype=np.int64)
    overlap, _, _ = clipped_counts(p_ids, p_off, t_ids, t_off, one_ref, 2, _global_bits(ids, 2))
    p_len = np.diff(p_off).astype(np.float64)
    t_len = np.diff(t_off).astype(np.float64)
    out: dict[str, np.ndarray] = {}
    for n in (1, 2):
        inter = overlap[:, n - 1].astype(np.float64)
        precision = inter / np.maximum(p_len - n + 1, 1)
        recall = inter / np.maximum(t_len - n + 1, 1)
        out[f"rouge_{n}"] = _f(precision, recall)
    lcs = lcs_lengths(p_ids, p_off, t_ids, t_off).astype(np.float64)
    empty = (p_len == 0) | (t_len == 0)
    out["rouge_l"] = np.where(
        empty, 0.0, _f(lcs / np.maximum(p_len, 1), lcs / np.maximum(t_len, 1))
    )
    return out


@register
class Rouge(Evaluator):
    """Overlap of n-grams and of the longest common subsequence with the expected answer."""

    id = "rouge"
    title = "ROUGE"
    domain = "summarization"
    description = (
        "ROUGE-1, ROUGE-2 and ROUGE-L F-measures of the answer against the expected answers "
        "(rouge-score compatible; the best reference counts)."
    )
    requires = ("actual", "expected")
    metrics = (
        MetricSpec("rouge_1", "ROUGE-1", "Unigram overlap F-measure.", threshold=0.75),
        MetricSpec("rouge_2", "ROUGE-2", "Bigram overlap F-measure.", threshold=0.75),
        MetricSpec("rouge_l", "ROUGE-L", "Longest common subsequence F-measure.",
                   threshold=0.75, primary=True),
    )  # fmt: skip
    params: ClassVar[tuple[Param, ...]] = (
        Param("use_stemmer", bool, default=True, description="Porter-stem tokens (as H2O)"),
        threshold_param(0.75, "rouge_l"),
    )  # fmt: skip

    def score(
        self,
        rows: pl.DataFrame,
        params: Mapping[str, object],
        ctx: Context,  # noqa: ARG002 - needs no shared service
    ) -> pl.DataFrame:
        """Score every (row, reference) pair, then keep each row's best reference."""
        stem = bool(params["use_stemmer"])
        counts = rows["expected"].list.len().fill_null(0).to_numpy()
        row_of = np.repeat(np.arange(rows.height), counts)
        targets, preds = tokenize_rouge_many(
            rows["expected"].fill_null([]).explode().drop_nulls(), rows["actual"], stem=stem
        )
        preds = preds[row_of]
        per_ref = rouge_scores(preds, targets) if len(row_of) else {}
        errored = rows["error"].is_not_null().to_numpy()
        detail = np.full(rows.height, None, dtype=object)
        detail[errored] = json.dumps({"reason": "the model host failed to answer: worst value"})
        detail[counts == 0] = json.dumps({"reason": "no expected answer to compare with"})
        values: dict[str, np.ndarray] = {}
        for spec in self.metrics:
            best = np.full(rows.height, np.nan)
            if len(row_of):
                # rouge-score keeps the first reference with the highest F-measure.
                np.fmax.at(best, row_of, per_ref[spec.key])
            values[spec.key] = np.where(errored, 0.0, best)
        return result_frame(rows, values, detail.tolist())
