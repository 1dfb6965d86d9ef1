"""Weakness detection tables: a metric by topic, by question type, and on their grid.

Built once per (lab, evaluator, metric, model filter) into a :class:`WeaknessIndex`; the
widget's interactions are filters of its small per-cell table. Intervals are normal
approximations of the mean (mean ± 1.96·sd/√n), which is what a grid of many cells over
up to millions of rows can afford; cells under ``min_n`` cases are flagged, not hidden.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from evalnb._verdicts import verdicts

if TYPE_CHECKING:
    from evalnb._lab import Lab

__all__ = ["WeaknessIndex", "cell_dots", "grid_cells", "univariate", "weakness_index", "weaknesses"]

_Z = 1.959963984540054
NO_VALUE = "(none)"


@dataclass(frozen=True)
class WeaknessIndex:
    """Rows of one metric with their case's topic and question type, and the metric's spec."""

    rows: pl.DataFrame
    evaluator: str
    metric: str
    threshold: float | None
    higher_is_better: bool
    min_n: int


def weakness_index(lab: Lab, evaluator: str, metric: str, *, models: list[str] | None = None,
                   min_n: int = 5) -> WeaknessIndex:  # fmt: skip
    """Join the metric's scores to ``cases.topic`` / ``question_type`` (missing → "(none)")."""
    v = verdicts(
        lab.scores.filter((pl.col("evaluator") == evaluator) & (pl.col("metric") == metric)),
        lab.metrics, lab.thresholds,
    )  # fmt: skip
    if v.is_empty():
        msg = f"no scores of {evaluator}/{metric} in this lab; evaluate it first"
        raise KeyError(msg)
    if models:
        v = v.filter(pl.col("model").is_in(models))
    rows = (
        v.drop_nulls("value")
        .join(lab.cases.select("case_id", "topic", "question_type"), on="case_id", how="left")
        .select(
            "case_id", "model", "sample", "value", "passed",
            topic=pl.col("topic").fill_null(NO_VALUE),
            question_type=pl.col("question_type").fill_null(NO_VALUE),
        )
    )  # fmt: skip
    thr = v["threshold"][0]
    return WeaknessIndex(rows, evaluator, metric, thr if thr is not None and np.isfinite(thr) else None,
                         bool(v["higher_is_better"][0]), min_n)  # fmt: skip


def _stats(rows: pl.DataFrame, by: list[str], idx: WeaknessIndex) -> pl.DataFrame:
    sd = pl.col("value").std().fill_null(0.0)
    half = _Z * sd / pl.len().sqrt()
    out = rows.group_by(by).agg(
        n=pl.len().cast(pl.Int32),
        mean=pl.col("value").mean(),
        ci_low=pl.col("value").mean() - half,
        ci_high=pl.col("value").mean() + half,
        pass_rate=pl.col("passed").cast(pl.Float64).mean(),
        q10=pl.col("value").quantile(0.1), median=pl.col("value").median(),
        q90=pl.col("value").quantile(0.9),
    ).with_columns(few=pl.col("n") < idx.min_n)  # fmt: skip
    if idx.threshold is None:
        return out.with_columns(weak=pl.lit(False))
    beyond = (
        pl.col("ci_high") < idx.threshold
        if idx.higher_is_better
        else pl.col("ci_low") > idx.threshold
    )
    return out.with_columns(weak=beyond & ~pl.col("few"))


def univariate(idx: WeaknessIndex, by: str) -> pl.DataFrame:
    """Per topic (``by="topic"``) or question type: n, mean, CI, pass rate, quantiles, worst first."""
    if by not in ("topic", "question_type"):
        msg = f"by must be 'topic' or 'question_type'; got {by!r}"
        raise ValueError(msg)
    return (
        _stats(idx.rows, [by], idx)
        .sort("mean", descending=not idx.higher_is_better)
        .rename({by: "group"})
    )


def grid_cells(idx: WeaknessIndex) -> pl.DataFrame:
    """One row per (topic, question type): n, mean, CI, pass rate, ``few``, ``weak``."""
    return _stats(idx.rows, ["topic", "question_type"], idx).sort("topic", "question_type")


def weaknesses(idx: WeaknessIndex, top: int = 5) -> pl.DataFrame:
    """Return the worst cells, worst mean first.

    A cell is weak when its whole interval lies on the failing side of the threshold and it
    has enough cases; without a threshold, the ``top`` lowest means with enough cases.
    """
    cells = grid_cells(idx).filter(~pl.col("few"))
    if idx.threshold is not None:
        cells = cells.filter(pl.col("weak"))
    return cells.sort("mean", descending=not idx.higher_is_better).head(top)


def cell_dots(idx: WeaknessIndex, *, max_dots: int = 3000, seed: int = 0) -> pl.DataFrame:
    """Return the cases drawn as the grid's dots.

    All of them, or a sample of about ``max_dots`` stratified by cell (every cell keeps at
    least one dot).
    """
    rows = idx.rows
    if rows.height > max_dots:
        share = max_dots / rows.height
        rows = (
            rows.with_columns(
                _r=pl.int_range(pl.len()).shuffle(seed=seed).over("topic", "question_type"),
                _n=pl.len().over("topic", "question_type"),
            )
            .filter(pl.col("_r") < (pl.col("_n") * share).ceil().clip(lower_bound=1))
            .drop("_r", "_n")
        )
    return rows.select("topic", "question_type", "case_id", "model", pl.col("sample").cast(pl.Int32),
                       "value", "passed")  # fmt: skip
