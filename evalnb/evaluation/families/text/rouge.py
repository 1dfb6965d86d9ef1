"""ROUGE-1/2/L, rouge-score compatible, over whole columns.

rouge-score's tokenizer (lower-case, ``[a-z0-9]`` runs, Porter stems of tokens longer than
three characters) runs as Polars passes, a compiled split to token ids and one stemming call
per distinct token; n-gram overlaps come from the same compiled kernel as BLEU and LCS from
a compiled DP. With several
expected answers each metric keeps the reference with the best F-measure, as
``RougeScorer.score_multi`` does. On a case whose text is mostly outside ``a``-``z`` (Chinese,
Russian, Arabic …) rouge-score finds no words: the row says "not meaningful for <language>".

``rouge_multilingual`` is our own ROUGE over each language's words
(:func:`~evalnb.text.multilingual.rouge_words`), under its own metric names.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, ClassVar

import numpy as np
import polars as pl

from evalnb.evaluation.base import (
    BLOCK_ROWS,
    Context,
    Evaluator,
    MetricSpec,
    Param,
    register,
    result_frame,
    threshold_param,
)
from evalnb.evaluation.families.text.meaningful import not_meaningful
from evalnb.text.language import row_languages
from evalnb.text.multilingual import (
    grouped_token_ids,
    languages_by,
    rouge_words,
    rouge_words_tokenizer,
)
from evalnb.text.rouge_tokens import rouge_token_ids

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from evalnb.text.ngram import TokenIds

__all__ = [
    "Rouge",
    "RougeMultilingual",
    "best_reference_scores",
    "id_rouge_parts",
    "id_rouge_scores",
]


def _f(p: np.ndarray, r: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(p + r > 0, 2 * p * r / np.where(p + r > 0, p + r, 1.0), 0.0)


def id_rouge_scores(
    tokens: TokenIds, p_lo: np.ndarray, p_hi: np.ndarray, t_lo: np.ndarray, t_hi: np.ndarray
) -> dict[str, np.ndarray]:
    """F-measures of ROUGE-1, -2 and -L of ``ids[p_lo[i]:p_hi[i]]`` vs the ``t`` span."""
    parts = id_rouge_parts(tokens, p_lo, p_hi, t_lo, t_hi)
    return {key: f for key, (_, _, f) in parts.items()}


def id_rouge_parts(
    tokens: TokenIds, p_lo: np.ndarray, p_hi: np.ndarray, t_lo: np.ndarray, t_hi: np.ndarray
) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """(precision, recall, F-measure) of ROUGE-1, -2 and -L, as rouge-score's Score holds."""
    from evalnb.text.ngram_kernel import clipped_counts, lcs_lengths  # noqa: PLC0415

    one_ref = np.arange(p_lo.size + 1, dtype=np.int64)
    overlap, _, _ = clipped_counts(tokens.ids, p_lo, p_hi, t_lo, t_hi, one_ref, 2)
    p_len = (p_hi - p_lo).astype(np.float64)
    t_len = (t_hi - t_lo).astype(np.float64)
    out: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
    for n in (1, 2):
        inter = overlap[:, n - 1].astype(np.float64)
        precision = inter / np.maximum(p_len - n + 1, 1)
        recall = inter / np.maximum(t_len - n + 1, 1)
        out[f"rouge_{n}"] = (precision, recall, _f(precision, recall))
    lcs = lcs_lengths(tokens.ids, p_lo, p_hi, t_lo, t_hi).astype(np.float64)
    empty = (p_len == 0) | (t_len == 0)
    lp = np.where(empty, 0.0, lcs / np.maximum(p_len, 1))
    lr = np.where(empty, 0.0, lcs / np.maximum(t_len, 1))
    out["rouge_l"] = (lp, lr, np.where(empty, 0.0, _f(lp, lr)))
    return out


@register
class Rouge(Evaluator):
    """Overlap of n-grams and of the longest common subsequence with the expected answer."""

    id = "rouge"
    version = "2"  # 2: "not meaningful for <language>" where rouge-score finds no words
    title = "ROUGE"
    domain = "summarization"
    description = (
        "ROUGE-1, ROUGE-2 and ROUGE-L F-measures of the answer against the expected answers "
        "(rouge-score compatible; the best reference counts)."
    )
    requires = ("actual", "expected")
    block_rows = BLOCK_ROWS
    metrics = (
        MetricSpec("rouge_1", "ROUGE-1", "Unigram overlap F-measure.", threshold=0.75),
        MetricSpec("rouge_2", "ROUGE-2", "Bigram overlap F-measure.", threshold=0.75),
        MetricSpec(
            "rouge_l",
            "ROUGE-L",
            "Longest common subsequence F-measure.",
            threshold=0.75,
            primary=True,
        ),
    )
    params: ClassVar[tuple[Param, ...]] = (
        Param("use_stemmer", bool, default=True, description="Porter-stem tokens (as H2O)"),
        threshold_param(0.75, "rouge_l"),
    )

    def score(
        self,
        rows: pl.DataFrame,
        params: Mapping[str, object],
        ctx: Context,  # noqa: ARG002 - needs no shared service
    ) -> pl.DataFrame:
        """Score every (row, reference) pair, then keep each row's best reference."""
        stem = bool(params["use_stemmer"])
        tokens = rouge_token_ids(
            [rows["actual"], rows["expected"].fill_null([]).explode().drop_nulls()], stem=stem
        )
        detail = np.full(rows.height, None, dtype=object)
        # rouge-score keeps a-z and 0-9: on Chinese or Russian text it has no words at all.
        pointless = not_meaningful(rows, "rouge-score's tokenizer (H2O's ROUGE)", latin_only=True)
        for i, reason in pointless.items():
            detail[i] = reason
        values = best_reference_scores(rows, tokens, self.metrics, detail)
        for key in values:
            values[key][list(pointless)] = np.nan
        return result_frame(rows, values, detail.tolist())


