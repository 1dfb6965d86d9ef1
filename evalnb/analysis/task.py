"""The task a lab holds, where it decides how a metric's problems and insights are typed.

BLEU and ROUGE sit in H2O's summarization domain, yet they compare any answer with its
expected answer: in a question-answering lab their failures are about accuracy, and calling
them summarization problems (with a summarization action) misleads. They take the domain of
the lab's task instead: summarization when at least half its prompts ask for a summary,
generation otherwise.
"""

from __future__ import annotations

from typing import overload

import polars as pl

__all__ = ["OVERLAP", "summarizing", "with_task_domain"]

OVERLAP = frozenset({"bleu", "rouge"})
_SUMMARY_ASK = r"(?i)\bsummar(?:y|ies|i[sz]e|i[sz]ing|i[sz]ation)\b"


def summarizing(cases: pl.DataFrame) -> bool:
    """Whether at least half the lab's prompts ask for a summary."""
    if cases.is_empty():
        return False
    asks = cases.get_column("prompt").fill_null("").str.contains(_SUMMARY_ASK)
    return bool(asks.sum() * 2 >= asks.len())


@overload
def with_task_domain(verdicts: pl.DataFrame, cases: pl.DataFrame) -> pl.DataFrame: ...
@overload
def with_task_domain(verdicts: pl.LazyFrame, cases: pl.DataFrame) -> pl.LazyFrame: ...
@overload
def with_task_domain(
    verdicts: pl.DataFrame | pl.LazyFrame, cases: pl.DataFrame
) -> pl.DataFrame | pl.LazyFrame: ...
def with_task_domain(
    verdicts: pl.DataFrame | pl.LazyFrame, cases: pl.DataFrame
) -> pl.DataFrame | pl.LazyFrame:
    """Return ``verdicts`` (a frame or a query) with the overlap metrics' domain set by the lab's task."""
    if isinstance(verdicts, pl.DataFrame) and verdicts.is_empty():
        return verdicts
    domain = "summarization" if summarizing(cases) else "generation"
    return verdicts.with_columns(
        domain=pl.when(pl.col("evaluator").is_in(list(OVERLAP)))
        .then(pl.lit(domain))
        .otherwise(pl.col("domain"))
    )
