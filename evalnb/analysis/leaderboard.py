"""Leaderboards with bootstrap confidence intervals and paired model comparisons.

Statistics are over **cases**: a model's several samples of one case are averaged first, so
a case weighs the same whatever its sample count. Intervals resample cases with
replacement; one set of resampled indices serves every model, which makes the comparison
of two models *paired* (both see the same cases in each replicate). Above
``CLT_ROWS`` cases a normal interval replaces the bootstrap (memory; the two agree there).
"""

from __future__ import annotations

import contextlib
import itertools
import warnings
from math import erfc, sqrt
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = [
    "CLT_ROWS",
    "all_nan_ok",
    "case_matrix",
    "compare_models",
    "leaderboard",
    "mean_interval",
]

CLT_ROWS = 50_000
_Z = 1.959963984540054  # two-sided 95 %


def case_matrix(
    verdicts: pl.DataFrame | pl.LazyFrame, evaluator: str, metric: str
) -> tuple[list[str], np.ndarray, np.ndarray]:
    """(models, values, passed) as (cases × models) arrays; NaN where a model lacks the case."""
    return _matrix(_case_values(_picked(verdicts, evaluator, metric)))


def _picked(verdicts: pl.DataFrame | pl.LazyFrame, evaluator: str, metric: str) -> pl.DataFrame:
    wanted = (pl.col("evaluator") == evaluator) & (pl.col("metric") == metric)
    return verdicts.lazy().filter(wanted).collect()


def _case_values(picked: pl.DataFrame) -> pl.DataFrame:
    """One row per (case, model): the mean value and pass share over its samples."""
    # One sample per answer: nothing to average, and the grouping is the slow part.
    if picked.height and "sample" in picked.columns and picked["sample"].max() == 0:
        return picked.select("case_id", "model", "value", pl.col("passed").cast(pl.Float64))
    return picked.group_by("case_id", "model").agg(
        pl.col("value").mean(), pl.col("passed").cast(pl.Float64).mean()
    )


def _matrix(one: pl.DataFrame) -> tuple[list[str], np.ndarray, np.ndarray]:
    models = sorted(one["model"].unique().to_list())
    # Positions by dense rank (cases sorted, models sorted), computed in Polars: a Python
    # dict lookup per row costs about a second per million rows.
    at = one.select(
        (pl.col("case_id").rank("dense") - 1).cast(pl.Int64).alias("row"),
        (pl.col("model").rank("dense") - 1).cast(pl.Int64).alias("col"),
    )
    n_cases = int(at["row"].max() + 1) if one.height else 0  # type: ignore[operator]
    values = np.full((n_cases, len(models)), np.nan)
    passed = np.full((n_cases, len(models)), np.nan)
    rows, cols = at["row"].to_numpy(), at["col"].to_numpy()
    values[rows, cols] = one["value"].fill_null(np.nan).to_numpy()
    passed[rows, cols] = one["passed"].fill_null(np.nan).to_numpy()
    return models, values, passed


def _normal_stats(one: pl.DataFrame) -> pl.DataFrame:
    """Per model: cases, mean, normal 95 % interval, pass rate, from (case, model) rows.

    What :func:`mean_interval` gives above :data:`CLT_ROWS` cases, without the cases ×
    models matrix (building it sorts every case id, the slow part on a million cases).
    """
    value = pl.col("value").fill_nan(None)
    n = value.count()
    half = _Z * value.std(ddof=1) / n.cast(pl.Float64).sqrt()
    return (
        one.group_by("model")
        .agg(
            n_cases=n.cast(pl.Int64),
            mean=value.mean(),
            _half=half,
            pass_rate=pl.col("passed").fill_nan(None).mean(),
        )
        .with_columns(
            ci_low=pl.col("mean") - pl.col("_half"), ci_high=pl.col("mean") + pl.col("_half")
        )
        .drop("_half")
        .sort("model")
    )


def _replicate_means(values: np.ndarray, n_boot: int, seed: int) -> np.ndarray:
    """(n_boot × models) means of case-resampled columns (NaNs ignored)."""
    rng = np.random.default_rng(seed)
    n = values.shape[0]
    ok = ~np.isnan(values)
    filled = np.where(ok, values, 0.0)
    out = np.empty((n_boot, values.shape[1]))
    for start in range(0, n_boot, 64):  # chunks bound memory at 64 × n indices
        idx = rng.integers(0, n, size=(min(64, n_boot - start), n))
        sums = filled[idx].sum(axis=1)
        counts = ok[idx].sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            out[start : start + len(idx)] = sums / counts
    return out


