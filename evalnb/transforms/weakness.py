"""Weakness detection tables: a metric by two axes, and on their grid.

The axes are topic and question type by default.
An axis is a case column (``topic``, ``question_type``, ``test_id``, ...) or ``"tool"``: the
tools an agent's run called (a run that called three tools counts in each of their groups;
one that called none is "(none)"), or ``"retrieval"``: per answer, whether its retriever
brought a relevant document into its top 10 (:func:`evalnb.transforms.attribution.retrieval_axis`;
"no qrels" where nothing relevant is judged), so the grid shows where failures are retrieval
misses. Inside the index the two axes keep the columns
``topic`` (rows of the grid) and ``question_type`` (its columns), whatever they hold.

Built once per (lab, evaluator, metric, model filter) into a :class:`WeaknessIndex`; the
widget's interactions are filters of its small per-cell table. A cell's mean has Student's
t interval (mean ± t₀.₉₇₅,ₙ₋₁·sd/√n: wide at small n, as it should be), none below
:data:`INTERVAL_MIN_N` cases (one case is not certainty: its "interval" would be 0–0);
its pass rate has Wilson's interval, honest at small n and at 0 or 100 %. Cells under
``min_n`` cases are flagged, not hidden, and never called weak.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from evalnb.calibration.reliability import wilson_interval
from evalnb.lab.verdicts import finite_or_none, verdicts
from evalnb.text.language import case_languages
from evalnb.transforms.attribution import retrieval_axis

if TYPE_CHECKING:
    from evalnb.lab.core import LabCore

__all__ = [
    "INTERVAL_MIN_N",
    "MEDIA_AXIS",
    "RETRIEVAL_AXIS",
    "TOOL_AXIS",
    "WeaknessIndex",
    "cell_dots",
    "grid_cells",
    "restrict",
    "univariate",
    "weakness_index",
    "weaknesses",
]

INTERVAL_MIN_N = 3
"""Fewer cases than this in a cell: no interval of its mean, and it is never weak."""
_Z = 1.959963984540054
NO_VALUE = "(none)"
TOOL_AXIS = "tool"
MEDIA_AXIS = "media"  # per answer: the kinds of media its case, answer and contexts hold
RETRIEVAL_AXIS = "retrieval"  # per answer: did its retriever bring a relevant document (top 10)
_KEYS = ["case_id", "model", "sample"]


@dataclass(frozen=True)
class WeaknessIndex:
    """Rows of one metric with their case's topic and question type, and the metric's spec."""

    rows: pl.DataFrame
    evaluator: str
    metric: str
    threshold: float | None
    higher_is_better: bool
    min_n: int
    axes: tuple[str, str] = ("topic", "question_type")


def weakness_index(
    lab: LabCore,
    evaluator: str,
    metric: str,
    *,
    models: list[str] | None = None,
    min_n: int = 5,
    axes: tuple[str, str] = ("topic", "question_type"),
) -> WeaknessIndex:
    """Join the metric's scores to the two axes' values (missing → "(none)")."""
    if len(axes) != 2 or axes[0] == axes[1]:
        msg = f"axes names two different axes (case columns or 'tool'); got {axes!r}"
        raise ValueError(msg)
    if min_n < INTERVAL_MIN_N:
        warnings.warn(
            f"min_n={min_n}: cells of fewer than {INTERVAL_MIN_N} cases get no interval and "
            "are never called weak (one case is not certainty)",
            stacklevel=3,
        )
    v = verdicts(lab.metric_scores(evaluator, metric), lab.metrics, lab.thresholds)
    if v.is_empty():
        msg = f"no scores of {evaluator}/{metric} in this lab; evaluate it first"
        raise KeyError(msg)
    if models:
        v = v.filter(pl.col("model").is_in(models))
    rows = v.drop_nulls("value").select(*_KEYS, "value")
    for slot, axis in zip(("topic", "question_type"), axes, strict=True):
        values, on = _axis_values(lab, axis)
        rows = rows.join(values.rename({axis: slot}), on=on, how="left")
    rows = rows.select(
        *_KEYS,
        "value",
        # Categorical: grouping a million rows by two small vocabularies is much faster.
        topic=pl.col("topic").fill_null(NO_VALUE).cast(pl.Categorical),
        question_type=pl.col("question_type").fill_null(NO_VALUE).cast(pl.Categorical),
        # Hashed once here, so sampling dots on every redraw is a cheap filter.
        row_hash=pl.concat_str("case_id", "model", pl.col("sample").cast(pl.String)).hash(0),
    )
    thr = v["threshold"][0]
    return WeaknessIndex(
        rows,
        evaluator,
        metric,
        finite_or_none(thr),
        bool(v["higher_is_better"][0]),
        min_n,
        (axes[0], axes[1]),
    )


def _axis_values(lab: LabCore, axis: str) -> tuple[pl.DataFrame, list[str]]:
    """Return an axis' values by row key (tools) or by case (case columns), and the keys."""
    if axis == RETRIEVAL_AXIS and axis not in lab.cases.columns:
        return retrieval_axis(lab), _KEYS
    if axis == MEDIA_AXIS:
        return media_axis(lab), _KEYS
    if axis == TOOL_AXIS:
        calls = lab.scan("steps").filter(  # steps may be kept on disk
            pl.col("tool_name").is_not_null() & (pl.col("role") == "assistant")
        )
        return calls.select(*_KEYS, tool=pl.col("tool_name")).unique().collect(), _KEYS
    columns = lab.cases.schema
    if axis not in columns or axis == "case_id" or columns[axis] != pl.String:
        usable = sorted(c for c, t in columns.items() if t == pl.String and c != "case_id")
        msg = (
            f"axis {axis!r} is neither 'tool', 'retrieval', 'media' nor a text column of the cases; "
            f"use one of {usable}"
        )
        raise ValueError(msg)
    if axis == "language":  # cases without one get the detected language (nothing is written)
        cases = lab.cases
        return cases.select("case_id", language=case_languages(cases)), ["case_id"]
    return lab.cases.select("case_id", axis), ["case_id"]


