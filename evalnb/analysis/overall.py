"""One row per model over every evaluator's primary metric, with a rank and its interval.

The overall score of a model is its **pass rate averaged over the primary metrics** (each
metric weighs the same, whatever its case count). ``rank`` orders models by that score
(ties share the better rank). A rank is only as firm as the data under it, so the table
gives the 95 % interval of each rank and of each pass rate, from paired case resampling as
the leaderboard does it: one set of resampled cases serves every model and metric, so the
models are compared on the same cases in each replicate. The resample is drawn as case
weights (how often each case is drawn) times the pass matrix, not as gathered rows, so
memory stays at replicates × cases however many models and metrics there are.

``mean_rank`` (the average of a model's per-metric ranks) and ``wins`` (metrics it ranks
first on) are other summaries, kept because they answer other questions (consistency,
dominance); they may order the models differently from ``rank``.

Above ``CLT_ROWS`` cases the interval of the pass rates comes from the delta method (each
case's influence on every model's score, then a normal draw with their covariance), which
matches the bootstrap there and costs one pass over the cases instead of a thousand.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from evalnb.analysis.leaderboard import CLT_ROWS, all_nan_ok

__all__ = ["overall_leaderboard"]

COLUMNS = (
    "rank",
    "rank_ci_low",
    "rank_ci_high",
    "model",
    "evaluators",
    "pass_rate",
    "pass_rate_ci_low",
    "pass_rate_ci_high",
    "mean_rank",
    "wins",
)
_CHUNK = 64  # replicates per matrix product: bounds memory at 64 × cases weights


def _cube(verdicts: pl.DataFrame) -> tuple[list[str], np.ndarray]:
    """(models, passed) with passed as (cases × models × primary metrics), NaN where absent."""
    part = (
        verdicts.filter(pl.col("primary"))
        .group_by("case_id", "model", "evaluator", "metric")
        .agg(pl.col("passed").cast(pl.Float64).mean())
        .with_columns(
            c=pl.col("case_id").rank("dense") - 1,
            m=pl.col("model").rank("dense") - 1,
            k=pl.concat_str("evaluator", pl.lit("\x1f"), "metric").rank("dense") - 1,
        )
    )
    models = part["model"].unique().sort().to_list()
    n_cases, n_keys = part["c"].n_unique(), part["k"].n_unique()  # dense ranks: 0 … n − 1
    cube = np.full((n_cases, len(models), n_keys), np.nan)
    cube[part["c"].to_numpy(), part["m"].to_numpy(), part["k"].to_numpy()] = (
        part["passed"].fill_null(np.nan).to_numpy()
    )
    return models, cube


def _overall(sums: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Pass rate per metric (sums / counts), averaged over a model's metrics; last axis = metric."""
    with all_nan_ok():
        rates: np.ndarray = np.nanmean(sums / counts, axis=-1)
    return rates


def _ranks(scores: np.ndarray) -> np.ndarray:
    """Competition ranks along the last axis (1 = best, ties share); NaN for NaN scores."""
    better = (scores[..., None, :] > scores[..., :, None]).sum(axis=-1)
    ranks: np.ndarray = np.where(np.isnan(scores), np.nan, 1.0 + better)
    return ranks


