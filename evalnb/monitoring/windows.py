"""Per window and metric: the raw pass rate, the corrected ones, the confidence sequence, alarms.

The estimates are those of :mod:`evalnb.monitoring.stats`; which labels count is decided
here. A label counts towards a window's corrected pass rate when its trace was drawn for
review from that very window (``Monitor.sample_for_review``) by ``random`` or
``stratified`` sampling, whose inclusion probabilities are recorded; reviewers are assumed
to label a sample's traces in the random order they were handed out, so the labelled ones
are a random sample too. Traces their metric could not score are outside the pass rate:
they are counted in ``unscored``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

import numpy as np
import polars as pl

from evalnb.analysis.sequential import cs_radius
from evalnb.calibration.ppi import ppi_mean, ppi_superpopulation
from evalnb.calibration.reliability import wilson_interval
from evalnb.monitoring.stats import drop_bound, fitted_lambda

__all__ = ["WINDOW_SCHEMA", "Settings", "estimate_windows", "parse_every"]

_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}

WINDOW_SCHEMA = pl.Schema(
    {
        "window_start": pl.Datetime("us", "UTC"),
        "evaluator": pl.String(),
        "metric": pl.String(),
        "bundle_hash": pl.String(),
        "n": pl.Int64(),
        "scored": pl.Int64(),
        "unscored_share": pl.Float64(),
        "pass_rate": pl.Float64(),
        "pass_low": pl.Float64(),
        "pass_high": pl.Float64(),
        "labels": pl.Int64(),
        "human_pass_rate": pl.Float64(),
        "corrected": pl.Float64(),
        "corrected_low": pl.Float64(),
        "corrected_high": pl.Float64(),
        "superpop": pl.Float64(),
        "superpop_low": pl.Float64(),
        "superpop_high": pl.Float64(),
        "lam": pl.Float64(),
        "cs_estimate": pl.Float64(),
        "cs_low": pl.Float64(),
        "cs_high": pl.Float64(),
        "drop_bound": pl.Float64(),
        "drop_since": pl.Datetime("us", "UTC"),
        "accepted": pl.Float64(),
        "below_accepted": pl.Boolean(),
        "raw_drop_bound": pl.Float64(),
        "raw_level": pl.Float64(),
        "raw_below": pl.Boolean(),
    }
)


def parse_every(every: str) -> str:
    """``"1d"``, ``"6h"``, ``"15m"``, ``"1w"`` → a DuckDB interval (``"1 days"``)."""
    text = every.strip().lower()
    number, unit = text[:-1], text[-1:]
    if unit not in _UNITS or not number.isdigit() or not 0 < int(number) <= 10_000:
        msg = (
            f"every must be a count and a unit (m, h, d or w), such as '1d' or '6h'; got {every!r}"
        )
        raise ValueError(msg)
    return f"{int(number)} {_UNITS[unit]}"


@dataclass(frozen=True)
class Settings:
    """The statistical settings of a monitor's windows (see ``evalnb.monitor``)."""

    level: float = 0.95
    horizon: int = 30
    t_opt: float = 2000.0


def _wilson(passes: int, n: int, level: float) -> tuple[float | None, float | None]:
    """Wilson's interval at ``level`` (the one of :mod:`evalnb.calibration.reliability`)."""
    if n == 0:
        return None, None
    low, high = wilson_interval(passes, n, NormalDist().inv_cdf(0.5 + level / 2))
    return float(low), float(high)


def _increment_sums(
    passes: int, scored: int, labels: _Labels, lam: float, centre: float
) -> tuple[float, float]:
    """Σz and Σz² over a window's traces without listing them: counts stand for the unlabelled."""
    f, y, pi = labels.predicted, labels.human, labels.pi
    base_lab = lam * f + centre
    z_lab = base_lab + (y - lam * f - centre) / pi
    unl_pass = passes - float(f.sum())
    unl_fail = (scored - y.size) - unl_pass
    s = float(z_lab.sum()) + unl_pass * (lam + centre) + unl_fail * centre
    q = float((z_lab**2).sum()) + unl_pass * (lam + centre) ** 2 + unl_fail * centre**2
    return s, q


@dataclass(frozen=True)
class _Labels:
    """One window's labelled traces as arrays: the metric's verdict, the human's, π, how drawn."""

    predicted: np.ndarray
    human: np.ndarray
    pi: np.ndarray
    uniform: bool


def _labels_by_window(labelled: pl.DataFrame, starts: pl.Series) -> list[_Labels]:
    """Each window's labels (in ``starts``' order), read out of the frame once.

    A monitor checks every window after each one closes: a filter per window was most of
    the time of a 30-window stream (97 collects), slices of sorted arrays are not.
    """
    lab = labelled.with_columns(pl.col("window_start").cast(starts.dtype)).sort("window_start")
    keys = lab.get_column("window_start").to_physical().to_numpy()
    wanted = starts.to_physical().to_numpy()
    lows = np.searchsorted(keys, wanted, side="left")
    highs = np.searchsorted(keys, wanted, side="right")
    predicted = lab.get_column("predicted").to_numpy().astype(float)
    human = lab.get_column("human").to_numpy().astype(float)
    pi = lab.get_column("pi").to_numpy().astype(float)
    random = (lab.get_column("strategy") == "random").fill_null(value=False).to_numpy()
    return [
        _Labels(predicted[a:b], human[a:b], pi[a:b], bool(random[a:b].all()))
        for a, b in zip(lows.tolist(), highs.tolist(), strict=True)
    ]