def restrict(
    idx: WeaknessIndex, *, models: list[str] | None = None, threshold: float | None = None
) -> WeaknessIndex:
    """Return the index for a subset of models and/or another threshold (no re-join)."""
    rows = idx.rows.filter(pl.col("model").is_in(models)) if models else idx.rows
    return replace(idx, rows=rows, threshold=idx.threshold if threshold is None else threshold)


def _passed(idx: WeaknessIndex) -> pl.Expr:
    if idx.threshold is None:
        return pl.lit(True)
    return (
        pl.col("value") >= idx.threshold
        if idx.higher_is_better
        else pl.col("value") <= idx.threshold
    )


def _stats(rows: pl.DataFrame, by: list[str], idx: WeaknessIndex, *, spread: bool) -> pl.DataFrame:
    aggs = [
        pl.len().cast(pl.Int32).alias("n"),
        pl.col("value").mean().alias("mean"),
        pl.col("value").std().fill_null(0.0).alias("_sd"),
        _passed(idx).cast(pl.Float64).mean().alias("pass_rate"),
    ]
    if spread:  # quantiles are the costly part: only the univariate charts draw them
        aggs += [
            pl.col("value").quantile(0.1).alias("q10"),
            pl.col("value").median().alias("median"),
            pl.col("value").quantile(0.9).alias("q90"),
        ]
    out = rows.group_by(by).agg(aggs).with_columns(pl.col(c).cast(pl.String) for c in by)
    n = out["n"].to_numpy().astype(float)
    from scipy import stats  # noqa: PLC0415 - a second to import; `import evalnb` stays light

    with np.errstate(invalid="ignore", divide="ignore"):
        t = np.where(n >= INTERVAL_MIN_N, stats.t.ppf(0.975, np.maximum(n - 1, 1)), np.nan)
        half = t * out["_sd"].to_numpy() / np.sqrt(np.maximum(n, 1))
    mean = out["mean"].to_numpy()
    pass_low, pass_high = wilson_interval(out["pass_rate"].to_numpy() * n, n, _Z)
    out = out.drop("_sd").with_columns(
        ci_low=pl.Series(mean - half).fill_nan(None),
        ci_high=pl.Series(mean + half).fill_nan(None),
        pass_low=pl.Series(pass_low),
        pass_high=pl.Series(pass_high),
        few=pl.col("n") < max(idx.min_n, INTERVAL_MIN_N),
    )
    if idx.threshold is None:
        return out.with_columns(weak=pl.lit(False))
    beyond = (
        pl.col("ci_high") < idx.threshold
        if idx.higher_is_better
        else pl.col("ci_low") > idx.threshold
    )
    return out.with_columns(weak=(beyond & ~pl.col("few")).fill_null(value=False))


def univariate(idx: WeaknessIndex, by: str) -> pl.DataFrame:
    """Per value of the first axis (``by="topic"``) or of the second (``by="question_type"``).

    n, mean, CI, pass rate and quantiles per group, worst first.
    """
    if by not in ("topic", "question_type"):
        msg = f"by must be 'topic' or 'question_type'; got {by!r}"
        raise ValueError(msg)
    return (
        _stats(idx.rows, [by], idx, spread=True)
        .sort("mean", descending=not idx.higher_is_better)
        .rename({by: "group"})
    )


def grid_cells(idx: WeaknessIndex) -> pl.DataFrame:
    """One row per (topic, question type): n, mean, CI, pass rate, ``few``, ``weak``."""
    return _stats(idx.rows, ["topic", "question_type"], idx, spread=False).sort(
        "topic", "question_type"
    )


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

    All of them, or about ``max_dots`` chosen by a seeded hash of the row key (so the dots
    spread like the data), plus the first row of every cell so that none is drawn empty.
    """
    rows = idx.rows
    if rows.height > max_dots:
        kept = rows.filter(
            (pl.col("row_hash") + seed) % 1_000_003 < int(1_000_003 * max_dots / rows.height)
        )
        firsts = rows.group_by("topic", "question_type").first().select(kept.columns)
        # A run is in as many cells as tools it called: one dot per cell it is in.
        rows = pl.concat([kept, firsts]).unique(
            [*_KEYS, "topic", "question_type"], maintain_order=True
        )
    return rows.select(
        pl.col("topic").cast(pl.String),
        pl.col("question_type").cast(pl.String),
        "case_id",
        "model",
        pl.col("sample").cast(pl.Int32),
        "value",
        passed=_passed(idx),
    )


def media_axis(lab: LabCore) -> pl.DataFrame:
    """Each answer's media kinds as one value ("image", "audio+image", "text only").

    The kinds of the case's, the answer's and the contexts' items together, sorted; an answer
    with none is "text only", so a grid shows whether images or audio are where it fails.
    """
    rows = lab.rows().select(*_KEYS, "case_media", "answer_media", "context_media")
    kinds = lab.table("media").select("media_id", "kind")
    ids = rows.select(
        *_KEYS, media_id=pl.concat_list("case_media", "answer_media", "context_media")
    ).explode("media_id")
    found = (
        ids.join(kinds, on="media_id", how="inner")
        .group_by(_KEYS)
        .agg(media=pl.col("kind").unique().sort().str.join("+"))
    )
    return (
        rows.select(_KEYS)
        .join(found, on=_KEYS, how="left")
        .with_columns(media=pl.col("media").fill_null("text only"))
    )
