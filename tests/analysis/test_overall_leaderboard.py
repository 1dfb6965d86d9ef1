"""The overall leaderboard: a defined rank, with intervals that mean what they say."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import evalnb
from evalnb.analysis import overall
from evalnb.analysis.leaderboard import leaderboard
from evalnb.analysis.overall import overall_leaderboard


def _verdicts(rates: dict[str, tuple[float, float]], n: int, seed: int = 0) -> pl.DataFrame:
    """Per model, two primary metrics passed with the given probabilities on ``n`` cases."""
    rng = np.random.default_rng(seed)
    rows = []
    for model, (p1, p2) in rates.items():
        for metric, p in (("m1", p1), ("m2", p2)):
            passed = rng.random(n) < p
            rows.append(
                pl.DataFrame(
                    {
                        "case_id": [f"c{i}" for i in range(n)],
                        "model": model,
                        "evaluator": metric,
                        "metric": metric,
                        "value": passed.astype(float),
                        "passed": passed,
                        "primary": True,
                        "higher_is_better": True,
                        "threshold": 0.5,
                    }
                )
            )
    return pl.concat(rows)


def _table(verdicts: pl.DataFrame, **kw: int) -> pl.DataFrame:
    return overall_leaderboard(verdicts, leaderboard(verdicts, n_boot=200), **kw)


def test_rank_orders_by_the_mean_pass_rate_over_primary_metrics() -> None:
    v = _verdicts({"a": (0.9, 0.2), "b": (0.6, 0.6), "c": (0.3, 0.3)}, n=300)
    table = _table(v)
    board = leaderboard(v, n_boot=50)
    expected = board.group_by("model").agg(pl.col("pass_rate").mean()).sort("model")
    got = table.sort("model")
    assert np.allclose(got["pass_rate"].to_numpy(), expected["pass_rate"].to_numpy())
    # rank follows the overall pass rate (1 = best), whatever wins and mean_rank say
    assert table["rank"].to_list() == [1, 2, 3]
    assert table["pass_rate"].is_sorted(descending=True)
    # a wins m1 outright but is second overall: the summaries may disagree with rank
    a = table.filter(pl.col("model") == "a").row(0, named=True)
    assert a["wins"] == 1 and a["rank"] == 2
    for row in table.iter_rows(named=True):
        assert row["rank_ci_low"] <= row["rank"] <= row["rank_ci_high"]
        assert row["pass_rate_ci_low"] <= row["pass_rate"] <= row["pass_rate_ci_high"]


def test_the_rank_interval_is_wide_for_a_tie_and_tight_for_a_clear_gap() -> None:
    v = _verdicts({"a": (0.7, 0.7), "b": (0.69, 0.71), "c": (0.2, 0.2)}, n=200, seed=3)
    table = _table(v).sort("model")
    ranks = dict(
        zip(
            table["model"],
            zip(table["rank_ci_low"], table["rank_ci_high"], strict=True),
            strict=True,
        )
    )
    assert ranks["a"] == (1, 2) and ranks["b"] == (1, 2)  # cannot tell a from b
    assert ranks["c"] == (3, 3)  # clearly last


def test_tied_models_share_the_better_rank() -> None:
    v = _verdicts({"a": (0.5, 0.5), "b": (0.5, 0.5)}, n=50)
    v = pl.concat(
        [
            v.filter(pl.col("model") == "a"),
            v.filter(pl.col("model") == "a").with_columns(model=pl.lit("b")),
        ]
    )
    assert _table(v)["rank"].to_list() == [1, 1]


def test_the_delta_method_matches_the_bootstrap_on_large_labs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    v = _verdicts({"a": (0.62, 0.58), "b": (0.6, 0.55), "c": (0.4, 0.45)}, n=4000, seed=1)
    # missing verdicts: the delta method must weigh each metric by its own case count
    v = v.filter(
        ~(
            (pl.col("model") == "b")
            & (pl.col("metric") == "m2")
            & (pl.col("case_id").str.ends_with("7"))
        )
    )
    boot = _table(v, n_boot=2000)
    monkeypatch.setattr(overall, "CLT_ROWS", 100)
    delta = _table(v, n_boot=2000)
    width = lambda t: (t["pass_rate_ci_high"] - t["pass_rate_ci_low"]).to_numpy()  # noqa: E731
    assert np.allclose(width(delta), width(boot), rtol=0.1)
    assert delta["rank_ci_low"].to_list() == boot["rank_ci_low"].to_list()
    assert delta["rank_ci_high"].to_list() == boot["rank_ci_high"].to_list()


def test_the_lab_facade_gives_it() -> None:
    from evalnb.api.demo import build_demo_lab

    lab = evalnb.evaluate(build_demo_lab(), ["text_matching", "pii_leakage"], progress=False)
    table = lab.leaderboard(overall=True, n_boot=100)
    assert table.columns == list(overall.COLUMNS)
    assert table["rank"].min() == 1