@contextlib.contextmanager
def all_nan_ok() -> Iterator[None]:
    """Give NaN statistics, not a warning, to a model with no scored case (all calls failed).

    numpy reports all-NaN slices with ``warnings.warn``, which ``np.errstate`` does not cover.
    """
    with warnings.catch_warnings(), np.errstate(invalid="ignore", divide="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


def mean_interval(values: np.ndarray, n_boot: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Return the 95 % interval of each column's mean, NaN ignored.

    Rows are resampled (``n_boot`` times, seeded); above :data:`CLT_ROWS` rows the normal
    approximation is used instead.
    """
    if values.shape[0] > CLT_ROWS or values.shape[0] < 2:
        with all_nan_ok():
            mean = np.nanmean(values, axis=0) if values.size else np.full(values.shape[1], np.nan)
            n = (~np.isnan(values)).sum(axis=0)
            half = (
                _Z * np.nanstd(values, axis=0, ddof=1) / np.sqrt(n)
                if values.shape[0] > 1
                else np.full(values.shape[1], np.nan)
            )
        return mean - half, mean + half
    reps = _replicate_means(values, n_boot, seed)
    with all_nan_ok():
        return np.nanpercentile(reps, 2.5, axis=0), np.nanpercentile(reps, 97.5, axis=0)


def leaderboard(
    verdicts: pl.DataFrame | pl.LazyFrame, *, n_boot: int = 1000, seed: int = 0
) -> pl.DataFrame:
    """Per (evaluator, metric, model): cases, mean, 95 % CI, pass rate, rank (1 = best).

    ``verdicts`` may be a query (:func:`evalnb.lab.verdicts.lazy_verdicts`): each metric's
    rows are then collected one metric at a time.
    """
    parts = []
    keys = verdicts.lazy().select("evaluator", "metric").unique(maintain_order=True).collect()
    for ev, metric in keys.iter_rows():
        picked = _picked(verdicts, ev, metric)
        spec = picked.select("threshold", "higher_is_better", "primary").row(0, named=True)
        one = _case_values(picked)
        # Each case has a row per model at most, so height / models bounds the cases from
        # below: past CLT_ROWS no exact count (a hash of every case id) is needed.
        models_n = max(one["model"].n_unique(), 1)
        many = one.height > CLT_ROWS * models_n or one["case_id"].n_unique() > CLT_ROWS
        if many:  # normal intervals: no matrix needed
            stats = _normal_stats(one)
        else:
            models, values, passed = _matrix(one)
            low, high = mean_interval(values, n_boot, seed)
            with all_nan_ok():
                mean = np.nanmean(values, axis=0) if len(values) else np.full(len(models), np.nan)
                rate = np.nanmean(passed, axis=0) if len(passed) else np.full(len(models), np.nan)
            stats = pl.DataFrame(
                {
                    "model": models,
                    "n_cases": (~np.isnan(values)).sum(axis=0).astype(np.int64),
                    "mean": mean,
                    "ci_low": low,
                    "ci_high": high,
                    "pass_rate": rate,
                },
                strict=False,
            )
        parts.append(
            stats.select(
                evaluator=pl.lit(ev),
                metric=pl.lit(metric),
                model="model",
                n_cases=pl.col("n_cases").cast(pl.Int64),
                mean="mean",
                ci_low="ci_low",
                ci_high="ci_high",
                pass_rate="pass_rate",
                threshold=pl.lit(spec["threshold"], pl.Float64),
                higher_is_better=pl.lit(spec["higher_is_better"], pl.Boolean),
                primary=pl.lit(spec["primary"], pl.Boolean),
            )
        )
    if not parts:
        return pl.DataFrame(
            schema={
                "evaluator": pl.String,
                "metric": pl.String,
                "model": pl.String,
                "n_cases": pl.Int64,
                "mean": pl.Float64,
                "ci_low": pl.Float64,
                "ci_high": pl.Float64,
                "pass_rate": pl.Float64,
                "threshold": pl.Float64,
                "higher_is_better": pl.Boolean,
                "primary": pl.Boolean,
                "rank": pl.UInt32,
            }
        )
    board = pl.concat(parts).with_columns(pl.col(pl.Float64).fill_nan(None))
    score = pl.when(pl.col("higher_is_better")).then(pl.col("mean")).otherwise(-pl.col("mean"))
    return board.with_columns(
        rank=score.rank("min", descending=True).over("evaluator", "metric")
    ).sort("evaluator", "metric", "rank")


def compare_models(
    verdicts: pl.DataFrame, evaluator: str, metric: str, *, n_boot: int = 2000, seed: int = 0
) -> pl.DataFrame:
    """Every pair of models on the cases both answered: mean difference, its CI and a p-value.

    ``diff`` is ``mean(a) − mean(b)`` oriented so that positive means *a is better*; the
    p-value is the two-sided paired bootstrap one (how often a replicate's difference
    lands on the other side of zero, doubled). ``a_beats_b`` holds only when the whole
    95 % interval is above zero.
    """
    models, values, _ = case_matrix(verdicts, evaluator, metric)
    hib = bool(verdicts.filter(pl.col("metric") == metric)["higher_is_better"].first())
    sign = 1.0 if hib else -1.0
    rows: list[tuple[object, ...]] = []
    for (i, a), (j, b) in itertools.combinations(enumerate(models), 2):
        both = ~np.isnan(values[:, i]) & ~np.isnan(values[:, j])
        d = sign * (values[both, i] - values[both, j])
        if len(d) < 2:
            rows.append(
                (a, b, len(d), float(d.mean()) if len(d) else None, None, None, None, False)
            )
            continue
        if len(d) > CLT_ROWS:
            half = _Z * d.std(ddof=1) / np.sqrt(len(d))
            low, high = d.mean() - half, d.mean() + half
            se = d.std(ddof=1) / np.sqrt(len(d))
            p = erfc(abs(d.mean()) / se / sqrt(2)) if se > 0 else 0.0
        else:
            reps = _replicate_means(d[:, None], n_boot, seed)[:, 0]
            low, high = np.percentile(reps, [2.5, 97.5])
            p = min(1.0, 2 * min((reps <= 0).mean(), (reps >= 0).mean()))
        rows.append(
            (a, b, len(d), float(d.mean()), float(low), float(high), float(p), bool(low > 0))
        )
    return pl.DataFrame(
        rows,
        schema={
            "a": pl.String,
            "b": pl.String,
            "n_cases": pl.Int64,
            "diff": pl.Float64,
            "ci_low": pl.Float64,
            "ci_high": pl.Float64,
            "p_value": pl.Float64,
            "a_beats_b": pl.Boolean,
        },
        orient="row",
    )
