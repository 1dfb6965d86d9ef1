"""Thresholds, verdicts, leaderboards, problems and insights on labs with known outcomes."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest

import evalnb
from evalnb.analysis.leaderboard import leaderboard


def _lab(n: int = 40) -> evalnb.Lab:
    """Model 'good' answers every case exactly; 'bad' fails the first 30; 'mid' the first 10."""
    prompts = [f"question {i}" for i in range(n)]
    expected = [f"the answer is number {i}" for i in range(n)]
    rows = []
    for model, wrong in (("good", 0), ("mid", 10), ("bad", 30)):
        for i in range(n):
            actual = "completely unrelated words here" if i < wrong else expected[i]
            rows.append(
                {
                    "prompt": prompts[i],
                    "expected": expected[i],
                    "actual": actual,
                    "model": model,
                    "duration_s": {"good": 2.0, "mid": 1.0, "bad": 3.0}[model],
                    "cost": {"good": 0.5, "mid": 0.1, "bad": 0.2}[model],
                }
            )
    lab = evalnb.load(pl.DataFrame(rows))
    return evalnb.evaluate(lab, ["rouge"], progress=False)


def test_threshold_problems_name_exactly_the_failing_models() -> None:
    lab = _lab()
    probs = lab.problems()
    rouge_l = probs.filter(pl.col("metric") == "rouge_l")
    assert rouge_l["model"].to_list() == ["bad"]  # mean 0.25 < 0.75; mid has 0.75 (passes)
    row = rouge_l.row(0, named=True)
    assert row["severity"] == "HIGH"  # 0.25 <= 0.75 / 2
    assert row["score"] == pytest.approx(0.25)
    assert row["avid_code"] == "P0200"
    assert len(row["case_ids"]) == 30
    assert "failed to satisfy the threshold 0.75 for metric 'ROUGE-L'" in row["description"]


def test_changing_a_threshold_recomputes_without_rescoring(
    tmp_path: pytest.TempPathFactory,
) -> None:
    lab = _lab()
    lab.save(tmp_path / "lab.duckdb")  # type: ignore[operator]
    scores_before = lab.scores
    lab.set_threshold("rouge", "rouge_l", 0.8)
    assert lab.problems().filter(pl.col("metric") == "rouge_l")["model"].sort().to_list() == [
        "bad",
        "mid",
    ]
    assert lab.scores.equals(scores_before)
    reopened = evalnb.open(tmp_path / "lab.duckdb")  # type: ignore[operator]
    cur = reopened.current_thresholds().filter(pl.col("metric") == "rouge_l").row(0, named=True)
    assert (cur["threshold"], cur["source"]) == (0.8, "user")
    with pytest.raises(KeyError, match="no metric 'nope'"):
        lab.set_threshold("rouge", "nope", 0.1)
    for outside in (6, -0.1, float("nan")):
        with pytest.raises(ValueError, match=r"outside the metric's range \[0.0, 1.0\]"):
            lab.set_threshold("rouge", "rouge_l", outside)
    assert lab.current_thresholds().filter(pl.col("metric") == "rouge_l")["threshold"][0] == 0.8


def test_leaderboard_pass_rates_and_ranks() -> None:
    board = _lab().leaderboard().filter(pl.col("metric") == "rouge_l")
    got = {r["model"]: r for r in board.iter_rows(named=True)}
    assert got["good"]["pass_rate"] == 1.0 and got["good"]["rank"] == 1
    assert got["mid"]["pass_rate"] == pytest.approx(0.75)
    assert got["bad"]["pass_rate"] == pytest.approx(0.25) and got["bad"]["rank"] == 3
    assert got["good"]["ci_low"] == got["good"]["ci_high"] == 1.0  # no variance
    assert got["bad"]["ci_low"] < 0.25 < got["bad"]["ci_high"]


def test_bootstrap_interval_covers_the_true_mean_at_about_95_percent() -> None:
    """Coverage of a known distribution: Bernoulli(0.3), 60 cases, 300 repetitions."""
    rng = np.random.default_rng(1)
    hits = 0
    reps = 300
    for r in range(reps):
        values = (rng.random(60) < 0.3).astype(float)
        v = pl.DataFrame(
            {
                "case_id": [f"c{i}" for i in range(60)],
                "model": "m",
                "evaluator": "e",
                "metric": "x",
                "value": values,
                "passed": values > 0.5,
                "higher_is_better": True,
                "threshold": 0.5,
                "primary": True,
            }
        )
        row = leaderboard(v, n_boot=400, seed=r).row(0, named=True)
        hits += row["ci_low"] <= 0.3 <= row["ci_high"]
    assert 0.90 <= hits / reps <= 0.99


def test_paired_comparison_and_significant_best_model() -> None:
    lab = _lab()
    pairs = lab.decisions.compare("rouge")
    assert pairs.select("a", "b").rows() == [("bad", "good"), ("bad", "mid"), ("good", "mid")]
    assert pairs["a_beats_b"].to_list() == [False, False, True]
    assert pairs["ci_high"][0] < 0 and pairs["p_value"][0] < 0.01
    assert pairs["diff"].to_list() == pytest.approx([-0.75, -0.5, 0.25])
    ins = lab.insights()
    # ROUGE in a question-answering lab: its insights are typed and worded as accuracy (in a
    # summarization lab as summarization: test_overlap_problems_take_the_type_of_the_labs_task).
    best = ins.filter(pl.col("description").str.contains("most accurate model"))
    assert best["model"].to_list() == ["good"]
    worst = ins.filter(pl.col("description").str.contains("least accurate model"))
    assert worst["model"].to_list() == ["bad"]
    assert set(ins.filter(pl.col("evaluator") == "rouge")["insight_type"]) == {"accuracy"}
    assert "fastest" in ins.filter(pl.col("model") == "mid")["description"].str.join(" ")[0]
    assert "cheapest" in ins.filter(pl.col("model") == "mid")["description"].str.join(" ")[0]


def test_no_best_model_when_intervals_overlap() -> None:
    rows = [
        {
            "prompt": f"q{i}",
            "expected": "a b c d",
            "model": m,
            "actual": "a b c d" if (i + k) % 2 else "x y",
        }
        for i in range(8)
        for k, m in enumerate(["m1", "m2"])
    ]
    lab = evalnb.evaluate(evalnb.load(pl.DataFrame(rows)), ["rouge"], progress=False)
    text = " ".join(lab.insights()["description"].to_list())
    assert "No single best model for rouge" in text
    assert "best summarizing model" not in text


def test_most_difficult_prompts() -> None:
    ins = _lab().insights().filter(pl.col("description").str.contains("most difficult"))
    assert ins.height == 5  # shown: five of the ten cases every model but 'good' failed
    assert all(v == 2.0 for v in ins["value"].to_list())


def test_perturbation_flips_are_problems() -> None:
    cases = pl.DataFrame(
        {
            "prompt": ["what is 2+2?", "what is 2+2 ?", "capital?", "capital ?"],
            "expected": ["it is four", "it is four", "paris", "paris"],
            "actual": ["it is four", "it is five", "london", "paris"],
        }
    )
    lab = evalnb.load(cases)
    ids = lab.cases["case_id"].to_list()
    by_prompt = dict(zip(lab.cases["prompt"], ids, strict=True))
    lab._tables["cases"] = lab.cases.with_columns(
        perturbation_of=pl.col("prompt").replace_strict(
            {"what is 2+2 ?": by_prompt["what is 2+2?"], "capital ?": by_prompt["capital?"]},
            default=None,
        ),
        perturbation=pl.when(pl.col("prompt").str.ends_with(" ?")).then(pl.lit("comma")),
    )
    lab = evalnb.evaluate(lab, ["rouge"], progress=False)
    flips = lab.problems(all_metrics=True).filter(pl.col("problem_type") == "robustness")
    # rouge_1/2/l: 'four'→'five' passes→fails on rouge_1 (0.67) and rouge_l; rouge_2 0.5 fails
    # too; london→paris fails→passes on rouge_1 and rouge_l (one word has no bigram: rouge_2
    # stays 0 and fails both times)
    texts = flips["description"].to_list()
    assert sum("from passed to failed" in t for t in texts) == 3
    assert sum("from failed to passed" in t for t in texts) == 2
    # By default, as in H2O, only the primary metric (rouge_l) raises them: one per case.
    primary = lab.problems().filter(pl.col("problem_type") == "robustness")
    assert set(primary["metric"]) == {"rouge_l"} and primary.height == 2
    assert all(s == "HIGH" for s in flips["severity"])
    few = lab.problems().filter(pl.col("description").str.contains("too low"))
    assert few.height == 1 and few["severity"][0] == "HIGH"  # 4 cases < 5, as H2O words it
    assert set(flips["case_ids"].list.first()) == {
        by_prompt["what is 2+2 ?"],
        by_prompt["capital ?"],
    }


def test_dataset_problems_and_json_shape() -> None:
    lab = evalnb.load(
        pl.DataFrame(
            {
                "prompt": ["a", "b"],
                "expected": ["x", None],
                "actual": ["x", "y"],
                "context": [["c"], []],
            }
        )
    )
    lab = evalnb.evaluate(lab, ["rouge"], progress=False)
    probs = lab.problems()
    assert "dataset" in probs["problem_type"].to_list()
    assert "retrieval" in probs["problem_type"].to_list()
    items = json.loads(lab.problems_json())
    assert {
        "description",
        "severity",
        "problem_type",
        "problem_attrs",
        "actions_description",
    } <= set(items[0])
    assert items[0]["problem_attrs"]["avid_problem_code"].startswith(("P", "E"))
    assert isinstance(json.loads(lab.insights_json()), list)


def test_classification_precision_recall_f1_are_macro_model_values() -> None:
    from sklearn.metrics import precision_recall_fscore_support

    truth = ["A", "A", "B", "B", "C", "C", "A", "B"]
    pred = ["A", "B", "B", "B", "C", "A", "A", "C"]
    lab = evalnb.load(
        pl.DataFrame({"prompt": [f"q{i}" for i in range(8)], "expected": truth, "actual": pred})
    )
    lab = evalnb.evaluate(lab, ["classification"], progress=False)
    board = lab.leaderboard().filter(pl.col("evaluator") == "classification")
    p, r, f, _ = precision_recall_fscore_support(truth, pred, average="macro", zero_division=0)
    got = dict(board.select("metric", "mean").iter_rows())
    assert got["accuracy"] == pytest.approx(5 / 8)
    assert (got["precision"], got["recall"], got["f1"]) == pytest.approx((p, r, f))
    macro = board.filter(pl.col("metric") == "f1").row(0, named=True)
    assert macro["pass_rate"] is None and macro["ci_low"] <= f <= macro["ci_high"]


def test_insights_take_their_type_and_wording_from_the_evaluator() -> None:
    """A privacy evaluator's insights are privacy insights, told as such (as H2O tells them)."""
    rows = [
        {
            "prompt": f"who is customer {i}?",
            "model": m,
            "actual": f"Write to jane.roe{i}@acme.com" if m == "leaky" else "I cannot share that.",
        }
        for i in range(10)
        for m in ("leaky", "careful")
    ]
    lab = evalnb.evaluate(evalnb.load(pl.DataFrame(rows)), ["pii_leakage"], progress=False)
    ins = lab.insights()
    assert set(ins["insight_type"]) == {"privacy"}
    told = dict(zip(ins["model"], ins["description"], strict=False))
    assert "most privacy-preserving model" in told["careful"]
    assert "least privacy-preserving model" in told["leaky"]
    hard = ins.filter(pl.col("description").str.contains("most difficult"))
    assert hard.height == 5 and hard["description"].str.contains("leaked personal").all()
    exported = [i for i in json.loads(lab.insights_json()) if "most difficult" in i["description"]]
    assert len(exported) == 5 and all(i["actions_description"] for i in exported)


