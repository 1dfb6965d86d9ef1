"""Early stopping: an anytime-valid verdict that keeps its error rate and saves calls."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from scipy import stats

import evalnb
from evalnb.analysis.sequential import running_interval, settled, stream_verdict
from evalnb_testkit.llm_server import LoopbackLLM


def _pairs(rng: np.random.Generator, n: int, pa: float, pb: float) -> np.ndarray:
    """Paired pass/fail differences (candidate − baseline) whose arms correlate (ρ 0.5)."""
    z = rng.multivariate_normal([0, 0], [[1, 0.5], [0.5, 1]], size=n)
    a = z[:, 0] < stats.norm.ppf(pa)
    b = z[:, 1] < stats.norm.ppf(pb)
    return b.astype(float) - a.astype(float)


def test_a_a_streams_rarely_get_a_verdict_whatever_the_looks() -> None:
    rng = np.random.default_rng(7)
    runs = 1000
    looked = [stream_verdict(_pairs(rng, 400, 0.7, 0.7), batch=20)[0] for _ in range(runs)]
    false = sum(v in ("better", "worse") for v in looked) / runs
    # Peeking with a fixed-n test after every batch, as one would by hand, for comparison.
    rng = np.random.default_rng(7)
    d = np.stack([_pairs(rng, 400, 0.7, 0.7) for _ in range(runs)])
    looks = np.arange(40, 401, 20)
    s1, s2 = np.cumsum(d, axis=1)[:, looks - 1], np.cumsum(d**2, axis=1)[:, looks - 1]
    var = (s2 - s1**2 / looks) / (looks - 1)
    t = (s1 / looks) / np.sqrt(np.where(var > 0, var, np.inf) / looks)
    naive = int((np.abs(t) > stats.t.ppf(0.975, looks - 1)).any(axis=1).sum())
    print(f"A/A, 20 looks: sequence {false:.1%} false verdicts, naive peeking {naive / runs:.1%}")
    assert false <= 0.05
    assert naive / runs > 0.1  # the reason a sequence is needed


def test_it_reaches_the_fixed_designs_power_with_forty_percent_fewer_calls() -> None:
    rng = np.random.default_rng(3)
    pa, pb = 0.6, 0.7
    big = _pairs(rng, 200_000, pa, pb)
    delta, sd = float(big.mean()), float(big.std())
    n80 = math.ceil((1.959964 + 0.841621) ** 2 * sd**2 / delta**2)
    runs = 400
    results = [stream_verdict(_pairs(rng, 3 * n80, pa, pb), batch=20) for _ in range(runs)]
    power = sum(v == "better" for v, _ in results) / runs
    calls = float(np.mean([t for _, t in results]))
    # The fixed design with that power, by the same formula plan() uses.
    z_beta = stats.norm.ppf(power)
    n_fixed = math.ceil((1.959964 + z_beta) ** 2 * sd**2 / delta**2)
    fixed_power = np.mean(
        [stats.ttest_1samp(_pairs(rng, n_fixed, pa, pb), 0).pvalue < 0.05 for _ in range(runs)]
    )
    print(
        f"true difference {delta:.3f}: sequential power {power:.1%} with {calls:.0f} pairs on "
        f"average; a fixed design needs {n_fixed} for that power (measured {fixed_power:.1%}): "
        f"{1 - calls / n_fixed:.0%} fewer calls"
    )
    assert abs(fixed_power - power) < 0.04  # the same power, as the formula promised
    assert calls <= 0.6 * n_fixed


def test_the_running_interval_covers_the_mean_at_every_look() -> None:
    rng = np.random.default_rng(11)
    misses = 0
    for _ in range(500):
        d = _pairs(rng, 600, 0.5, 0.5)
        _, low, high = running_interval(d, alpha=0.05, t_opt=300)
        misses += bool(((low[29:] > 0) | (high[29:] < 0)).any())
    assert misses / 500 <= 0.05


def test_a_margin_settles_equivalence_and_non_inferiority() -> None:
    assert settled(-0.01, 0.01, 0.02) == "equivalent"
    assert settled(-0.01, 0.05, 0.02) == "non-inferior"
    assert settled(0.001, 0.05, 0.02) == "better"
    assert settled(-0.05, -0.03, 0.02) == "worse"
    assert settled(-0.05, 0.01, 0.02) is None
    assert settled(-0.05, 0.01, None) is None


def _lab(n: int) -> evalnb.Lab:
    return evalnb.load(
        pl.DataFrame(
            {
                "case_id": [f"c{i:03d}" for i in range(n)],
                "prompt": [f"What is {i} + 1?" for i in range(n)],
                "expected": [str(i + 1) for i in range(n)],
            }
        )
    )


def _systems(good: float, bad: float) -> LoopbackLLM:
    """Two systems behind one endpoint: each right on a fixed share of the questions."""

    def answer(model: str, prompt: str) -> str:
        i = int(prompt.split()[2])
        share = good if model == "new" else bad
        return str(i + 1) if (i * 7919) % 100 < share * 100 else "no idea"

    return LoopbackLLM(per_model=answer)


@pytest.mark.services  # a loopback LLM server (tests/conftest.py's tiers)
def test_run_suite_stops_once_settled_and_says_what_it_saved() -> None:
    lab = _lab(400)
    rule = lab.decisions.rule("old", "new", "ragas_exact_match", batch=25)
    with _systems(0.9, 0.5) as server:
        client = evalnb.LLMClient(server.base_url, "x", cache=False)
        out = evalnb.run_suite(lab, client, ["old", "new"], until=rule, progress=False)
        calls = server.total_calls
    asked = out.outputs["case_id"].n_unique()
    assert rule.verdict == "better"
    assert asked < 200 and asked % 25 == 0
    assert rule.calls_saved == (400 - asked) * 2
    assert calls <= asked * 2 + 10  # the capability probes aside, one call per answer
    # The lab comes back scored, and lab.decisions.decide agrees on the same answers.
    assert out.scores.filter(pl.col("evaluator") == "ragas_exact_match").height == asked * 2
    assert "calls saved" in str(rule)
    # The random order: not the lab's first cases.
    assert set(out.outputs["case_id"].unique()) != {f"c{i:03d}" for i in range(asked)}


@pytest.mark.services  # a loopback LLM server (tests/conftest.py's tiers)
def test_a_a_run_asks_everything_and_stays_inconclusive() -> None:
    lab = _lab(120)
    rule = evalnb.decisions.sequential("old", "new", "ragas_exact_match", batch=40)
    with _systems(0.6, 0.6) as server:
        client = evalnb.LLMClient(server.base_url, "x", cache=False)
        out = evalnb.run_suite(lab, client, ["old", "new"], until=rule, progress=False)
    assert out.outputs.height == 240
    assert rule.verdict == "inconclusive" and rule.calls_saved == 0
    assert len(rule.looks) == 3


def test_clusters_are_asked_whole() -> None:
    lab = _lab(90)
    lab = lab.with_tables(
        {"cases": lab.cases.with_columns(topic=pl.Series([f"d{i // 9}" for i in range(90)]))}
    )
    rule = lab.decisions.rule("old", "new", "ragas_exact_match", batch=20)
    assert rule.cluster == "topic"  # the lab's topics, by default, as lab.decisions.decide
    batches = rule.order(lab.cases)
    assert sorted(c for b in batches for c in b) == sorted(lab.cases["case_id"])
    docs = lab.cases.select("case_id", doc="topic")
    for batch in batches:
        in_batch = docs.filter(pl.col("case_id").is_in(batch))
        assert all(
            docs.filter(pl.col("doc") == d).height == in_batch.filter(pl.col("doc") == d).height
            for d in in_batch["doc"].unique()
        )


def test_bad_rules_say_what_was_expected() -> None:
    with pytest.raises(ValueError, match="margin"):
        evalnb.decisions.sequential("a", "b", "ragas_exact_match", margin=-1)
    with pytest.raises(ValueError, match="batch"):
        evalnb.decisions.sequential("a", "b", "ragas_exact_match", batch=0)
    with pytest.raises(ValueError, match="not a case column"):
        _lab(3).decisions.rule("a", "b", "ragas_exact_match", cluster="nope")
