"""Looping detection.

Repeated sentences, the longest repeated substring and the compressibility of the answer.
"""

from __future__ import annotations

import json
import zlib
from typing import TYPE_CHECKING, ClassVar

import numpy as np
import polars as pl

from evalnb.evaluation.base import (
    Context,
    Evaluator,
    MetricSpec,
    Param,
    per_distinct,
    register,
    result_frame,
    threshold_param,
)
from evalnb.text.repeats import longest_repeat
from evalnb.text.sentences import split_sentences

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["Looping", "looping_metrics"]


def looping_metrics(answer: str) -> tuple[float, float, float, dict[str, object]]:
    """(unique_sentences, longest_repeated_substring, compression_ratio, detail) of an answer.

    A single-sentence answer has nothing repeated and scores 1.0 on ``unique_sentences``
    (H2O gives 0 there); an answer with no sentence of 10+ characters also scores 1.0.
    """
    sentences = split_sentences([answer], min_chars=9)[0]
    distinct = len(set(sentences))
    unique = distinct / len(sentences) if sentences else 1.0
    repeat = longest_repeat(answer)
    count = answer.count(repeat) if repeat else 0
    longest = count * len(repeat) / len(answer) if repeat else 0.0
    data = answer.encode("utf-8", "surrogatepass")
    ratio = min(1.0, len(zlib.compress(data, 9)) / len(data))
    detail: dict[str, object] = {}
    if sentences and distinct < len(sentences):
        top = max(set(sentences), key=sentences.count)
        detail["most_common_sentence"] = {"text": top, "repetitions": sentences.count(top)}
    if repeat:
        detail["longest_repeated_substring"] = {"text": repeat, "instances": count}
    return unique, longest, ratio, detail


_RESULT = {"u": pl.Float64(), "lr": pl.Float64(), "cr": pl.Float64(), "detail": pl.String()}


@register
class Looping(Evaluator):
    """Detect answers that go round in circles."""

    id = "looping_detection"
    title = "Looping detection"
    domain = "generation"
    description = (
        "Share of distinct sentences, share of the answer taken by its longest repeated "
        "substring, and zlib compression ratio."
    )
    requires = ("actual",)
    metrics = (
        MetricSpec(
            "unique_sentences",
            "Unique sentences",
            "Distinct sentences / sentences.",
            threshold=0.75,
            primary=True,
        ),
        MetricSpec(
            "longest_repeated_substring",
            "Longest repeated substring",
            "Occurrences × length of the longest repeat / answer length.",
            higher_is_better=False,
            threshold=0.75,
        ),
        MetricSpec(
            "compression_ratio",
            "Compression ratio",
            "zlib-compressed / raw size (low: repetitive).",
            threshold=0.75,
        ),
    )
    params: ClassVar[tuple[Param, ...]] = (threshold_param(0.75, "unique_sentences"),)

    def score(
        self,
        rows: pl.DataFrame,
        params: Mapping[str, object],  # noqa: ARG002 - no scoring parameter
        ctx: Context,  # noqa: ARG002 - needs no shared service
    ) -> pl.DataFrame:
        """Each distinct answer once; empty answers and host errors are not scored."""
        error = rows["error"]
        failed = error.is_not_null() | (rows["actual"].fill_null("") == "")
        answers = pl.select(pl.when(~failed).then(rows["actual"])).to_series()

        def metrics(answer: str) -> tuple[float, float, float, str | None]:
            u, lr, cr, detail = looping_metrics(answer)
            return u, lr, cr, json.dumps(detail) if detail else None

        found = per_distinct(answers, metrics, _RESULT)
        why = pl.select(
            pl.when(error.is_not_null())
            .then(pl.lit('{"reason": "not scored: the model host failed to answer"}'))
            .otherwise(pl.lit('{"reason": "not scored: the answer is empty"}'))
        ).to_series()
        bad = failed.to_numpy()
        # No answer is no loop: left unscored rather than given the worst values (H2O's),
        # which would count a failed call as a looping answer.
        columns = {
            spec.key: np.where(bad, np.nan, found[key].to_numpy())
            for spec, key in zip(self.metrics, ("u", "lr", "cr"), strict=True)
        }
        details = found["detail"].zip_with(~failed, why)
        return result_frame(rows, columns, details.to_list())