def _metric_windows(
    agg: pl.DataFrame,
    labelled: pl.DataFrame,
    levels: tuple[float | None, float | None],
    settings: Settings,
) -> list[dict[str, Any]]:
    accepted, lab_rate = levels
    # The uncorrected alarm's level: the accepted rate, else the calibration lab's own.
    raw_level = accepted if accepted is not None else lab_rate
    raw_sums: list[float] = []
    raw_counts: list[float] = []
    out = []
    alpha = 1 - settings.level
    past_y: list[np.ndarray] = []
    past_f: list[np.ndarray] = []
    sums: list[float] = []
    squares: list[float] = []
    counts: list[float] = []
    starts: list[object] = []
    agg = agg.sort("window_start")
    windows = _labels_by_window(labelled, agg.get_column("window_start"))
    for row, lab in zip(agg.iter_rows(named=True), windows, strict=True):
        n, scored, passes = row["n"], row["scored"], row["passes"]
        low, high = _wilson(passes, scored, settings.level)
        labels = lab.human.size
        rec: dict[str, Any] = {
            **{
                k: row[k]
                for k in ("window_start", "evaluator", "metric", "bundle_hash", "n", "scored")
            },
            "unscored_share": (n - scored) / n if n else None,
            "pass_rate": passes / scored if scored else None,
            "pass_low": low,
            "pass_high": high,
            "labels": labels,
            "accepted": accepted,
            "raw_level": raw_level,
        }
        # The metric's own verdicts, uncorrected: a bound that needs no labels, so a
        # monitor nobody labels for can still alarm (said as uncorrected).
        if scored:
            raw_sums.append(float(passes))
            raw_counts.append(float(scored))
            raw_bound, _ = drop_bound(
                np.array(raw_sums),
                np.array(raw_sums),  # 0/1 verdicts: their squares are themselves
                np.array(raw_counts),
                alpha=alpha,
                horizon=settings.horizon,
                t_opt=settings.t_opt,
            )
            rec |= {
                "raw_drop_bound": raw_bound,
                "raw_below": raw_level is not None and raw_bound < raw_level,
            }
        if labels >= 2 and scored > labels:
            y, f, uniform = lab.human, lab.predicted, lab.uniform
            weights = None if uniform else 1 / lab.pi
            all_f = np.concatenate(
                [
                    f,
                    np.ones(passes - int(f.sum())),
                    np.zeros(scored - labels - (passes - int(f.sum()))),
                ]
            )
            fixed = ppi_mean(y, f, all_f, weights=weights, level=settings.level)
            rec |= {
                "human_pass_rate": fixed.human_only,
                "corrected": fixed.estimate,
                "corrected_low": fixed.ci_low,
                "corrected_high": fixed.ci_high,
                "lam": fixed.lam,
            }
            if uniform:
                sup = ppi_superpopulation(y, f, all_f[labels:], level=settings.level)
                rec |= {
                    "superpop": sup.estimate,
                    "superpop_low": sup.low,
                    "superpop_high": sup.high,
                }
            # λ and c from earlier windows' labels only (see evalnb.monitoring.stats).
            if past_y:
                py, pf = np.concatenate(past_y), np.concatenate(past_f)
                lam = fitted_lambda(py, pf)
                centre = float(np.mean(py - lam * pf))
            else:
                lam, centre = 1.0, 0.0
            s, q = _increment_sums(passes, scored, lab, lam, centre)
            sums.append(s)
            squares.append(q)
            counts.append(float(scored))
            starts.append(row["window_start"])
            past_y.append(y)
            past_f.append(f)
        if counts:
            t = sum(counts)
            mean = sum(sums) / t
            var = max(sum(squares) / t - mean**2, 0.0) * t / max(t - 1, 1)
            radius = float(
                cs_radius(np.array([t]), np.array([math.sqrt(var)]), alpha, settings.t_opt)[0]
            )
            bound, since = drop_bound(
                np.array(sums),
                np.array(squares),
                np.array(counts),
                alpha=alpha,
                horizon=settings.horizon,
                t_opt=settings.t_opt,
            )
            rec |= {
                "cs_estimate": min(max(mean, 0.0), 1.0),
                "cs_low": max(mean - radius, 0.0),
                "cs_high": min(mean + radius, 1.0),
                "drop_bound": bound,
                "drop_since": starts[since],
                "below_accepted": accepted is not None and bound < accepted,
            }
        out.append(rec)
    return out


def estimate_windows(
    agg: pl.DataFrame, labelled: pl.DataFrame, metrics: pl.DataFrame, settings: Settings
) -> pl.DataFrame:
    """Build the windows frame (``WINDOW_SCHEMA``) from counts and labelled traces.

    ``agg``: window_start, evaluator, metric, bundle_hash, n, scored, passes. ``labelled``:
    window_start, evaluator, metric, predicted (the metric's verdict, 1/0), human (1/0), pi
    (the trace's chance of being labelled), strategy.
    ``metrics``: the bundle's metrics with ``accepted`` (and ``lab_pass_rate``, the
    calibration lab's own rate, the uncorrected alarm's level when none was accepted).
    """
    rows: list[dict[str, Any]] = []
    for (ev, metric), part in agg.group_by(["evaluator", "metric"], maintain_order=True):
        spec = metrics.filter((pl.col("evaluator") == ev) & (pl.col("metric") == metric))
        accepted = spec.item(0, "accepted") if spec.height else None
        lab_rate = (
            spec.item(0, "lab_pass_rate")
            if spec.height and "lab_pass_rate" in spec.columns
            else None
        )
        lab = labelled.filter((pl.col("evaluator") == ev) & (pl.col("metric") == metric))
        rows.extend(_metric_windows(part, lab, (accepted, lab_rate), settings))
    frame = pl.DataFrame(rows, schema=WINDOW_SCHEMA) if rows else pl.DataFrame(schema=WINDOW_SCHEMA)
    return frame.sort(["evaluator", "metric", "window_start"])
