"""Which rows to ask a human about next: random, stratified or active sampling."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from evalnb.calibration.labels import ITEM
from evalnb.calibration.recalibrate import fit_threshold, labelled_points

if TYPE_CHECKING:
    from evalnb.lab.core import LabCore

__all__ = ["STRATEGIES", "calibration_sample", "sample_rows"]

STRATEGIES = ("random", "stratified", "active", "abstained")


def calibration_sample(
    lab: LabCore,
    evaluator: str,
    metric: str,
    *,
    n: int = 20,
    strategy: str = "active",
    seed: int = 0,
) -> pl.DataFrame:
    """Draw up to ``n`` scored rows of one metric for a human to label (never a labelled one).

    ``strategy``: ``random``, ``stratified`` (one per score quantile bin), ``active``
    (nearest the current pass/fail boundary — where a label teaches most) or ``abstained``
    (the rows a cascade of judges left unscored, no tier being confident: a reviewer's to
    decide; never counted as a random sample by calibration). Seeded.
    Returns the rows with ``value``, ``passed`` (the metric's verdict now), prompt,
    expected answer, the model's answer and retrieved context.
    """
    rows = sample_rows(lab, evaluator, metric, n, strategy, seed)
    spec = lab.metric_spec(evaluator, metric)
    thr, higher = spec["threshold"], bool(spec["higher_is_better"])
    keys = ["case_id", "model", "sample"]
    return (
        rows.with_columns(
            threshold=pl.lit(thr, pl.Float64),
            passed=(pl.col("value") >= thr) if higher else (pl.col("value") <= thr),
        )
        .join(lab.cases.select("case_id", "prompt", "expected"), on="case_id", how="left")
        .join(lab.outputs_of(rows, "actual", "context"), on=keys, how="left")
    )


def sample_rows(
    lab: LabCore, evaluator: str, metric: str, n: int, strategy: str, seed: int
) -> pl.DataFrame:
    """Pick ``n`` scored, never-labelled (case, model, sample) rows of one metric.

    ``random``: uniformly. ``stratified``: one per score quantile bin. ``active``: the rows
    whose verdict is least certain given the labels so far — those nearest the logistic
    P(human pass) = 0.5 point, drawn at random from the 3n nearest so a batch is not one
    clump; until both verdicts have been labelled it explores like ``stratified``.

    ``inclusion`` is the probability each picked row had of being picked, and ``design``
    the strategy that picked it: corrected estimates weight a row by 1 / inclusion, and
    leave out ``active`` rows (rows far from the boundary had no chance).
    """
    if strategy not in STRATEGIES:
        msg = f"strategy must be one of {STRATEGIES}; got {strategy!r}"
        raise ValueError(msg)
    labelled = lab.labels.filter(
        (pl.col("evaluator") == evaluator) & (pl.col("metric") == metric)
    ).select(ITEM)
    if strategy == "abstained":  # unscored rows a cascade left for a reviewer, in order
        left = (
            lab.metric_scores(evaluator, metric)
            .filter(
                pl.col("value").is_null()
                & pl.col("detail").str.contains('"abstained": true', literal=True)
            )
            .join(labelled, on=ITEM, how="anti")
            .select(*ITEM, "value")
            .sort(ITEM)
        )
        share = min(1.0, n / left.height) if left.height else 1.0
        return left.head(n).with_columns(inclusion=pl.lit(share), design=pl.lit(strategy))
    pool = (
        lab.metric_scores(evaluator, metric)
        .drop_nulls("value")
        .join(labelled, on=ITEM, how="anti")
        .select(*ITEM, "value")
        .sort(ITEM)  # a seed gives the same batch whatever the table order
    )
    if pool.height <= n:  # every row: each was certain to be picked
        return pool.with_columns(inclusion=pl.lit(1.0), design=pl.lit(strategy))
    rng = np.random.default_rng(seed)
    centre = _boundary(lab, evaluator, metric) if strategy == "active" else None
    if strategy == "active" and centre is None:
        # Until both verdicts have been seen there is no boundary to refine: explore the
        # whole score range first (sampling near a default threshold that is far off
        # would return the same verdict batch after batch).
        strategy = "stratified"
    if strategy == "random":
        pick = rng.choice(pool.height, n, replace=False)
        chance = np.full(n, n / pool.height)
    elif strategy == "stratified":
        order = np.argsort(pool["value"].to_numpy(), kind="stable")
        bins = np.array_split(order, n)
        pick = np.array([b[rng.integers(0, b.size)] for b in bins])
        chance = np.array([1.0 / b.size for b in bins])
    else:
        dist = np.abs(pool["value"].to_numpy() - centre)
        near = np.argsort(dist, kind="stable")[: 3 * n]
        pick = rng.choice(near, n, replace=False)
        chance = np.full(n, n / near.size)
    order = np.argsort(pick)
    return pool[pick[order]].with_columns(
        inclusion=pl.Series(chance[order]), design=pl.lit(strategy)
    )


def _boundary(lab: LabCore, evaluator: str, metric: str) -> float | None:
    """Where P(human pass | score) = 0.5 given the labels so far (None: one verdict only)."""
    points = labelled_points(lab, evaluator, metric)
    y = points["human_pass"].to_numpy().astype(bool)
    if points.height < 2 or y.all() or (~y).all():
        return None
    higher = bool(lab.metric_spec(evaluator, metric)["higher_is_better"])
    t, _ = fit_threshold(
        points["value"].to_numpy(), y, higher_is_better=higher, criterion="logistic"
    )
    return t
