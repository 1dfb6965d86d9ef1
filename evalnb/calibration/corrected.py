"""The corrected leaderboard: per model, the pass rate humans would give, from labels and metric.

Which labels may count (see :mod:`evalnb.calibration.ppi` for why): those of labeler
batches drawn ``random`` or ``stratified`` (weighted by their recorded inclusion
probability), and labels given outside a batch only when the caller vouches that they were
drawn at random. Rows labelled by ``active`` sampling are left out and counted.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from evalnb.calibration.labels import BATCH_KEY, human_verdicts
from evalnb.calibration.ppi import ppi_mean
from evalnb.lab.verdicts import verdicts

if TYPE_CHECKING:
    from evalnb.lab.core import LabCore

__all__ = ["CORRECTED_SCHEMA", "corrected_leaderboard"]

_KEYS = ["case_id", "model", "sample"]
CORRECTED_SCHEMA = pl.Schema(
    {
        "model": pl.String(),
        "rows": pl.Int64(),
        "labels_used": pl.Int64(),
        "labels_left_out": pl.Int64(),
        "automatic": pl.Float64(),
        "human_only": pl.Float64(),
        "human_ci_low": pl.Float64(),
        "human_ci_high": pl.Float64(),
        "corrected": pl.Float64(),
        "ci_low": pl.Float64(),
        "ci_high": pl.Float64(),
        "metric_weight": pl.Float64(),
        "effective_labels": pl.Float64(),
    }
)


def _designs(lab: LabCore) -> pl.DataFrame:
    """Each batch-sampled row's design and inclusion probability (the latest batch wins)."""
    rows = []
    info = lab.table("info").filter(pl.col("key").str.starts_with(BATCH_KEY))
    for value in info["value"].to_list():
        record = json.loads(value)
        designs = record.get("design") or [record.get("strategy")] * len(record["items"])
        chances = record.get("inclusion") or [None] * len(record["items"])
        for (case_id, model, sample), design, chance in zip(
            record["items"], designs, chances, strict=True
        ):
            rows.append(
                {
                    "batch_id": record["batch_id"],
                    "case_id": case_id,
                    "model": model,
                    "sample": sample,
                    "design": design,
                    "inclusion": chance,
                }
            )
    return pl.DataFrame(
        rows,
        schema={
            "batch_id": pl.String,
            "case_id": pl.String,
            "model": pl.String,
            "sample": pl.Int64,
            "design": pl.String,
            "inclusion": pl.Float64,
        },
    )


def corrected_leaderboard(
    lab: LabCore, evaluator: str, metric: str, *, assume_random: bool = False, level: float = 0.95
) -> pl.DataFrame:
    """Per model: automatic, human-only and prediction-powered pass rates with intervals.

    Parameters
    ----------
    assume_random
        Count labels given outside labeler batches (``lab.add_label``) as a uniform random
        sample of the model's rows — true when they were drawn with
        ``calibration_sample(strategy="random")`` or by any unbiased draw.
    level
        The intervals' coverage.
    """
    v = verdicts(lab.metric_scores(evaluator, metric), lab.metrics, lab.thresholds).filter(
        pl.col("passed").is_not_null()
    )
    if v.is_empty():
        msg = f"no verdicts of {evaluator}/{metric}: evaluate it (with a threshold) first"
        raise KeyError(msg)
    human = human_verdicts(lab.labels, evaluator, metric).drop_nulls("human_pass")
    last_batch = (
        lab.labels.filter((pl.col("evaluator") == evaluator) & (pl.col("metric") == metric))
        .sort("created_at")
        .group_by(_KEYS)
        .agg(pl.col("batch_id").last())
    )
    designs = _designs(lab)
    labelled = (
        human.select(*_KEYS, "human_pass")
        .join(last_batch, on=_KEYS, how="left")
        .join(designs, on=["batch_id", *_KEYS], how="left")
        .with_columns(
            usable=pl.when(pl.col("batch_id").is_null())
            .then(pl.lit(assume_random))
            .otherwise(
                pl.col("design").is_in(["random", "stratified"]) & pl.col("inclusion").is_not_null()
            )
        )
    )
    rows = []
    for model, part in v.sort(_KEYS).group_by("model", maintain_order=True):
        name = str(model[0])
        population = part.select(*_KEYS, f=pl.col("passed").cast(pl.Float64))
        mine = labelled.filter(pl.col("model") == name).join(population, on=_KEYS)
        use = mine.filter(pl.col("usable"))
        base = {
            "model": name,
            "rows": population.height,
            "labels_used": use.height,
            "labels_left_out": mine.height - use.height,
            "automatic": float(np.mean(population["f"].to_numpy())),
        }
        if use.height < 2:
            rows.append(base)
            continue
        weights = None
        if not (use["design"].fill_null("random") == "random").all():
            chance = use["inclusion"].fill_null(use.height / population.height).to_numpy()
            weights = 1.0 / chance
        e = ppi_mean(
            use["human_pass"].cast(pl.Float64).to_numpy(),
            use["f"].to_numpy(),
            population["f"].to_numpy(),
            weights=weights,
            level=level,
        )
        rows.append(
            {
                **base,
                "human_only": e.human_only,
                "human_ci_low": e.human_ci[0],
                "human_ci_high": e.human_ci[1],
                "corrected": e.estimate,
                "ci_low": e.ci_low,
                "ci_high": e.ci_high,
                "metric_weight": e.lam,
                "effective_labels": e.effective_labels if np.isfinite(e.effective_labels) else None,
            }
        )
    return pl.DataFrame(rows, schema=CORRECTED_SCHEMA)
