"""The text matching evaluator on H2O's documentation lab and edge cases, and the engine."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

import evalnb
from evalnb_testkit.paths import SHARED, needs_shared


def _passes(lab: evalnb.Lab) -> list[float | None]:
    return lab.scores.filter(pl.col("metric") == "model_passes")["value"].to_list()


@needs_shared
def test_reproduces_every_documentation_example() -> None:
    lab = evalnb.evaluate(
        evalnb.load(SHARED / "doc_text_matching_regexps.json"), ["text_matching"], progress=False
    )
    # Every example passes except the last one (H2O's example 10N).
    assert _passes(lab) == [1.0] * 10 + [0.0]
    detail = json.loads(lab.scores.filter(pl.col("metric") == "model_passes")["detail"][-1])
    assert detail["message"] == (
        'Generated actual answer did not satisfy the condition: regexp("(?i)(success|completed).*\\d+%").'
    )
    metrics = lab.scores.filter(pl.col("case_id") == lab.cases["case_id"][-1])
    assert dict(metrics.select("metric", "value").iter_rows()) == {
        "model_passes": 0.0,
        "model_failures": 1.0,
        "model_retrieval_failures": 0.0,
        "model_generation_failures": 1.0,
        "model_parse_failures": 0.0,
    }


@needs_shared
def test_suite_constraints_message_matches_h2o() -> None:
    suite = evalnb.load(SHARED / "sr1107_test_suite_small.json")
    case = suite.cases.row(1, named=True)
    frame = pl.DataFrame(
        {
            "case_id": [case["case_id"]],
            "prompt": [case["prompt"]],
            "constraints": [case["constraints"]],
            "actual": ["It covers conceptual soundness, Ongoing monitoring and more."],
            "context": [["conceptual soundness ongoing monitoring outcomes analysis"]],
        }
    )
    lab = evalnb.evaluate(evalnb.load(frame), ["text_matching"], progress=False)
    detail = json.loads(lab.scores["detail"][0])
    assert detail["message"] == (
        'Generated actual answer did not satisfy the condition: "conceptual soundness" AND '
        '"ongoing monitoring" AND "outcomes analysis". The following part of the actual answer '
        'condition did not match: "ongoing monitoring".'
    )


def _lab(**columns: list[object]) -> evalnb.Lab:
    return evalnb.load(pl.DataFrame(columns))


def test_precedence_of_condition_constraints_expected() -> None:
    lab = _lab(
        prompt=["p1", "p2", "p3", "p4", "p5"],
        condition=['"x"', None, None, None, None],
        constraints=['["a"]', '["b"]', None, "[]", None],
        expected=[["zzz"], ["zzz"], ["hello world"], ["q"], None],
        actual=["x", "b", "say hello world", "no", "anything"],
    )
    assert _passes(evalnb.evaluate(lab, ["text_matching"], progress=False)) == [1.0] * 3 + [
        0.0,
        1.0,
    ]


def test_several_references_are_best_of() -> None:
    lab = _lab(prompt=["p"], expected=[["Paris", "paris"]], actual=["it is paris"])
    assert _passes(evalnb.evaluate(lab, ["text_matching"], progress=False)) == [1.0]


def test_host_errors_empty_answers_and_bad_conditions() -> None:
    lab = _lab(
        prompt=["p1", "p2", "p3", "p4"],
        condition=['"a"', 'NOT "a"', '"a" and "b"', '"a"'],
        actual=["MODEL HOST INTERNAL ERROR: boom", "", "a", "ä unicode a"],
        error=["MODEL HOST INTERNAL ERROR: boom", None, None, None],
    )
    lab = evalnb.evaluate(lab, ["text_matching"], progress=False)
    assert _passes(lab) == [0.0, 1.0, None, 1.0]
    gen = lab.scores.filter(pl.col("metric") == "model_generation_failures")["value"]
    assert gen.to_list() == [1.0, 0.0, None, 0.0]
    bad = lab.scores.filter(pl.col("metric") == "model_failures")["detail"][2]
    assert "invalid condition" in json.loads(bad)["reason"]


def test_retrieved_context_check() -> None:
    lab = _lab(
        prompt=["p1", "p2"],
        condition=['"42"', '"42"'],
        actual=["42", "41"],
        context=[["the answer is 41"], ["it is 42"]],
    )
    lab = evalnb.evaluate(lab, ["text_matching"], evaluate_retrieved_context=True, progress=False)
    rows = {
        m: lab.scores.filter(pl.col("metric") == m)["value"].to_list()
        for m in ("model_passes", "model_retrieval_failures", "model_generation_failures")
    }
    assert rows == {
        "model_passes": [0.0, 0.0],
        "model_retrieval_failures": [1.0, 0.0],
        "model_generation_failures": [0.0, 1.0],
    }
    msg = json.loads(lab.scores["detail"][0])["message"]
    assert msg.startswith('Retrieved context did not satisfy the condition: "42".')


def test_incremental_and_parameter_changes(tmp_path: Path) -> None:
    lab = _lab(prompt=["p1", "p2"], condition=['"a"', '"b"'], actual=["a", "a"])
    lab.save(tmp_path / "lab.duckdb")
    once = evalnb.evaluate(lab, ["text_matching"], progress=False)
    assert once.scores.height == 10
    assert evalnb.open(tmp_path / "lab.duckdb").scores.height == 10  # written through
    twice = evalnb.evaluate(once, ["text_matching"], metric_threshold=0.9, progress=False)
    assert twice.scores.equals(once.scores)  # a threshold changes no score
    assert twice.thresholds["threshold"].to_list() == [0.9]
    rescored = evalnb.evaluate(
        twice, ["text_matching"], evaluate_retrieved_context=True, progress=False
    )
    assert rescored.scores.height == 10
    assert rescored.scores["params"].n_unique() == 1
    assert rescored.metrics.filter(pl.col("primary"))["metric"].to_list() == ["model_passes"]


def test_parameter_errors() -> None:
    lab = _lab(prompt=["p"], actual=["a"])
    with pytest.raises(ValueError, match="unknown evaluator 'nope'"):
        evalnb.evaluate(lab, ["nope"])
    with pytest.raises(TypeError, match="no selected evaluator takes parameter 'bogus'"):
        evalnb.evaluate(lab, ["text_matching"], bogus=1)
    with pytest.raises(TypeError, match="must be bool"):
        evalnb.evaluate(lab, ["text_matching"], evaluate_retrieved_context="yes")
    with pytest.raises(ValueError, match=r"within \[0.0, 1.0\]"):
        evalnb.evaluate(lab, ["text_matching"], metric_threshold=2)


def test_context_failed_but_answer_passed_problem() -> None:
    """H2O's per-row retrieval problem: the answer met the condition, the context did not."""
    lab = evalnb.load(
        pl.DataFrame(
            {
                "prompt": ["fee?", "owner?", "color?"],
                "condition": ['"95"', '"Ann"', '"blue"'],
                "actual": ["It is 95 dollars.", "Ann owns it.", "It is red."],
                "context": [
                    ["The fee is listed elsewhere."],
                    ["Ann is the owner."],
                    ["Blue paint."],
                ],
            }
        )
    )
    lab = evalnb.evaluate(lab, ["text_matching"], evaluate_retrieved_context=True, progress=False)
    found = lab.problems().filter(pl.col("problem_type") == "retrieval")
    assert found["description"].to_list() == [
        "Retrieved context provided by RAG for the evaluation did not satisfy the output "
        "conditions for the prompt 'fee?', but the answer generated by the LLM model model did."
    ]
    assert found["severity"].to_list() == ["MEDIUM"]
