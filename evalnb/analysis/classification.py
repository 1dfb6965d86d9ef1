"""Model-level macro precision, recall and F1 of the classification evaluator.

Per row the classification evaluator can only say right or wrong; precision, recall and F1
are properties of a model's whole set of predictions (H2O: scikit-learn, macro average).
This module computes them from the answers and labels, with a bootstrap interval over
cases, and puts them on the leaderboard in place of the per-row means.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import polars as pl

if TYPE_CHECKING:
    from evalnb.lab.core import LabCore

__all__ = ["MACRO_METRICS", "macro_scores", "with_macro"]

MACRO_METRICS = ("precision", "recall", "f1")
_EVALUATOR = "classification"


def _labels(lab: LabCore) -> pl.DataFrame:
    """(model, truth, predicted) per scored classification row."""
    scored = (
        lab.scores.filter((pl.col("evaluator") == _EVALUATOR) & (pl.col("metric") == "accuracy"))
        .drop_nulls("value")
        .select("case_id", "model", "sample")
    )
    keys = ["case_id", "model", "sample"]
    rows = scored.join(lab.outputs.select(*keys, "actual"), on=keys).join(
        lab.cases.select("case_id", "expected"), on="case_id"
    )
    # The truth is the label the answer matched, else the first expected label.
    return rows.select(
        "model",
        truth=pl.when(pl.col("expected").list.contains(pl.col("actual").fill_null("")))
        .then(pl.col("actual"))
        .otherwise(pl.col("expected").list.first()),
        predicted=pl.col("actual").fill_null("<no answer>"),
    )


def macro_scores(lab: LabCore, *, n_boot: int = 200, seed: int = 0) -> pl.DataFrame:
    """Per model: macro precision / recall / F1 with a 95 % bootstrap interval over cases."""
    from sklearn.metrics import precision_recall_fscore_support  # noqa: PLC0415

    rows = _labels(lab)
    out = []
    rng = np.random.default_rng(seed)
    for model, part in rows.group_by("model", maintain_order=True):
        y, p = part["truth"].to_numpy(), part["predicted"].to_numpy()
        point = precision_recall_fscore_support(y, p, average="macro", zero_division=0)[:3]
        boots = np.array(
            [
                precision_recall_fscore_support(y[i], p[i], average="macro", zero_division=0)[:3]
                for i in (rng.integers(0, y.size, y.size) for _ in range(n_boot))
            ]
        )
        low, high = np.percentile(boots, [2.5, 97.5], axis=0)
        for k, metric in enumerate(MACRO_METRICS):
            out.append(
                {
                    "model": model[0],
                    "metric": metric,
                    "value": float(point[k]),
                    "low": float(low[k]),
                    "high": float(high[k]),
                    "n": y.size,
                }
            )
    return pl.DataFrame(
        out,
        schema={
            "model": pl.String,
            "metric": pl.String,
            "value": pl.Float64,
            "low": pl.Float64,
            "high": pl.Float64,
            "n": pl.Int64,
        },
    )


def with_macro(board: pl.DataFrame, lab: LabCore, *, seed: int = 0) -> pl.DataFrame:
    """Return the leaderboard with classification's precision/recall/F1 as macro values."""
    is_macro = (pl.col("evaluator") == _EVALUATOR) & pl.col("metric").is_in(MACRO_METRICS)
    if board.filter(is_macro).is_empty():
        return board
    macro = macro_scores(lab, seed=seed).rename({"value": "_v", "low": "_lo", "high": "_hi"})
    joined = board.join(macro.drop("n"), on=["model", "metric"], how="left")
    score = pl.when(pl.col("higher_is_better")).then(pl.col("mean")).otherwise(-pl.col("mean"))
    return (
        joined.with_columns(
            mean=pl.when(is_macro).then("_v").otherwise("mean"),
            ci_low=pl.when(is_macro).then("_lo").otherwise("ci_low"),
            ci_high=pl.when(is_macro).then("_hi").otherwise("ci_high"),
            # a macro score is not a share of rows: no pass rate
            pass_rate=pl.when(is_macro).then(None).otherwise("pass_rate"),
        )
        .drop("_v", "_lo", "_hi")
        .with_columns(rank=score.rank("min", descending=True).over("evaluator", "metric"))
    )