def _replicates(cube: np.ndarray, n_boot: int, seed: int) -> np.ndarray:
    """(n_boot × models) overall pass rates of case-resampled labs."""
    n, m, k = cube.shape
    ok = ~np.isnan(cube)
    flat = np.where(ok, cube, 0.0).reshape(n, m * k)
    seen = ok.reshape(n, m * k).astype(np.float64)
    rng = np.random.default_rng(seed)
    if n <= CLT_ROWS:
        out = np.empty((n_boot, m))
        for start in range(0, n_boot, _CHUNK):
            size = min(_CHUNK, n_boot - start)
            # How often each case is drawn in each replicate: the resample as weights.
            weights = rng.multinomial(n, np.full(n, 1.0 / n), size=size).astype(np.float64)
            sums, counts = weights @ flat, weights @ seen
            out[start : start + size] = _overall(
                sums.reshape(size, m, k), counts.reshape(size, m, k)
            )
        return out
    counts = seen.sum(axis=0)
    with all_nan_ok():
        rate = flat.sum(axis=0) / counts
    # Influence of each case on each metric's pass rate, then on each model's average.
    influence = np.where(seen > 0, flat - rate, 0.0) * (n / np.where(counts > 0, counts, np.nan))
    per_model = np.nan_to_num(influence).reshape(n, m, k)
    metrics = np.maximum((counts.reshape(m, k) > 0).sum(axis=1), 1)
    per_model = per_model.sum(axis=2) / metrics
    cov = per_model.T @ per_model / (n * n)
    centre = _overall(flat.sum(axis=0).reshape(m, k), counts.reshape(m, k))
    draws = rng.multivariate_normal(np.nan_to_num(centre), cov, size=n_boot, method="eigh")
    return np.where(np.isnan(centre), np.nan, draws)


def overall_leaderboard(
    verdicts: pl.DataFrame, board: pl.DataFrame, *, n_boot: int = 1000, seed: int = 0
) -> pl.DataFrame:
    """Per model: its overall pass rate and rank, each with a 95 % interval.

    Parameters
    ----------
    verdicts
        One row per scored (case, model, evaluator, metric, sample) with ``passed`` and
        ``primary`` (``Lab.verdicts()``).
    board
        The per-metric leaderboard of the same verdicts (for ``mean_rank`` and ``wins``).
    n_boot, seed
        Case-resampling replicates and their seed.

    Returns
    -------
    polars.DataFrame
        ``rank``, ``rank_ci_low``, ``rank_ci_high``, ``model``, ``evaluators``, ``pass_rate``,
        ``pass_rate_ci_low``, ``pass_rate_ci_high``, ``mean_rank``, ``wins``; best first.
    """
    models, cube = _cube(verdicts)
    n, m, _ = cube.shape
    if m == 0 or n == 0:  # nothing scored yet: a report of a fresh lab still renders
        ints = {"rank", "rank_ci_low", "rank_ci_high", "evaluators", "wins"}
        return pl.DataFrame(
            schema={
                c: pl.String if c == "model" else pl.UInt32 if c in ints else pl.Float64
                for c in COLUMNS
            }
        )
    ok = ~np.isnan(cube)
    centre = _overall(np.where(ok, cube, 0.0).sum(axis=0), ok.sum(axis=0))
    reps = _replicates(cube, n_boot, seed) if n > 1 else np.full((1, m), np.nan)
    with all_nan_ok():
        rank_reps = _ranks(reps)
        low, high = np.nanpercentile(reps, [2.5, 97.5], axis=0)
        # Ranks are integers: the interval runs from the best to the worst rank seen in the
        # central 95 % of replicates ("lower"/"higher" keep them whole).
        rank_low = np.nanpercentile(rank_reps, 2.5, axis=0, method="lower")
        rank_high = np.nanpercentile(rank_reps, 97.5, axis=0, method="higher")
    per_metric = (
        board.filter(pl.col("primary"))
        .group_by("model")
        .agg(
            evaluators=pl.col("evaluator").n_unique(),
            mean_rank=pl.col("rank").cast(pl.Float64).mean(),
            wins=(pl.col("rank") == 1).sum().cast(pl.UInt32),
        )
    )
    table = (
        pl.DataFrame(
            {
                "model": models,
                "rank": _ranks(centre),
                "rank_ci_low": rank_low,
                "rank_ci_high": rank_high,
                "pass_rate": centre,
                "pass_rate_ci_low": low,
                "pass_rate_ci_high": high,
            },
            schema_overrides={"model": pl.String},
        )
        .with_columns(pl.col(pl.Float64).fill_nan(None))
        .with_columns(pl.col("rank", "rank_ci_low", "rank_ci_high").cast(pl.UInt32))
    )
    return (
        table.join(per_metric, on="model", how="left")
        .select(COLUMNS)
        .sort("rank", "mean_rank", "model", nulls_last=True)
    )
