"""What the LLM judges cost and how often their replies could not be read."""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

from evalnb.evaluation.catalog import catalog

if TYPE_CHECKING:
    from evalnb.lab.core import LabCore

__all__ = ["judge_report"]


def judge_report(lab: LabCore) -> pl.DataFrame:
    """Summarise the judges per evaluator and model.

    Rows, parse failures (and their rate), failed judge calls, tokens and cost, read from
    the ``detail`` the judges store with each score.
    """
    judges = catalog().filter(pl.col("judge")).select("id", "primary")
    rows = lab.scores.join(judges, left_on=["evaluator", "metric"], right_on=["id", "primary"])
    detail = pl.col("detail").str.json_decode(
        pl.Struct(
            {
                "parse_failed": pl.Boolean,
                "judge_error": pl.Boolean,
                "cost": pl.Float64,
                "prompt_tokens": pl.Int64,
                "completion_tokens": pl.Int64,
            }
        )
    )
    return (
        rows.with_columns(d=detail)
        .unnest("d")
        .group_by("evaluator", "model")
        .agg(
            rows=pl.len(),
            parse_failures=pl.col("parse_failed").fill_null(value=False).sum(),
            judge_errors=pl.col("judge_error").fill_null(value=False).sum(),
            prompt_tokens=pl.col("prompt_tokens").sum(),
            completion_tokens=pl.col("completion_tokens").sum(),
            cost=pl.col("cost").sum(),
        )
        .with_columns(parse_failure_rate=pl.col("parse_failures") / pl.col("rows"))
        .sort("evaluator", "model")
    )
