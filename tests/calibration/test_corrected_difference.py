"""The difference two systems make as humans would judge it: PPI on both arms, with a label planner."""

from __future__ import annotations

import datetime as dt

import numpy as np
import polars as pl
import pytest

import evalnb
from evalnb.lab.schema import SCHEMAS
from evalnb_testkit.ppi_reference import ppi_python_means

T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def _lab(
    rng: np.random.Generator,
    n: int,
    rates: tuple[float, float],
    labels: tuple[int, int],
    *,
    agree: float = 0.85,
    paired: bool = True,
) -> tuple[evalnb.Lab, float]:
    """Two systems' verdicts on ``n`` cases, humans' on a random sample of each arm.

    Returns the lab and the true difference of the humans' pass rates over its cases.
    """
    ids = [f"c{i}" for i in range(n)]
    latent = rng.normal(size=n)  # a hard case is hard for both systems
    human, rows, label_rows = {}, [], []
    chosen = rng.choice(n, max(labels), replace=False)  # the cases labelled on both arms
    for model, rate, k in zip(("old", "new"), rates, labels, strict=True):
        y = (0.6 * latent + 0.8 * rng.normal(size=n)) < np.quantile(latent, rate)
        f = np.where(rng.random(n) < agree, y, ~y)
        human[model] = y
        rows.append(
            pl.DataFrame(
                {
                    "case_id": ids,
                    "model": model,
                    "sample": 0,
                    "evaluator": "ev",
                    "metric": "ok",
                    "value": f.astype(float),
                    "params": "{}",
                }
            )
        )
        if not paired and model == "new":
            chosen = rng.choice(n, k, replace=False)
        label_rows += [
            {
                "label_id": f"{model}-{i}",
                "case_id": ids[i],
                "model": model,
                "sample": 0,
                "evaluator": "ev",
                "metric": "ok",
                "verdict": "pass" if y[i] else "fail",
                "reviewer": "ann",
                "created_at": T0,
            }
            for i in chosen[:k]
        ]
    metrics = pl.DataFrame(
        [
            {
                "evaluator": "ev",
                "metric": "ok",
                "min": 0.0,
                "max": 1.0,
                "higher_is_better": True,
                "default_threshold": 0.5,
                "primary": True,
            }
        ]
    )
    lab = evalnb.Lab(
        {
            "cases": pl.DataFrame({"case_id": ids, "prompt": ids}),
            "outputs": pl.DataFrame(
                {"case_id": ids * 2, "model": ["old"] * n + ["new"] * n, "sample": 0}
            ),
            "scores": pl.concat(rows),
            "metrics": metrics,
            "labels": pl.DataFrame(label_rows, schema=SCHEMAS["labels"]),
        }
    )
    return lab, float(human["new"].mean() - human["old"].mean())


@pytest.mark.slow  # 300 simulated labs
def test_the_interval_covers_the_true_difference() -> None:
    rng = np.random.default_rng(5)
    covered, widths = [], []
    for _ in range(300):
        lab, truth = _lab(rng, 400, (0.6, 0.7), (60, 60))
        d = lab.calibration.corrected_difference("old", "new", "ev", "ok", assume_random=True)
        r = d.frame.row(0, named=True)
        covered.append(r["ci_low"] <= truth <= r["ci_high"])
        widths.append(r["ci_high"] - r["ci_low"])
    print(f"coverage {np.mean(covered):.1%}, mean width {np.mean(widths):.3f}")
    assert np.mean(covered) >= 0.93


def test_labels_on_the_same_cases_narrow_it_and_the_planner_predicts_it() -> None:
    rng = np.random.default_rng(9)
    lab, _ = _lab(rng, 2000, (0.6, 0.7), (50, 50), paired=True)
    d = lab.calibration.corrected_difference("old", "new", "ev", "ok", assume_random=True)
    r = d.frame.row(0, named=True)
    assert r["labels_paired"] == 50
    half = (r["ci_high"] - r["ci_low"]) / 2
    plan = d.label_plan.filter((pl.col("arm") == "both") & (pl.col("more_labels") == 100))
    predicted = plan["half_width"].item()
    assert predicted < half
    # Labelling 100 more of the same cases: the half-width the planner promised, within 25 %.
    widths = []
    for seed in range(20):
        big, _ = _lab(np.random.default_rng(100 + seed), 2000, (0.6, 0.7), (150, 150))
        e = big.calibration.corrected_difference("old", "new", "ev", "ok", assume_random=True).frame
        widths.append((e["ci_high"].item() - e["ci_low"].item()) / 2)
    assert np.mean(widths) == pytest.approx(predicted, rel=0.25)
    unpaired, _ = _lab(np.random.default_rng(9), 2000, (0.6, 0.7), (50, 50), paired=False)
    u = unpaired.calibration.corrected_difference(
        "old", "new", "ev", "ok", assume_random=True
    ).frame
    assert u["labels_paired"].item() < 10
    assert "more labels on" in str(d)


def test_the_superpopulation_difference_equals_ppi_python_on_the_paired_differences() -> None:
    rng = np.random.default_rng(2)
    lab, _ = _lab(rng, 500, (0.55, 0.7), (80, 80))
    ours = lab.calibration.corrected_difference(
        "old", "new", "ev", "ok", assume_random=True, method="superpopulation", level=0.9
    ).frame.row(0, named=True)
    scores = lab.scores.pivot(on="model", index="case_id", values="value")
    labels = lab.labels.pivot(on="model", index="case_id", values="verdict").drop_nulls()
    both = scores.join(labels, on="case_id", suffix="_y").sort("case_id")
    rest = scores.join(labels, on="case_id", how="anti")
    case = {
        "y": ((both["new_y"] == "pass").cast(float) - (both["old_y"] == "pass").cast(float)),
        "f": both["new"] - both["old"],
        "u": rest["new"] - rest["old"],
    }
    est, low, high = ppi_python_means([{k: v.to_list() for k, v in case.items()}], alpha=0.1)[0]
    assert ours["corrected"] == pytest.approx(est, abs=1e-9)
    assert ours["ci_low"] == pytest.approx(low, abs=1e-9)
    assert ours["ci_high"] == pytest.approx(high, abs=1e-9)


def test_too_few_labels_say_what_to_do() -> None:
    lab, _ = _lab(np.random.default_rng(1), 100, (0.6, 0.7), (1, 1))
    with pytest.raises(ValueError, match="label a random sample of both"):
        lab.calibration.corrected_difference("old", "new", "ev", "ok", assume_random=True)
    with pytest.raises(ValueError, match="method"):
        lab.calibration.corrected_difference("old", "new", "ev", "ok", method="bayes")
    # Labels outside a batch do not count unless vouched for, and the note says so.
    lab, _ = _lab(np.random.default_rng(1), 100, (0.6, 0.7), (30, 30))
    with pytest.raises(ValueError, match="at least 2 random labels"):
        lab.calibration.corrected_difference("old", "new", "ev", "ok")
