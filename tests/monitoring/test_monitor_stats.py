"""The monitor's statistics: PPI equal to ppi-python's, and the confidence sequence's promises.

The simulated streams check what a risk owner is told in docs/workflows/monitoring.md, through
the same code ``Monitor.windows`` runs (``estimate_windows``): checked after every window,
the confidence sequence covers the true pass rate in at least 95 % of streams; a 5-point
drop is flagged within 2,000 traces in at least 80 %; a stream whose pass rate stays at the
accepted level raises an alarm in at most 5 %.
"""

from __future__ import annotations

import datetime as dt

import numpy as np
import polars as pl
import pytest

from evalnb.calibration.ppi import ppi_superpopulation
from evalnb.monitoring.stats import confidence_sequence, ppi_increments
from evalnb.monitoring.windows import Settings, estimate_windows
from evalnb_testkit.ppi_reference import ppi_python_means

# The scenario of every stream: 30 daily windows of 200 traces, 50 of each labelled at
# random; the metric agrees with the reviewers on 97 % of traces.
WINDOWS, PER_WINDOW, LABELS, AGREE = 30, 200, 50, 0.97
T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def test_the_fixed_time_estimate_and_interval_equal_ppi_python() -> None:
    rng = np.random.default_rng(7)
    cases = []
    for n, big_n, agree in [(50, 150, 0.97), (20, 1000, 0.8), (200, 5000, 0.6), (10, 30, 1.0)]:
        y = (rng.random(n + big_n) < 0.85).astype(float)
        f = np.where(rng.random(n + big_n) < agree, y, 1 - y)
        cases.append({"y": y[:n].tolist(), "f": f[:n].tolist(), "u": f[n:].tolist()})
    # Scores, not verdicts: PPI of a mean takes any numbers.
    s = rng.random(400)
    cases.append(
        {
            "y": (s[:40] + rng.normal(0, 0.1, 40)).tolist(),
            "f": s[:40].tolist(),
            "u": s[40:].tolist(),
        }
    )
    reference = ppi_python_means(cases, alpha=0.1)
    for case, (est, low, high) in zip(cases, reference, strict=True):
        ours = ppi_superpopulation(
            np.array(case["y"]), np.array(case["f"]), np.array(case["u"]), level=0.9
        )
        assert ours.estimate == pytest.approx(est, abs=1e-9)
        assert ours.low == pytest.approx(low, abs=1e-9)
        assert ours.high == pytest.approx(high, abs=1e-9)


def _stream(rng: np.random.Generator, rates: list[float]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Counts and labelled traces of one simulated stream, as Monitor.windows reads them."""
    agg, labelled = [], []
    for w, rate in enumerate(rates):
        start = T0 + dt.timedelta(days=w)
        y = rng.random(PER_WINDOW) < rate
        f = np.where(rng.random(PER_WINDOW) < AGREE, y, ~y)
        chosen = rng.choice(PER_WINDOW, LABELS, replace=False)
        agg.append((start, "ev", "m", "b", PER_WINDOW, PER_WINDOW, int(f.sum())))
        labelled += [
            (start, "ev", "m", "random", int(f[i]), int(y[i]), LABELS / PER_WINDOW) for i in chosen
        ]
    agg_frame = pl.DataFrame(
        agg,
        schema=["window_start", "evaluator", "metric", "bundle_hash", "n", "scored", "passes"],
        orient="row",
    )
    lab_frame = pl.DataFrame(
        labelled,
        schema=["window_start", "evaluator", "metric", "strategy", "predicted", "human", "pi"],
        orient="row",
    )
    return agg_frame, lab_frame


def _run(rng: np.random.Generator, rates: list[float], accepted: float) -> pl.DataFrame:
    metrics = pl.DataFrame({"evaluator": ["ev"], "metric": ["m"], "accepted": [accepted]})
    agg, labelled = _stream(rng, rates)
    return estimate_windows(agg, labelled, metrics, Settings())


@pytest.fixture(scope="module")
def steady() -> list[pl.DataFrame]:
    """1,000 streams whose pass rate stays at 0.90, the accepted level."""
    rng = np.random.default_rng(2026)
    return [_run(rng, [0.90] * WINDOWS, 0.90) for _ in range(1000)]


@pytest.mark.slow  # hundreds of simulated streams: the slow tier
@pytest.mark.xdist_group("steady_streams")  # `steady` is simulated once: on one worker
def test_the_sequence_covers_the_true_rate_at_every_window_in_95_percent_of_streams(
    steady: list[pl.DataFrame],
) -> None:
    covered = [bool(((w["cs_low"] <= 0.90) & (w["cs_high"] >= 0.90)).all()) for w in steady]
    assert np.mean(covered) >= 0.95
    # The fixed-time interval, looked at 30 times, does not keep its promise: the reason the
    # sequence exists (and a check that this simulation can tell them apart).
    fixed = [
        bool(((w["corrected_low"] <= 0.90) & (w["corrected_high"] >= 0.90)).all()) for w in steady
    ]
    assert np.mean(fixed) < 0.95


@pytest.mark.slow  # hundreds of simulated streams: the slow tier
@pytest.mark.xdist_group("steady_streams")  # `steady` is simulated once: on one worker
def test_a_stream_that_keeps_the_accepted_rate_rarely_alarms(steady: list[pl.DataFrame]) -> None:
    alarmed = [bool(w["below_accepted"].any()) for w in steady]
    assert np.mean(alarmed) <= 0.05


@pytest.mark.slow  # hundreds of simulated streams: the slow tier
def test_a_five_point_drop_is_flagged_within_2000_traces_in_80_percent_of_streams() -> None:
    rng = np.random.default_rng(11)
    change = 10  # the windows before it at 0.90, from it on at 0.85
    flagged = 0
    for _ in range(1000):
        w = _run(rng, [0.90] * change + [0.85] * (WINDOWS - change), 0.90)
        alarms = w.with_row_index("i").filter(pl.col("below_accepted"))["i"].to_list()
        first = alarms[0] if alarms else None
        if first is not None and change <= first and (first + 1 - change) * PER_WINDOW <= 2000:
            flagged += 1
    assert flagged / 1000 >= 0.80


def test_increments_have_the_pass_rate_for_mean_whatever_the_metric() -> None:
    rng = np.random.default_rng(3)
    y = rng.random(200_000) < 0.7
    metric = rng.random(200_000) < 0.5  # a metric that knows nothing
    labelled = rng.random(200_000) < 0.25
    z = ppi_increments(metric, y, labelled, 0.25, lam=0.8, centre=0.1)
    assert z.mean() == pytest.approx(0.7, abs=0.01)
    mean, low, high = confidence_sequence(z)
    assert low[-1] <= 0.7 <= high[-1] and mean[-1] == pytest.approx(z.mean())
