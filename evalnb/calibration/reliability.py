"""Agreement you can read: how often humans pass an answer, per band of the metric's score.

A reliability diagram of the labelled answers: the scores cut into bands of equal counts,
and in each band the share the humans passed with its Wilson interval. A metric that
tracks the humans rises steadily through its threshold; a flat or jagged line shows where
its score says little.
"""

from __future__ import annotations

from statistics import NormalDist
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from evalnb.calibration.labels import ITEM
from evalnb.calibration.recalibrate import calibrate, labelled_points

if TYPE_CHECKING:
    from evalnb.lab.core import LabCore

__all__ = ["RELIABILITY_SCHEMA", "agreement_views", "reliability", "wilson_interval"]

RELIABILITY_SCHEMA = pl.Schema(
    {
        "low": pl.Float64(),
        "high": pl.Float64(),
        "score": pl.Float64(),
        "n": pl.Int64(),
        "human_pass_rate": pl.Float64(),
        "ci_low": pl.Float64(),
        "ci_high": pl.Float64(),
    }
)


def wilson_interval(
    passed: np.ndarray | float, n: np.ndarray | float, z: float
) -> tuple[np.ndarray, np.ndarray]:
    """Wilson's interval of ``passed`` of ``n`` (arrays or numbers), clipped to [0, 1].

    Honest at small n and at 0 or 100 %, where the normal interval collapses to a point.
    """
    n = np.asarray(n, dtype=float)
    p = np.asarray(passed, dtype=float) / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return np.clip(centre - half, 0.0, 1.0), np.clip(centre + half, 0.0, 1.0)


def reliability(
    lab: LabCore, evaluator: str, metric: str, *, bins: int = 8, level: float = 0.95
) -> pl.DataFrame:
    """Per score band of the labelled answers: its range, mean score, count, human pass rate, CI."""
    points = labelled_points(lab, evaluator, metric).sort("value")
    if points.is_empty():
        return pl.DataFrame(schema=RELIABILITY_SCHEMA)
    z = NormalDist().inv_cdf(0.5 + level / 2)
    v = points["value"].to_numpy()
    y = points["human_pass"].to_numpy().astype(bool)
    rows = []
    for part in np.array_split(np.arange(v.size), min(bins, v.size)):
        low, high = wilson_interval(int(y[part].sum()), part.size, z)
        lo, hi = float(low), float(high)
        rows.append(
            {
                "low": float(v[part[0]]),
                "high": float(v[part[-1]]),
                "score": float(v[part].mean()),
                "n": int(part.size),
                "human_pass_rate": float(y[part].mean()),
                "ci_low": lo,
                "ci_high": hi,
            }
        )
    return pl.DataFrame(rows, schema=RELIABILITY_SCHEMA)


def agreement_views(lab: LabCore) -> list[dict[str, object]]:
    """For each labelled metric a report can show: title, sentences, reliability bands, threshold.

    Metrics with too few labels to recalibrate (fewer than 4, or one verdict only) say so.
    """
    views: list[dict[str, object]] = []
    for evaluator, metric in lab.labels.select(ITEM[3:]).unique().sort(ITEM[3:]).iter_rows():
        title = f"{evaluator} / {metric}"
        spec = lab.metric_spec(evaluator, metric)
        try:
            cal = calibrate(lab, evaluator, metric, n_boot=300)
        except ValueError as exc:
            views.append({"title": title, "lines": [str(exc)], "table": None, "threshold": None})
            continue
        n = cal.n_labels
        lines = [
            f"{n} labelled answers; threshold in force {spec['threshold']:.4g} ({spec['source']}).",
            f"Cohen's κ between the metric and the reviewers: {cal.kappa_before:.3f} at the "
            f"threshold before calibration, {cal.kappa_after:.3f} at the fitted one (95 % CI "
            f"{cal.kappa_ci[0]:.3f}–{cal.kappa_ci[1]:.3f}).",
            "The fitted threshold's interval is as narrow as asked."
            if cal.more_labels == 0
            else f"About {cal.more_labels} more labels would narrow the threshold's interval to "
            f"±{cal.target_width / 2:.3g}.",
        ]
        bands = reliability(lab, evaluator, metric, bins=max(1, min(8, n // 5)))
        views.append(
            {"title": title, "lines": lines, "table": bands, "threshold": spec["threshold"]}
        )
    return views