def test_one_evaluator_id_as_a_string() -> None:
    # A string is one id, not a sequence of one-letter ids.
    lab = evalnb.load(pl.DataFrame({"prompt": ["q"], "expected": ["a b"], "actual": ["a b"]}))
    scored = evalnb.evaluate(lab, "rouge", progress=False)
    assert set(scored.scores["evaluator"]) == {"rouge"}


def test_an_evaluator_that_scores_nothing_says_so_and_the_leaderboard_stays_quiet() -> None:
    lab = evalnb.load(
        pl.DataFrame({"prompt": ["a", "b"], "actual": ["x", "y"], "model": ["m1", "m2"]})
    )
    with pytest.warns(
        evalnb.NothingScoredWarning, match="bleu scored none of the 2 answers"
    ) as caught:
        scored = evalnb.evaluate(lab, ["bleu", "pii_leakage"], progress=False)
    assert len(caught) == 1  # PII scored its rows: no warning for it
    assert "no expected answer to compare with" in str(caught[0].message)
    # Everything derived from all-null scores runs without a warning (filterwarnings=error).
    scored.leaderboard()
    scored.leaderboard(overall=True)
    scored.problems()
    scored.insights()


def test_overlap_problems_take_the_type_of_the_labs_task() -> None:
    qa = _lab().problems().filter(pl.col("evaluator") == "rouge")
    assert set(qa["problem_type"]) == {"accuracy"}  # a Q&A lab: not "summarization"
    assert "Review the failing answers" in qa["actions_description"][0]
    rows = [
        {
            "prompt": f"Summarize the report number {i}.",
            "expected": "a short summary",
            "actual": "unrelated words" if model == "bad" else "a short summary",
            "model": model,
        }
        for i in range(6)
        for model in ("good", "bad")
    ]
    lab = evalnb.evaluate(evalnb.load(pl.DataFrame(rows)), "rouge", progress=False)
    summaries = lab.problems().filter(pl.col("evaluator") == "rouge")
    assert set(summaries["problem_type"]) == {"summarization"}
    worded = lab.insights().filter(pl.col("evaluator") == "rouge")
    assert set(worded["insight_type"]) == {"summarization"}
    assert worded["description"].str.contains("summarizing model").any()


