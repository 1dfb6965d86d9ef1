"""JSON Schema validity and exact-match classification."""

from __future__ import annotations

import json

import polars as pl
import pytest

import evalnb
from evalnb_testkit.paths import SHARED, needs_shared

_SCHEMA = json.dumps(
    {
        "type": "object",
        "required": ["name"],
        "properties": {"name": {"type": "string", "pattern": r"^(\w+\s?)*$"}},
    }
)


def _scores(frame: dict[str, list[object]], evaluator: str, **params: object) -> pl.DataFrame:
    lab = evalnb.evaluate(evalnb.load(pl.DataFrame(frame)), [evaluator], progress=False, **params)
    return lab.scores


def test_json_schema_messages_and_timeout() -> None:
    answers = [
        '{"name": "x y"}',
        '{"name": 1}',
        "not json",
        "",
        '{"name": "' + "a" * 40000 + '!"}',
        "MODEL HOST INTERNAL ERROR: x",
    ]
    scores = _scores(
        {
            "prompt": [str(i) for i in range(6)],
            "actual": answers,
            "error": [None] * 5 + ["MODEL HOST INTERNAL ERROR: x"],
        },
        "json_schema_validity",
        json_schema=_SCHEMA,
        regex_timeout_s=0.05,
    )
    passes = scores.filter(pl.col("metric") == "model_passes")
    assert passes["value"].to_list() == [1.0, 0.0, 0.0, 0.0, None, 0.0]
    messages = [None if d is None else json.loads(d)["message"] for d in passes["detail"]]
    assert messages[1].startswith("Actual answer is not valid against given JSON Schema")
    assert messages[2].startswith("Actual answer cannot be parsed as JSON")
    assert messages[3] == "Actual answer is empty"
    assert "time limit" in messages[4]
    # an unscored row explains itself on every metric
    assert scores.filter(pl.col("value").is_null())["detail"].null_count() == 0


def test_json_schema_any_json_with_empty_schema_and_bad_schema() -> None:
    scores = _scores({"prompt": ["a", "b"], "actual": ["[1, 2]", "{oops"]}, "json_schema_validity")
    assert scores.filter(pl.col("metric") == "model_passes")["value"].to_list() == [1.0, 0.0]
    with pytest.raises(ValueError, match="expected a valid JSON Schema"):
        _scores(
            {"prompt": ["a"], "actual": ["1"]}, "json_schema_validity", json_schema='{"type": 3}'
        )


def test_classification_exact_match() -> None:
    scores = _scores(
        {
            "prompt": ["a", "b", "c", "d"],
            "expected": [["A"], ["B", "b"], ["C"], []],
            "actual": ["A", "b", "C.", "x"],
        },
        "classification",
    )
    assert scores.filter(pl.col("metric") == "accuracy")["value"].to_list() == [1.0, 1.0, 0.0, None]


@needs_shared
def test_classification_on_real_lab() -> None:
    lab = evalnb.evaluate(
        evalnb.load(SHARED / "class_multi_test_lab.json"), ["classification"], progress=False
    )
    acc = lab.scores.filter(pl.col("metric") == "accuracy")
    assert acc.height == 600
    # Answers are compared as exact strings, as H2O does: "A" matches, "A." does not.
    rows = lab.rows().join(acc, on=["case_id", "model", "sample"])
    exact = rows.filter(pl.col("expected").list.contains(pl.col("actual")))
    assert (exact["value"] == 1.0).all()
    assert acc["value"].sum() == exact.height
