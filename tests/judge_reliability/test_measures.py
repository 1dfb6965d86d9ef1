"""The card's statistics equal the references: statsmodels' Wilson, scikit-learn's κ, pingouin's ICC(2,1)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from evalnb.judge_reliability.measures import (
    icc21,
    kappa_interval,
    position_measures,
    repeat_kappa,
    wilson,
    within_item_sd,
)


@pytest.mark.parametrize(("k", "n"), [(0, 10), (3, 10), (47, 100), (100, 100), (1, 2)])
def test_wilson_equals_statsmodels(k: int, n: int) -> None:
    proportion = pytest.importorskip("statsmodels.stats.proportion")
    low, high = proportion.proportion_confint(k, n, alpha=0.05, method="wilson")
    ours = wilson(k, n)
    assert (ours.low, ours.high) == pytest.approx((low, high), abs=1e-12)


def test_kappa_equals_scikit_learn_and_its_interval_holds_it() -> None:
    metrics = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(1)
    a = rng.random(200) < 0.6
    b = np.where(rng.random(200) < 0.8, a, ~a)
    ours = kappa_interval(a, b)
    assert ours.estimate == pytest.approx(metrics.cohen_kappa_score(a, b), abs=1e-12)
    assert ours.low < ours.estimate < ours.high


@pytest.mark.filterwarnings("ignore::FutureWarning")  # pingouin 0.7 on pandas 3.1's deprecations
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_icc21_equals_pingouin() -> None:
    pingouin = pytest.importorskip("pingouin")
    rng = np.random.default_rng(2)
    item = rng.normal(0, 1, 60)
    scores = item[:, None] + rng.normal(0, 0.5, (60, 3)) + np.array([0.0, 0.2, -0.1])
    long = pd.DataFrame(
        [(i, r, scores[i, r]) for i in range(60) for r in range(3)],
        columns=["item", "rater", "score"],
    )
    table = pingouin.intraclass_corr(long, targets="item", raters="rater", ratings="score")
    rows = table.set_index("Type")
    # ICC(2,1): "ICC2" before pingouin 0.7, "ICC(A,1)" (absolute agreement) since
    icc2 = rows.loc["ICC(A,1)" if "ICC(A,1)" in rows.index else "ICC2"]
    ours = icc21(scores)
    assert ours.estimate == pytest.approx(float(icc2["ICC"]), abs=1e-9)
    low, high = icc2["CI95" if "CI95" in icc2.index else "CI95%"]
    assert (ours.low, ours.high) == pytest.approx((low, high), abs=0.005)  # pingouin rounds


def test_within_item_sd_is_the_pooled_repeat_spread() -> None:
    rng = np.random.default_rng(3)
    scores = rng.normal(0, 1, (400, 1)) + rng.normal(0, 0.3, (400, 2))
    sd = within_item_sd(scores)
    assert sd.low < 0.3 < sd.high
    assert sd.estimate == pytest.approx(0.3, abs=0.03)


def test_position_measures_read_a_first_position_lean() -> None:
    # 10 pairs: 6 keep their winner, 4 flip towards whichever answer was shown first.
    first = ["a"] * 6 + ["a"] * 4
    swapped = ["a"] * 6 + ["b"] * 4
    m = position_measures(first, swapped)
    assert m["flip_rate"].estimate == pytest.approx(0.4)
    assert m["position_lean"].estimate == pytest.approx(1.0)
    assert m["first_position_rate"].estimate == pytest.approx((10 + 4) / 20)


def test_a_constant_rater_has_no_kappa_as_scikit_learn_says() -> None:
    from sklearn import metrics

    from evalnb.calibration.labels import cohen_kappa

    same = np.ones(20, dtype=bool)
    assert np.isnan(cohen_kappa(same, same))
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert np.isnan(metrics.cohen_kappa_score(same, same))
    got = kappa_interval(same, same)
    assert np.isnan(got.estimate) and np.isnan(got.low)
    assert np.isnan(repeat_kappa(np.ones((30, 3), dtype=bool)).estimate)
    codes = np.array([0, 1, 2, 2, 1, 0, 2])
    other = np.array([0, 2, 2, 1, 1, 0, 0])
    assert cohen_kappa(codes, other) == pytest.approx(
        metrics.cohen_kappa_score(codes, other), abs=1e-12
    )


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_weighted_kappa_of_graded_relevance_equals_scikit_learn(weights: str | None) -> None:
    from sklearn import metrics

    from evalnb.calibration.labels import cohen_kappa

    rng = np.random.default_rng(3)
    for _ in range(400):
        n, k = int(rng.integers(1, 25)), int(rng.integers(1, 5))
        a = rng.integers(0, k, n)
        b = a.copy() if rng.random() < 0.2 else np.clip(a + rng.integers(-1, 2, n), 0, 3)
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            theirs = metrics.cohen_kappa_score(a, b, weights=weights)
        ours = cohen_kappa(a, b, weights)
        assert np.isnan(ours) == np.isnan(theirs)
        if not np.isnan(theirs):
            assert ours == pytest.approx(theirs, abs=1e-12)
    with pytest.raises(ValueError, match="weights"):
        cohen_kappa(np.array([1]), np.array([1]), "cubic")
