"""Decisions between two systems (issue 59): equal to the reference tests, honest error rates."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest
from scipy import stats

import evalnb
from evalnb.analysis.paired_tests import adjust, paired_test
from evalnb.cli.main import main


def _clustered(
    rng: np.random.Generator,
    clusters: int = 50,
    per: int = 10,
    icc: float = 0.7,
    shift: float = 0.0,
) -> tuple[np.ndarray, np.ndarray]:
    groups = np.repeat(np.arange(clusters), per)
    d = rng.normal(0, np.sqrt(icc), clusters)[groups] + rng.normal(
        0, np.sqrt(1 - icc), clusters * per
    )
    return d + shift, groups


def test_cr1_equals_statsmodels_ols_clustered_to_1e9() -> None:
    sm = pytest.importorskip("statsmodels.api")
    rng = np.random.default_rng(3)
    d, groups = _clustered(rng, clusters=17, per=7)
    d = d[:-5]  # clusters of unequal size
    groups = groups[:-5]
    test = paired_test(np.zeros_like(d), d, clusters=groups, bootstrap=False)
    fit = sm.OLS(d, np.ones((d.size, 1))).fit(cov_type="cluster", cov_kwds={"groups": groups})
    assert test.se == pytest.approx(float(fit.bse[0]), abs=1e-9)
    assert test.difference == pytest.approx(float(fit.params[0]), abs=1e-12)
    assert test.clusters == 17 and test.method == "CR1, t(16)"


@pytest.mark.slow  # 500 simulated labs, each bootstrapped over 46,656 weight patterns
def test_few_unequal_clusters_get_the_wild_bootstrap_which_keeps_the_error_rate() -> None:
    rng = np.random.default_rng(0)
    sizes = np.array([3, 40] * 3)  # six clusters; the big ones vary more
    groups = np.repeat(np.arange(6), sizes)
    cr1 = wild = covered = 0
    runs = 500
    for _ in range(runs):
        effect = rng.normal(0, 1, 6) * np.where(sizes > 10, 1.0, 0.2)
        d = effect[groups] + rng.normal(0, 0.5, groups.size)
        plain = paired_test(np.zeros_like(d), d, clusters=groups, bootstrap=False)
        boot = paired_test(np.zeros_like(d), d, clusters=groups)
        assert boot.method == "wild cluster bootstrap"
        assert (boot.p_value < 0.05) == (not boot.ci_low <= 0 <= boot.ci_high)
        cr1 += plain.p_value < 0.05
        wild += boot.p_value < 0.05
        covered += boot.ci_low <= 0 <= boot.ci_high
    print(f"6 unequal clusters, A/A: CR1 t(5) {cr1 / runs:.1%} false, wild {wild / runs:.1%}")
    assert cr1 / runs > 0.1  # why the bootstrap is needed
    assert wild / runs <= 0.05
    assert covered / runs >= 0.95


def test_mcnemar_equals_statsmodels_exact() -> None:
    contingency = pytest.importorskip("statsmodels.stats.contingency_tables")
    rng = np.random.default_rng(5)
    a = (rng.random(300) < 0.6).astype(float)
    b = np.where(rng.random(300) < 0.15, 1 - a, a)
    test = paired_test(a, b)
    table = [
        [np.sum((a == 1) & (b == 1)), np.sum((a == 1) & (b == 0))],
        [np.sum((a == 0) & (b == 1)), np.sum((a == 0) & (b == 0))],
    ]
    assert test.method == "exact McNemar"
    assert test.p_value == pytest.approx(contingency.mcnemar(table, exact=True).pvalue, abs=1e-12)


def test_paired_t_and_wilcoxon_equal_scipy() -> None:
    rng = np.random.default_rng(7)
    a = rng.normal(0.5, 0.2, 80)
    b = a + rng.normal(0.03, 0.1, 80)
    test = paired_test(a, b)
    assert test.p_value == pytest.approx(stats.ttest_rel(b, a).pvalue, abs=1e-12)
    assert test.p_wilcoxon == pytest.approx(stats.wilcoxon(b, a).pvalue, abs=1e-12)


@pytest.mark.parametrize("method", ["holm", "by"])
def test_adjustments_equal_statsmodels(method: str) -> None:
    multitest = pytest.importorskip("statsmodels.stats.multitest")
    p = np.array([0.001, 0.04, 0.03, 0.2, 0.5, 0.0001, 0.049, 0.9])
    theirs = multitest.multipletests(p, method="holm" if method == "holm" else "fdr_by")[1]
    np.testing.assert_allclose(adjust(p, method), theirs, atol=1e-12)


@pytest.mark.slow  # 2,000 simulated labs
def test_aa_labs_rarely_call_a_winner_clustered_or_not(capsys: pytest.CaptureFixture[str]) -> None:
    """1,000 A/A labs of 50 clusters × 10 cases (ICC 0.7), then independent cases."""
    rng = np.random.default_rng(0)
    for icc in (0.7, 0.0):
        ours = naive = covered = 0
        for _ in range(1000):
            d, groups = _clustered(rng, icc=icc)
            test = paired_test(np.zeros_like(d), d, clusters=groups if icc else None)
            ours += test.p_value < 0.05
            covered += test.ci_low <= 0 <= test.ci_high
            naive += stats.ttest_1samp(d, 0).pvalue < 0.05
        with capsys.disabled():
            print(
                f"\nA/A ICC {icc}: decide {ours / 10:.1f} % false verdicts, naive paired t {naive / 10:.1f} %, coverage {covered / 10:.1f} %"
            )
        assert ours <= 55 and covered >= 940
        if icc:
            assert naive > 200  # the naive test is badly wrong here (what decide fixes)


def test_plan_predicts_the_cases_for_the_power_asked() -> None:
    """A pilot of 1,000 cases, a true 3-point gain: the planned n reaches 80 % ± 5 points."""
    rng = np.random.default_rng(11)
    sd = 0.15

    def lab(n: int, gain: float) -> evalnb.Lab:
        base = rng.uniform(0.3, 0.7, n)
        a = base + rng.normal(0, sd, n)
        b = base + gain + rng.normal(0, sd, n)
        ids = [f"c{i}" for i in range(n)]
        scores = pl.DataFrame(
            {
                "case_id": ids * 2,
                "model": ["A"] * n + ["B"] * n,
                "sample": 0,
                "evaluator": "ev",
                "metric": "score",
                "value": np.concatenate([a, b]),
                "params": "{}",
            }
        )
        return _lab(ids, scores)

    pilot = lab(1000, 0.03)
    planned = evalnb.decisions.plan(
        pilot, "ev.score", baseline="A", candidate="B", mde=0.03, power=0.8
    )
    hits = 0
    for _ in range(1000):
        d = rng.normal(0.03, sd * np.sqrt(2), planned.cases)
        hits += paired_test(np.zeros_like(d), d).p_value < 0.05
    assert abs(hits / 1000 - 0.8) <= 0.05, (planned, hits)
    assert "cases" in str(planned) and planned.detectable_now > 0.01


def _lab(ids: list[str], scores: pl.DataFrame, topics: list[str] | None = None) -> evalnb.Lab:
    cases = pl.DataFrame({"case_id": ids, "prompt": [f"q {i}" for i in ids]})
    if topics is not None:
        cases = cases.with_columns(topic=pl.Series(topics))
    models = scores["model"].unique().to_list()
    outputs = pl.DataFrame(
        {
            "case_id": [i for _ in models for i in ids],
            "model": [m for m in models for _ in ids],
            "sample": 0,
            "actual": "a",
        }
    )
    metrics = pl.DataFrame(
        [
            {
                "evaluator": e,
                "metric": m,
                "domain": "generation",
                "title": m,
                "description": "",
                "min": 0.0,
                "max": 1.0,
                "higher_is_better": m != "toxicity",
                "default_threshold": 0.5,
                "primary": m == "score",
            }
            for e, m in scores.select("evaluator", "metric").unique().iter_rows()
        ]
    )
    return evalnb.Lab({"cases": cases, "outputs": outputs, "scores": scores, "metrics": metrics})


def _ab(
    n: int, gain: float, seed: int, toxicity_gain: float = 0.0, clusters: int = 0
) -> evalnb.Lab:
    rng = np.random.default_rng(seed)
    ids = [f"c{i}" for i in range(n)]
    base = rng.uniform(0.2, 0.8, n)
    a = base + rng.normal(0, 0.1, n)
    b = base + gain + rng.normal(0, 0.1, n)
    ta = rng.uniform(0, 0.1, n)
    tb = ta + toxicity_gain + rng.normal(0, 0.01, n)
    rows = []
    for metric, (va, vb) in {"score": (a, b), "toxicity": (ta, tb)}.items():
        for model, v in (("A", va), ("B", vb)):
            rows.append(
                pl.DataFrame(
                    {
                        "case_id": ids,
                        "model": model,
                        "sample": 0,
                        "evaluator": metric if metric == "toxicity" else "ev",
                        "metric": metric,
                        "value": v,
                        "params": "{}",
                    }
                )
            )
    topics = [f"t{i % clusters}" for i in range(n)] if clusters else None
    return _lab(ids, pl.concat(rows), topics)


def test_decide_calls_better_worse_and_guards(tmp_path: Path) -> None:
    better = _ab(300, 0.05, 1).decisions.decide("A", "B", metrics=["ev.score"])
    assert better.verdict == "better" and better.frame["verdict"].to_list() == ["better"]
    assert better.frame["difference"][0] == pytest.approx(0.05, abs=0.02)
    worse = _ab(300, 0.05, 1, toxicity_gain=0.02).decisions.decide(
        "A", "B", metrics=["ev.score"], guardrails=["toxicity"]
    )
    assert worse.verdict == "worse"
    assert dict(zip(worse.frame["metric"], worse.frame["verdict"], strict=True)) == {
        "score": "better",
        "toxicity": "worse",
    }
    same = _ab(300, 0.0, 2).decisions.decide("A", "B", metrics=["ev.score"], margin=0.05)
    assert same.verdict == "non-inferior" and same.frame["verdict"][0] in (
        "equivalent",
        "non-inferior",
    )
    small = _ab(20, 0.0, 3).decisions.decide("A", "B", metrics=["ev.score"])
    assert small.verdict == "inconclusive" and "would not have been seen" in small.explain()
    clustered = _ab(300, 0.0, 4, clusters=10).decisions.decide("A", "B", metrics=["ev.score"])
    assert clustered.cluster == "topic" and "topic" in clustered.notes[0]
    sliced = _ab(300, 0.05, 5, clusters=3).decisions.decide(
        "A", "B", metrics=["ev.score"], cluster="", slices="topic"
    )
    assert sliced.frame.height == 4 and sorted(sliced.frame["slice"].to_list()) == [
        "",
        "t0",
        "t1",
        "t2",
    ]


def test_the_gate_exits_allow_reject_inconclusive_and_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = {"allow": _ab(300, 0.05, 1), "reject": _ab(300, -0.05, 1), "wait": _ab(15, 0.0, 3)}
    codes = {}
    for name, lab in cases.items():
        store = lab.save(tmp_path / f"{name}.duckdb")
        codes[name] = main(
            ["gate", str(store), "--baseline", "A", "--candidate", "B", "--metric", "ev.score"]
        )
    assert codes == {"allow": 0, "reject": 1, "wait": 2}
    assert "B vs A: WORSE" in capsys.readouterr().out
    assert (
        main(["gate", str(tmp_path / "allow.duckdb"), "--baseline", "A", "--candidate", "Z"]) == 3
    )
    assert "not in the lab" in capsys.readouterr().err


def test_assert_not_worse_fails_with_the_explanation() -> None:
    evalnb.testing.assert_not_worse(_ab(300, 0.0, 2), "A", "B", metric="ev.score", margin=0.05)
    with pytest.raises(AssertionError, match="WORSE"):
        evalnb.testing.assert_not_worse(_ab(300, -0.05, 1), "A", "B", metric="ev.score")


def test_a_hundred_aa_pull_requests_are_rarely_rejected() -> None:
    rejected = sum(
        _ab(120, 0.0, 1000 + i, clusters=12)
        .decisions.decide("A", "B", metrics=["ev.score"], margin=0.02)
        .verdict
        == "worse"
        for i in range(100)
    )
    assert rejected <= 5


def test_the_view_and_the_report_draw_the_differences_with_the_margin(tmp_path: Path) -> None:
    lab = _ab(200, 0.03, 8, toxicity_gain=0.0)
    renamed = {"A": "<b>old</b>", "B": "new&shiny"}
    lab = lab.with_tables(
        {
            "scores": lab.scores.with_columns(pl.col("model").replace(renamed)),
            "outputs": lab.outputs.with_columns(pl.col("model").replace(renamed)),
        }
    )
    d = lab.decisions.decide(
        "<b>old</b>", "new&shiny", metrics=["ev.score", "toxicity"], margin=0.02
    )
    view = d._repr_html_()
    assert "<svg" in view and "&lt;b&gt;old&lt;/b&gt;" in view and "<b>old</b>" not in view
    assert "margin ±0.02" in view and view.count("<tr>") == 1 + d.frame.height
    report = lab.report(tmp_path / "r.html", decisions=[d]).html
    assert "<h2>Decisions</h2>" in report and report.count("<svg") >= 2
    assert "<b>old</b>" not in report


def _binary_lab(a: np.ndarray, b: np.ndarray, topics: list[str] | None, higher: bool) -> evalnb.Lab:
    ids = [f"c{i}" for i in range(a.size)]
    rows = [
        pl.DataFrame(
            {
                "case_id": ids,
                "model": model,
                "sample": 0,
                "evaluator": "ev",
                "metric": "score" if higher else "toxicity",
                "value": v.astype(float),
                "params": "{}",
            }
        )
        for model, v in (("A", a), ("B", b))
    ]
    return _lab(ids, pl.concat(rows), topics)


def test_one_cluster_gives_no_verdict_and_says_why() -> None:
    rng = np.random.default_rng(1)
    a = (rng.random(200) < 0.5).astype(float)
    b = (rng.random(200) < 0.5).astype(float)
    for topics in (["only"] * 200, [None] * 200):
        lab = _binary_lab(a, b, topics, higher=True)
        got = lab.decisions.decide("A", "B", metrics=["ev.score"], cluster="topic")
        assert got.verdict == "inconclusive" and got.frame["p_value"][0] == 1.0
        assert got.frame["method"][0] == "fewer than 2 clusters"
        assert any("one cluster" in n for n in got.notes)
    # per slice with one cluster each: every slice says why, none has a verdict
    two = _binary_lab(a, b, ["x", "y"] * 100, higher=True)
    sliced = two.decisions.decide("A", "B", metrics=["ev.score"], cluster="topic", slices="topic")
    inner = sliced.frame.filter(pl.col("slice") != "")
    assert set(inner["verdict"]) == {"inconclusive"} and set(inner["p_value"]) == {1.0}
    assert sum("one cluster" in n for n in sliced.notes) == 2


def test_the_metric_direction_does_not_change_the_test() -> None:
    a = np.array([1, 0] * 10 + [0] * 5 + [1] * 5, dtype=float)
    b = np.array([1, 1] * 10 + [0] * 5 + [1] * 5, dtype=float)
    up = _binary_lab(a, b, None, higher=True).decisions.decide(
        "A", "B", metrics=["ev.score"], cluster=""
    )
    down = _binary_lab(1 - a, 1 - b, None, higher=False).decisions.decide(
        "A", "B", metrics=["ev.toxicity"], cluster=""
    )
    assert up.frame["method"][0] == down.frame["method"][0] == "exact McNemar"
    assert up.frame["p_value"][0] == pytest.approx(down.frame["p_value"][0], abs=1e-15)
    assert up.frame["difference"][0] == pytest.approx(down.frame["difference"][0], abs=1e-15)


def test_no_discordant_pair_still_leaves_an_interval() -> None:
    same = np.array([1.0] * 20 + [0.0] * 10)
    got = _binary_lab(same, same, None, higher=True).decisions.decide(
        "A", "B", metrics=["ev.score"], cluster="", margin=0.02
    )
    z2 = 1.959963984540054**2
    assert got.frame["ci_high"][0] == pytest.approx(z2 / (30 + z2), abs=1e-9)
    assert got.verdict == "inconclusive"
    # a true difference of -0.05 at 30 cases: non-inferior at margin 0.02 must stay rare
    rng = np.random.default_rng(2)
    false = 0
    for _ in range(200):
        a = (rng.random(30) < 0.7).astype(float)
        b = np.where(rng.random(30) < 0.05, 0.0, a)
        test = paired_test(a, b)
        false += test.ci_low > -0.02
    assert false <= 10


def test_tango_interval_equals_the_constrained_score_inversion() -> None:
    from scipy import optimize

    from evalnb.analysis.paired_tests import tango_interval

    def score(better: int, worse: int, n: int, delta: float) -> float:
        def nll(q: float) -> float:
            p12, rest = q + delta, 1 - 2 * q - delta
            return -(better * np.log(p12) + worse * np.log(q) + (n - better - worse) * np.log(rest))

        q = optimize.minimize_scalar(
            nll,
            bounds=(max(0, -delta) + 1e-12, (1 - delta) / 2 - 1e-12),
            method="bounded",
            options={"xatol": 1e-14},
        ).x
        return (better - worse - n * delta) / np.sqrt(n * (2 * q + delta * (1 - delta)))

    z = 1.959963984540054
    for better, worse, n in ((5, 2, 100), (12, 3, 50), (3, 9, 40), (1, 0, 20)):
        low, high = tango_interval(better, worse, n)
        assert abs(score(better, worse, n, low)) == pytest.approx(z, abs=1e-6)
        assert abs(score(better, worse, n, high)) == pytest.approx(z, abs=1e-6)


def test_a_stream_of_agreeing_cases_is_not_settled_on_its_first_looks() -> None:
    from evalnb.analysis.sequential import stream_verdict

    verdict, used = stream_verdict(np.zeros(400), margin=0.02)
    assert used > 200 or verdict == "inconclusive"
    rng = np.random.default_rng(3)
    false = sum(
        stream_verdict(-(rng.random(400) < 0.05).astype(float), margin=0.02)[0]
        in ("equivalent", "non-inferior")
        for _ in range(200)
    )
    assert false <= 10


def test_bad_arguments_and_nan_scores_are_said_plainly() -> None:
    lab = _ab(60, 0.0, 9)
    for bad in (0.0, 1.0, 1.5, -0.1, float("nan")):
        with pytest.raises(ValueError, match="alpha"):
            lab.decisions.decide("A", "B", metrics=["ev.score"], alpha=bad)
    with pytest.raises(ValueError, match="mde"):
        evalnb.decisions.plan(lab, "ev.score", baseline="A", candidate="B", mde=float("nan"))
    nan = lab.with_tables(
        {
            "scores": lab.scores.with_columns(
                pl.when(pl.col("case_id") == "c0")
                .then(float("nan"))
                .otherwise(pl.col("value"))
                .alias("value")
            )
        }
    )
    got = nan.decisions.decide("A", "B", metrics=["ev.score"], cluster="")
    assert got.frame["n"][0] == 59 and np.isfinite(got.frame["difference"][0])


def test_a_cluster_field_of_the_cases_extra_clusters_as_a_column() -> None:
    lab = _ab(120, 0.0, 10)
    docs = [f'{{"document_id": "d{i % 8}"}}' for i in range(120)]
    lab = lab.with_tables({"cases": lab.cases.with_columns(extra=pl.Series(docs))})
    got = lab.decisions.decide("A", "B", metrics=["ev.score"], cluster="document_id")
    assert got.frame["clusters"][0] == 8
    with pytest.raises(ValueError, match="extra fields: \\['document_id'\\]"):
        lab.decisions.decide("A", "B", metrics=["ev.score"], cluster="source_doc")


def test_plan_says_what_a_pilot_cannot_tell() -> None:
    same = np.array([1.0] * 20 + [0.0] * 10)
    agreeing = _binary_lab(same, same, None, higher=True)
    planned = evalnb.decisions.plan(
        agreeing, "ev.score", baseline="A", candidate="B", cluster="", mde=0.05
    )
    assert planned.cases > 30 and "no discordant pair" in str(planned)
    one = _binary_lab(same, 1 - same, ["t"] * 30, higher=True)
    with pytest.raises(ValueError, match="one cluster"):
        evalnb.decisions.plan(one, "ev.score", baseline="A", candidate="B", cluster="topic")


def test_a_mistyped_gate_is_not_read_as_inconclusive(tmp_path: Path) -> None:
    store = _ab(30, 0.0, 11).save(tmp_path / "l.duckdb")
    with pytest.raises(SystemExit) as ok:
        main(["gate", "--help"])
    assert ok.value.code == 0
    assert main(["gate", str(store), "--baseline", "A", "--candiate", "B"]) == 3


def test_a_decision_lists_its_metrics_in_the_leaderboards_order() -> None:
    lab = _ab(60, 0.0, 12)  # ev.score and toxicity.toxicity, both primary here
    metrics = lab.metrics.with_columns(primary=pl.lit(value=True)).sort(
        "evaluator", descending=True
    )
    scored_last_first = lab.with_tables({"metrics": metrics})
    got = scored_last_first.decisions.decide("A", "B", metrics=None, cluster="")
    board = scored_last_first.leaderboard().filter(pl.col("primary"))
    order = board.select("evaluator", "metric").unique(maintain_order=True).rows()
    assert len(order) == 2
    assert list(zip(got.frame["evaluator"], got.frame["metric"], strict=True)) == order
