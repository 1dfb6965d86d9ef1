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

    Rows, parse failures (and their rate), failed judge calls, replies the host cut off at
    its token limit (``truncated``: resent once with twice ``max_tokens``), rows whose replies
    ignored the contract the server honoured when probed (``contract_drift``), tokens and
    cost, the format
    contract the replies were held to, how many needed a salvage or a repair turn (and how
    many repairs worked), read from the ``detail`` the judges store with each score.
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
                "contract": pl.String,
                "repair": pl.String,
                "truncated": pl.Boolean,
                "contract_drift": pl.String,
                "salvages": pl.List(pl.String),
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
            truncated=pl.col("truncated").fill_null(value=False).sum(),
            contract_drift=pl.col("contract_drift").is_not_null().sum(),
            prompt_tokens=pl.col("prompt_tokens").sum(),
            completion_tokens=pl.col("completion_tokens").sum(),
            cost=pl.col("cost").sum(),
            contract=pl.col("contract").drop_nulls().unique().sort().str.join(", "),
            salvaged=(pl.col("salvages").list.len() > 0).fill_null(value=False).sum(),
            repairs=pl.col("repair").is_not_null().sum(),
            repairs_fixed=(pl.col("repair") == "fixed").fill_null(value=False).sum(),
        )
        .with_columns(parse_failure_rate=pl.col("parse_failures") / pl.col("rows"))
        .sort("evaluator", "model")
    )
