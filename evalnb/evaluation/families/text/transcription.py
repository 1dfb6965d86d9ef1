"""Judge-free metrics of transcripts and document answers: WER, CER (jiwer's), ANLS (DocVQA's).

A speech model's transcript, an OCR model's text or a document-VQA answer is scored against
the case's expected answer with edit distances, every row in one batched call
(:mod:`evalnb.text.edit_rates` says exactly what is counted, and how jiwer and DocVQA count
it). ``wer`` and ``cer`` take the first expected answer as the reference (jiwer compares one
reference to one hypothesis); ``anls`` takes the best over every expected answer, as DocVQA
lists several. Each row's detail keeps the edit count and the reference's length, so a
corpus-level rate (jiwer's on lists: errors over words, summed) is one division away:
:func:`corpus_rate`.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import TYPE_CHECKING, ClassVar

import numpy as np
import polars as pl

from evalnb.evaluation.base import (
    BLOCK_ROWS,
    Evaluator,
    MetricSpec,
    Param,
    reasons,
    register,
    result_frame,
    threshold_param,
)
from evalnb.text.edit_rates import anls_scores, char_errors, word_errors

if TYPE_CHECKING:
    from collections.abc import Mapping

    from evalnb.evaluation.base import Context

__all__ = ["Anls", "Cer", "Wer", "corpus_rate"]

_HOST = "the model host failed to answer"
_NO_REFERENCE = "no expected answer to compare the transcript with"
_NORMALIZE = Param(
    "normalize",
    str,
    default="none",
    choices=("none", "standard"),
    description=(
        "'none': jiwer's defaults (white space only); 'standard': jiwer's wer_standardize "
        "(lower case, English contractions expanded, [noise] and <unk> removed)"
    ),
)


def corpus_rate(scores: pl.DataFrame) -> float:
    """Return the corpus-level rate of ``wer`` or ``cer`` rows: all edits over all lengths.

    What ``jiwer.wer(references, hypotheses)`` gives for the lists, where a lab's mean is
    the mean of the rows' rates.
    """
    parsed = (
        scores.get_column("detail")
        .drop_nulls()
        .str.json_decode(pl.Struct({"errors": pl.Int64, "length": pl.Int64}))
    )
    errors = int(parsed.struct.field("errors").sum() or 0)
    length = int(parsed.struct.field("length").sum() or 0)
    return errors / length if length else float(errors)


class _EditRate(Evaluator):
    """Edit rate of the answer against the first expected answer."""

    requires = ("actual", "expected")
    block_rows = BLOCK_ROWS
    key: ClassVar[str]

    @abstractmethod
    def count(
        self, refs: list[str | None], hyps: list[str | None], normalize: str
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Return the rates, edit counts and reference lengths."""

    def score(self, rows: pl.DataFrame, params: Mapping[str, object], ctx: Context) -> pl.DataFrame:
        """Count every pair's edits in one call; keep the counts in the detail."""
        del ctx
        reference = rows["expected"].list.first()
        ok = (reference.is_not_null() & rows["error"].is_null()).to_numpy()
        value = np.full(rows.height, np.nan)
        details: list[str | None] = [None] * rows.height
        where = np.flatnonzero(ok)
        if where.size:
            refs = reference.gather(where).to_list()
            hyps = rows["actual"].gather(where).to_list()
            rate, errors, lengths = self.count(refs, hyps, str(params["normalize"]))
            value[where] = rate
            # the counts as JSON, one column pass (a row loop cost a second per million rows)
            counted = pl.select(
                pl.concat_str(
                    pl.lit('{"errors": '),
                    pl.lit(errors).cast(pl.String),
                    pl.lit(', "length": '),
                    pl.lit(lengths).cast(pl.String),
                    pl.lit("}"),
                )
            ).to_series()
            for i, d in zip(where.tolist(), counted.to_list(), strict=True):
                details[i] = d
        errored = rows["error"].is_not_null().to_numpy()
        missing = reference.is_null().to_numpy() & ~errored
        why = reasons(rows.height, (missing, _NO_REFERENCE), (errored, _HOST), base=details)
        return result_frame(rows, {self.key: value}, why)


@register
class Wer(_EditRate):
    """Word error rate, as jiwer counts it."""

    id = key = "wer"
    title = "Word error rate"
    domain = "generation"
    description = (
        "jiwer's WER of the answer against the first expected answer: word edits "
        "(substitutions + deletions + insertions) / reference words; lower is better."
    )
    metrics = (
        MetricSpec(
            "wer",
            "WER",
            "Word edits over the reference's words (jiwer).",
            max=float("inf"),
            higher_is_better=False,
            threshold=0.2,
            primary=True,
        ),
    )
    params: ClassVar[tuple[Param, ...]] = (_NORMALIZE, threshold_param(0.2, "wer"))

    def count(
        self, refs: list[str | None], hyps: list[str | None], normalize: str
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Count word edits."""
        return word_errors(refs, hyps, normalize=normalize)


@register
class Cer(_EditRate):
    """Character error rate, as jiwer counts it."""

    id = key = "cer"
    title = "Character error rate"
    domain = "generation"
    description = (
        "jiwer's CER of the answer against the first expected answer: character edits / "
        "reference characters (spaces count); lower is better."
    )
    metrics = (
        MetricSpec(
            "cer",
            "CER",
            "Character edits over the reference's characters (jiwer).",
            max=float("inf"),
            higher_is_better=False,
            threshold=0.1,
            primary=True,
        ),
    )
    params: ClassVar[tuple[Param, ...]] = (_NORMALIZE, threshold_param(0.1, "cer"))

    def count(
        self, refs: list[str | None], hyps: list[str | None], normalize: str
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Count character edits."""
        return char_errors(refs, hyps, normalize=normalize)


@register
class Anls(Evaluator):
    """ANLS, the document-VQA metric: normalised Levenshtein similarity, thresholded."""

    id = "anls"
    title = "ANLS (document VQA)"
    domain = "generation"
    description = (
        "Average Normalized Levenshtein Similarity (DocVQA, ST-VQA): 1 − edit distance / "
        "the longer text, counted when the distance is under τ, best over the expected answers."
    )
    requires = ("actual", "expected")
    block_rows = BLOCK_ROWS
    metrics = (
        MetricSpec(
            "anls",
            "ANLS",
            "Best normalised Levenshtein similarity to an expected answer (0 under τ).",
            threshold=0.5,
            primary=True,
        ),
    )
    params: ClassVar[tuple[Param, ...]] = (
        Param("tau", float, default=0.5, description="ANLS' threshold τ", low=0.0, high=1.0),
        Param(
            "convention",
            str,
            default="docvqa",
            choices=("docvqa", "lmms_eval"),
            description="DocVQA's definition, or lmms-eval's variant (raw lengths, 1 − τ kept)",
        ),
        threshold_param(0.5, "anls"),
    )

    def score(self, rows: pl.DataFrame, params: Mapping[str, object], ctx: Context) -> pl.DataFrame:
        """Score every (answer, expected answer) pair at once, keep each row's best."""
        del ctx
        refs = [list(e or []) for e in rows["expected"].to_list()]
        value = anls_scores(
            rows["actual"].to_list(),
            refs,
            threshold=float(params["tau"]),  # type: ignore[arg-type]
            convention=str(params["convention"]),
        )
        errored = rows["error"].is_not_null().to_numpy()
        missing = np.array([not r for r in refs]) & ~errored
        value[errored] = np.nan
        why = reasons(rows.height, (missing, _NO_REFERENCE), (errored, _HOST))
        return result_frame(rows, {"anls": value}, why)