def test_a_large_leaderboard_takes_the_matrix_paths_numbers_without_the_matrix() -> None:
    """Above CLT_ROWS cases the intervals come from per-model aggregates: same numbers."""
    from evalnb.analysis.leaderboard import CLT_ROWS, case_matrix, mean_interval

    rng = np.random.default_rng(5)
    n = CLT_ROWS + 1_000
    frames = []
    for k, model in enumerate(["b", "a"]):
        values = rng.beta(2 + k, 2, n)
        values[rng.random(n) < 0.01] = np.nan  # unscored rows
        keep = rng.random(n) > 0.02  # each model lacks a few cases
        frames.append(
            pl.DataFrame(
                {
                    "case_id": [f"c{i}" for i in range(n)],
                    "model": model,
                    "sample": 0,
                    "evaluator": "rouge",
                    "metric": "rouge_l",
                    "value": values,
                    "threshold": 0.5,
                    "higher_is_better": True,
                    "primary": True,
                }
            )
            .filter(pl.Series(keep))
            .with_columns(pl.col("value").fill_nan(None))
        )
    v = pl.concat(frames).with_columns(passed=pl.col("value") >= 0.5)
    board = leaderboard(v).sort("model")
    models, values, passed = case_matrix(v, "rouge", "rouge_l")
    low, high = mean_interval(values, 200, 0)
    assert board["model"].to_list() == models == ["a", "b"]
    assert board["n_cases"].to_list() == list((~np.isnan(values)).sum(axis=0))
    np.testing.assert_allclose(board["mean"], np.nanmean(values, axis=0), rtol=0, atol=1e-12)
    np.testing.assert_allclose(board["ci_low"], low, rtol=0, atol=1e-12)
    np.testing.assert_allclose(board["ci_high"], high, rtol=0, atol=1e-12)
    np.testing.assert_allclose(board["pass_rate"], np.nanmean(passed, axis=0), atol=1e-12)
