"""Agreement statistics equal the reference packages: krippendorff's α, statsmodels' Fleiss' κ,
scikit-learn's Cohen's κ (issue 44)."""

from __future__ import annotations

import itertools
import warnings

import krippendorff
import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import fleiss_kappa as statsmodels_fleiss

from evalnb.team.agreement import agreement_table
from evalnb_testkit.budget import examples


def _labels(draw: st.DrawFn, categories: int, numeric: bool) -> pl.DataFrame:
    units = draw(st.integers(2, 25))
    raters = draw(st.integers(2, 5))
    rows = []
    for u in range(units):
        for r in range(raters):
            if draw(st.booleans()) or r < 2:  # at least two labels a unit
                value = draw(st.integers(0, categories - 1))
                rows.append({"item_id": u, "reviewer": f"r{r}", "label": value})
    frame = pl.DataFrame(rows)
    return frame.with_columns(pl.col("label").cast(pl.Float64 if numeric else pl.Int64))


def _matrix(frame: pl.DataFrame) -> np.ndarray:
    raters = sorted(set(frame["reviewer"]))
    units = sorted(set(frame["item_id"]))
    out = np.full((len(raters), len(units)), np.nan)
    for row in frame.iter_rows(named=True):
        out[raters.index(row["reviewer"]), units.index(row["item_id"])] = row["label"]
    return out


@settings(max_examples=examples(60), deadline=None)
@given(data=st.data(), level=st.sampled_from(["nominal", "interval"]))
def test_alpha_equals_the_krippendorff_package(data: st.DataObject, level: str) -> None:
    frame = _labels(data.draw, data.draw(st.integers(2, 5)), level == "interval")
    matrix = _matrix(frame)
    if len(np.unique(matrix[~np.isnan(matrix)])) < 2:
        return  # one value only: the package raises, ours says "undefined" (null)
    ours = agreement_table(frame, level=level, n_boot=0).row(0, named=True)
    theirs = krippendorff.alpha(reliability_data=matrix, level_of_measurement=level)
    assert ours["measure"] == f"krippendorff_alpha_{level}"
    assert ours["estimate"] == pytest.approx(theirs, abs=1e-9)


@settings(max_examples=examples(60), deadline=None)
@given(data=st.data())
def test_fleiss_and_cohen_equal_statsmodels_and_scikit_learn(data: st.DataObject) -> None:
    k = data.draw(st.integers(2, 4))
    raters = data.draw(st.integers(2, 5))
    units = data.draw(st.integers(3, 25))
    codes = np.array(
        [[data.draw(st.integers(0, k - 1)) for _ in range(raters)] for _ in range(units)]
    )
    frame = pl.DataFrame(
        {
            "item_id": np.repeat(np.arange(units), raters),
            "reviewer": [f"r{r}" for _ in range(units) for r in range(raters)],
            "label": codes.ravel(),
        }
    )
    table = agreement_table(frame, n_boot=0)
    counts = np.stack([np.bincount(row, minlength=k) for row in codes])
    fleiss = table.filter(pl.col("measure") == "fleiss_kappa")["estimate"][0]
    with warnings.catch_warnings(), np.errstate(all="ignore"):  # degenerate draws: NaN
        warnings.simplefilter("ignore")
        expected = statsmodels_fleiss(counts, method="fleiss")
    if np.isfinite(expected):
        assert fleiss == pytest.approx(expected, abs=1e-9)
    cohen = table.filter(pl.col("measure") == "cohen_kappa")
    for i, j in itertools.combinations(range(raters), 2):
        ours = cohen.filter(pl.col("raters") == f"r{i} | r{j}")["estimate"][0]
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            theirs = cohen_kappa_score(codes[:, i], codes[:, j], labels=list(range(k)))
        if np.isfinite(theirs) and ours is not None:
            assert ours == pytest.approx(theirs, abs=1e-9)


def test_intervals_cover_the_estimate_and_narrow_with_more_items() -> None:
    rng = np.random.default_rng(0)

    def frame(units: int) -> pl.DataFrame:
        truth = rng.integers(0, 2, units)
        rows = [
            {"item_id": u, "reviewer": f"r{r}", "label": int(truth[u] ^ (rng.random() < 0.1))}
            for u in range(units)
            for r in range(3)
        ]
        return pl.DataFrame(rows)

    small = agreement_table(frame(30), n_boot=400).row(0, named=True)
    large = agreement_table(frame(600), n_boot=400).row(0, named=True)
    for row in (small, large):
        assert row["ci_low"] <= row["estimate"] <= row["ci_high"]
    assert large["ci_high"] - large["ci_low"] < small["ci_high"] - small["ci_low"]
