"""Prediction-powered estimates: valid coverage, narrower when the metric helps, honest when not."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import evalnb
from evalnb.calibration.ppi import ppi_mean
from evalnb_testkit.labs import synthetic_lab

TRUE_RATE = 0.62


def _population(
    rng: np.random.Generator, n_rows: int, informative: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Human verdicts and a metric's verdicts: biased (passes a quarter of the failures)."""
    y = (rng.random(n_rows) < TRUE_RATE).astype(float)
    if not informative:
        return y, (rng.random(n_rows) < 0.8).astype(float)
    f = np.where(rng.random(n_rows) < 0.1, 1 - y, y)
    return y, np.where((y == 0) & (rng.random(n_rows) < 0.25), 1.0, f)


def test_the_interval_covers_the_truth_and_is_narrower_when_the_metric_informs() -> None:
    for informative in (True, False):
        covered, widths, human_widths = 0, [], []
        for seed in range(200):
            rng = np.random.default_rng(seed)
            y, f = _population(rng, 2000, informative)
            picked = rng.choice(2000, 100, replace=False)
            e = ppi_mean(y[picked], f[picked], f)
            covered += e.ci_low <= y.mean() <= e.ci_high
            widths.append(e.ci_high - e.ci_low)
            human_widths.append(e.human_ci[1] - e.human_ci[0])
        assert covered / 200 >= 0.93, (informative, covered)
        ratio = np.mean(widths) / np.mean(human_widths)
        if informative:
            assert ratio < 0.9  # the metric is worth extra labels
        else:
            assert ratio == pytest.approx(1.0, abs=0.03)  # and costs nothing when it is not


def test_a_metric_that_says_nothing_leaves_the_human_estimate_as_it_is() -> None:
    rng = np.random.default_rng(3)
    y = (rng.random(80) < 0.6).astype(float)
    e = ppi_mean(y, np.ones(80), np.ones(5000))  # passes everything
    assert e.lam == 0.0 and e.estimate == pytest.approx(y.mean())
    assert (e.ci_low, e.ci_high) == pytest.approx(e.human_ci)
    assert e.effective_labels == pytest.approx(80)


def test_known_unequal_inclusion_probabilities_are_weighted_out() -> None:
    covered, naive_bias = 0, []
    for seed in range(200):
        rng = np.random.default_rng(seed)
        y, f = _population(rng, 2000, informative=True)
        fails, passes = np.flatnonzero(f == 0), np.flatnonzero(f == 1)
        pick = np.concatenate(
            [rng.choice(fails, 50, replace=False), rng.choice(passes, 50, replace=False)]
        )
        weights = np.where(f[pick] == 0, fails.size / 50, passes.size / 50)
        e = ppi_mean(y[pick], f[pick], f, weights=weights)
        covered += e.ci_low <= y.mean() <= e.ci_high
        naive_bias.append(y[pick].mean() - y.mean())
    assert covered / 200 >= 0.93
    assert abs(np.mean(naive_bias)) > 0.05  # unweighted, the oversampled failures would bias it


def test_the_corrected_leaderboard_uses_sampled_labels_and_leaves_out_active_ones() -> None:
    lab, values = synthetic_lab(3000, seed=4)
    # A reviewer who passes an answer when its score is over 0.4 (the metric's 0.5 is off).
    truth = {cid: v >= 0.4 for cid, v in values.items()}
    w = evalnb.labeler(lab, "ev", "score", reviewer="ann", n=60, strategy="random", seed=1)
    while w.remaining:
        w.label("pass" if truth[w.item["case_id"]] else "fail")
    active = evalnb.labeler(lab, "ev", "score", reviewer="bob", n=20, strategy="active", seed=2)
    while active.remaining:
        active.label("pass" if truth[active.item["case_id"]] else "fail")
    board = lab.calibration.corrected_leaderboard("ev", "score").row(0, named=True)
    assert board["labels_used"] == 60 and board["labels_left_out"] == 20
    true_rate = np.mean(list(truth.values()))
    assert board["ci_low"] <= true_rate <= board["ci_high"]
    assert board["automatic"] == pytest.approx(np.mean([v >= 0.5 for v in values.values()]))
    assert abs(board["automatic"] - true_rate) > 0.05  # the metric alone is off…
    assert board["ci_high"] - board["ci_low"] < board["human_ci_high"] - board["human_ci_low"]
    assert board["effective_labels"] > 60 and 0 < board["metric_weight"] <= 1

    # Labels given by hand count only when vouched for.
    sample = lab.calibration.sample("ev", "score", n=30, strategy="random", seed=9)
    assert set(sample["design"]) == {"random"} and sample["inclusion"].is_not_null().all()
    for cid in sample["case_id"]:
        lab.calibration.add_label(
            cid, "m", "ev", "score", "pass" if truth[cid] else "fail", reviewer="eve"
        )
    assert lab.calibration.corrected_leaderboard("ev", "score")["labels_left_out"].item() == 50
    vouched = lab.calibration.corrected_leaderboard("ev", "score", assume_random=True)
    assert vouched["labels_used"].item() == 90
    with pytest.raises(KeyError, match="no verdicts"):
        lab.calibration.corrected_leaderboard("ev", "nope")
    assert isinstance(vouched, pl.DataFrame)
