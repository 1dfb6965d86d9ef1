"""Recalibration keeps a threshold the labels already agree with (issue 55, item 3)."""

from __future__ import annotations

import polars as pl

import evalnb

EV = "ragas_string_similarity"


def _lab() -> evalnb.Lab:
    answers = ["answer 1", "answer 2", "anzwer 3", "other 4", "nothing at all", "xx 6", "answr 7"]
    frame = pl.DataFrame(
        {
            "prompt": [f"q{i}" for i in range(7)],
            "expected": [f"answer {i + 1}" for i in range(7)],
            "actual": answers,
            "model": ["m"] * 7,
        }
    )
    lab = evalnb.evaluate(evalnb.load(frame), [EV], progress=False)
    lab.set_threshold(EV, EV, 0.75)
    return lab


def _label_all(lab: evalnb.Lab, cut: float) -> None:
    """A reviewer who passes exactly the answers scoring ``cut`` or more."""
    for row in lab.metric_scores(EV, EV).iter_rows(named=True):
        verdict = "pass" if row["value"] >= cut else "fail"
        lab.calibration.add_label(row["case_id"], row["model"], EV, EV, verdict, reviewer="ann")


def test_labels_that_agree_with_the_metric_keep_its_threshold() -> None:
    lab = _lab()
    _label_all(lab, 0.75)  # reviewers agree with the metric everywhere
    fit = lab.calibration.recalibrate(EV, EV, n_boot=200)
    assert fit.kappa_before == fit.kappa_after == 1.0
    assert fit.threshold == 0.75 and fit.rule.startswith("kept")
    low, high = fit.equivalent
    assert low < 0.75 <= high
    assert fit.ci[0] <= 0.75 <= fit.ci[1]  # the interval holds the whole tie
    assert "equally good" in fit.summary()


def test_a_threshold_outside_the_best_range_moves_to_its_middle() -> None:
    lab = _lab()
    _label_all(lab, 0.99)  # reviewers are stricter than the metric
    fit = lab.calibration.recalibrate(EV, EV, n_boot=200)
    low, high = fit.equivalent
    assert not low < 0.75 <= high and fit.threshold == (low + high) / 2
    assert fit.rule.startswith("the middle")