def best_reference_scores(
    rows: pl.DataFrame, tokens: TokenIds, metrics: Sequence[MetricSpec], detail: np.ndarray
) -> dict[str, np.ndarray]:
    """ROUGE-1, -2 and -L of each row's best reference (``metrics`` name them in that order).

    ``tokens`` holds the answers (column 0) and every reference, flat (column 1). Rows
    without a reference stay unscored and rows whose model host failed score 0; ``detail``
    gets both reasons.
    """
    counts = rows["expected"].list.len().fill_null(0).to_numpy()
    row_of = np.repeat(np.arange(rows.height), counts)
    p_off, t_off = tokens.offsets
    per_ref = (
        id_rouge_scores(tokens, p_off[:-1][row_of], p_off[1:][row_of], t_off[:-1], t_off[1:])
        if len(row_of)
        else {}
    )
    errored = rows["error"].is_not_null().to_numpy()
    detail[errored] = json.dumps({"reason": "the model host failed to answer: worst value"})
    detail[counts == 0] = json.dumps({"reason": "no expected answer to compare with"})
    values: dict[str, np.ndarray] = {}
    for spec, part in zip(metrics, ("rouge_1", "rouge_2", "rouge_l"), strict=True):
        best = np.full(rows.height, np.nan)
        if len(row_of):
            # rouge-score keeps the first reference with the highest F-measure.
            np.fmax.at(best, row_of, per_ref[part])
        values[spec.key] = np.where(errored, 0.0, best)
    return values


MAX_TOKENS = 10_000
"""Words of one text ``rouge_multilingual`` scores (the LCS is quadratic in them)."""


@register
class RougeMultilingual(Evaluator):
    """ROUGE over each language's words: segmented Chinese, Japanese and Korean, accents kept."""

    id = "rouge_multilingual"
    version = "2"  # 2: Snowball stems where the language has a stemmer; texts capped
    title = "ROUGE (multilingual)"
    domain = "summarization"
    description = (
        "ROUGE-1, ROUGE-2 and ROUGE-L F-measures over words of the case's language: jieba-rs' "
        "words for Chinese, MeCab's for Japanese and Korean (characters where the segmenter "
        "is not installed, and for Thai and its kin), lower-cased runs of letters, marks "
        "and digits elsewhere (accents kept), reduced to their Snowball stems where the "
        "language has a stemmer (Russian, German, French, Spanish, ... : word forms meet). "
        "Texts longer than 10,000 words are scored on their first 10,000 (the row's detail "
        "says so). Not rouge-score's numbers: rouge-score keeps only a-z and 0-9. The best "
        "reference counts."
    )
    requires = ("actual", "expected")
    block_rows = BLOCK_ROWS
    metrics = (
        MetricSpec("rouge_1_ml", "ROUGE-1 (multilingual)", "Unigram F-measure.", threshold=0.5),
        MetricSpec("rouge_2_ml", "ROUGE-2 (multilingual)", "Bigram F-measure.", threshold=0.3),
        MetricSpec(
            "rouge_l_ml",
            "ROUGE-L (multilingual)",
            "Longest common subsequence F-measure.",
            threshold=0.5,
            primary=True,
        ),
    )
    params: ClassVar[tuple[Param, ...]] = (threshold_param(0.5, "rouge_l_ml"),)

    def score(
        self,
        rows: pl.DataFrame,
        params: Mapping[str, object],  # noqa: ARG002 - only the threshold
        ctx: Context,  # noqa: ARG002 - needs no shared service
    ) -> pl.DataFrame:
        """Tokenize each row by its language, then score like ROUGE."""
        actual = rows["actual"].cast(pl.String)
        expected = rows["expected"]
        counts = expected.list.len().fill_null(0).to_numpy()
        refs = expected.fill_null([]).explode().drop_nulls().cast(pl.String)
        languages = row_languages(rows, latin_is_enough=True)
        groups = languages_by(languages, rouge_words_tokenizer)
        detail = np.full(rows.height, None, dtype=object)
        for name, where in groups.items():
            if name != "words":  # the tokenizer of every other row
                langs = languages.gather(where)
                notes = {
                    lang: json.dumps({"tokenizer": name, "language": lang})
                    for lang in langs.unique().to_list()
                }
                detail[where] = [notes[lang] for lang in langs.to_list()]
        cut: list[str] = []

        def capped(texts: pl.Series, tokenizer: str) -> pl.Series:
            # The LCS is quadratic: a 1 M-character answer took minutes. Texts past the cap
            # are scored on their first MAX_TOKENS words, and their rows say so.
            words = rouge_words(texts, tokenizer)
            over = (words.str.count_matches(" ") >= MAX_TOKENS).fill_null(value=False)
            if not over.any():
                return words
            cut.extend(texts.filter(over).to_list())
            short = words.filter(over).str.split(" ").list.head(MAX_TOKENS).list.join(" ")
            return words.scatter(np.flatnonzero(over.to_numpy()), short)

        tokens = grouped_token_ids(actual, refs, counts, groups, capped)
        if cut:
            long_row = actual.is_in(cut) | expected.list.eval(pl.element().is_in(cut)).list.any()
            for i in np.flatnonzero(long_row.fill_null(value=False).to_numpy()):
                note = json.loads(detail[i]) if detail[i] else {}
                detail[i] = json.dumps(note | {"truncated_to_tokens": MAX_TOKENS})
        values = best_reference_scores(rows, tokens, self.metrics, detail)
        return result_frame(rows, values, detail.tolist())
