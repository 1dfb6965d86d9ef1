"""The relevance labeler's kernel side: grades committed to qrels, the pool worked through, blind."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

import evalnb

DOCS = {"d1": "about cats", "d2": "about dogs", "d3": "<script>x</script> markup"}


def _lab(tmp_path: Path) -> evalnb.Lab:
    run = {"bm25": {"q1": {"d1": 3.0, "d2": 2.0}}, "dense": {"q1": {"d3": 3.0, "d1": 1.0}}}
    lab = evalnb.load(run, qrels={"q1": {"d9": 1}})
    lab.save(tmp_path / "lab.duckdb")
    return lab


def test_grades_are_committed_and_the_pool_is_worked_through(tmp_path: Path) -> None:
    lab = _lab(tmp_path)
    w = evalnb.labeler(lab, task="relevance", reviewer="ann", documents=DOCS)
    assert w.pool.select("doc_id", "models").rows() == [
        ("d1", ["bm25", "dense"]),
        ("d3", ["dense"]),
        ("d2", ["bm25"]),
    ]
    item = w._item
    assert item is not None and item["query"] == "q1" and item["passage"] == "about cats"
    assert item["retrievers"] == ["bm25", "dense"] and item["best_rank"] == 1
    w.grade(3)
    assert w.position == 1
    w._on_msg(w, {"action": "grade", "grade": 7}, None)
    assert "a grade is one of" in w._error
    w._on_msg(w, {"action": "grade", "grade": 0}, None)
    assert w.position == 2 and w._progress["done"] == 2
    stored = evalnb.open(tmp_path / "lab.duckdb").table("qrels")
    assert dict(
        stored.filter(pl.col("source") == "reviewer:ann").select("doc_id", "relevance").rows()
    ) == {
        "d1": 3,
        "d3": 0,
    }
    w.go(0)
    w.grade(1)  # a second grade replaces the first
    assert lab.table("qrels").filter(pl.col("doc_id") == "d1")["relevance"].to_list() == [1]
    again = evalnb.labeler(
        evalnb.open(tmp_path / "lab.duckdb"), task="relevance", reviewer="ann", documents=DOCS
    )
    assert again.pool["doc_id"].to_list() == ["d2"]  # reopened: what is left


def test_a_judges_grade_is_hidden_until_the_reviewer_grades(tmp_path: Path) -> None:
    lab = _lab(tmp_path)
    judged = pl.DataFrame(
        {"case_id": ["q1"], "doc_id": ["d1"], "relevance": [2], "source": ["judge:m"]}
    )
    lab = lab.with_tables({"qrels": pl.concat([lab.table("qrels"), judged])})
    w = evalnb.labeler(lab, task="relevance", reviewer="bo", documents=DOCS)
    assert w._item is not None and w._item["hidden"] and w._item["judge_grade"] is None
    w.grade(3)
    w.go(0)
    assert w._item["judge_grade"] == 2 and not w._item["hidden"]
    sighted = evalnb.labeler(lab, task="relevance", reviewer="cy", documents=DOCS, blind=False)
    assert sighted.pool.height == 2  # d1 has bo's grade now: out of the pool


def test_the_relevance_task_is_asked_plainly(tmp_path: Path) -> None:
    lab = _lab(tmp_path)
    with pytest.raises(ValueError, match="task"):
        evalnb.labeler(lab, task="grades", reviewer="ann")  # type: ignore[call-overload]
    with pytest.raises(TypeError, match="no queue, evaluator or metric"):
        evalnb.labeler(lab, "ev", "m", task="relevance", reviewer="ann")  # type: ignore[call-overload]
    with pytest.raises(ValueError, match="reviewer"):
        evalnb.labeler(lab, task="relevance", reviewer=" ")
    empty = evalnb.load({"bm25": {"q1": {"d1": 1.0}}}, qrels={"q1": {"d1": 1}})
    w = evalnb.labeler(empty, task="relevance", reviewer="ann")
    assert w._item is None
    with pytest.raises(ValueError, match="nothing to grade"):
        w.grade(1)
