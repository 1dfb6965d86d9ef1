"""Weakness detection on a lab with a planted weak cell: grid, list, clusters, topics, types."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
import traitlets

import evalnb
from evalnb.diagnosis.question_types import classify_questions
from evalnb.transforms import grid_cells, univariate, weakness_index, weaknesses
from evalnb_testkit.frames import from_ipc
from evalnb_testkit.weak_lab import PLANTED, weak_lab


def test_grid_and_weakness_list_point_at_the_planted_cell() -> None:
    idx = weakness_index(weak_lab(), "rouge", "rouge_l")
    cells = grid_cells(idx)
    assert cells.height == 5 * 4 and cells["n"].sum() == 240
    worst = cells.sort("mean").row(0, named=True)
    assert (worst["topic"], worst["question_type"]) == PLANTED
    assert worst["ci_high"] < 0.5 and worst["weak"] and not worst["few"]
    listed = weaknesses(idx)
    assert listed.select("topic", "question_type").rows() == [PLANTED]
    assert univariate(idx, "topic")["group"][0] == PLANTED[0]  # worst topic first
    assert univariate(idx, "question_type")["group"][0] == PLANTED[1]


def test_small_cells_are_flagged_not_judged() -> None:
    lab = weak_lab(per_cell=3)
    idx = weakness_index(lab, "rouge", "rouge_l", min_n=5)
    assert grid_cells(idx)["few"].all()
    assert weaknesses(idx).is_empty()  # too few cases anywhere to call a weakness


def test_widget_selects_a_cell_and_follows_thresholds(tmp_path: Path) -> None:
    lab = weak_lab()
    lab.save(tmp_path / "lab.duckdb")
    lab = evalnb.open(tmp_path / "lab.duckdb")
    w = lab.weakness("rouge", "rouge_l")
    assert from_ipc(w._cells).height == 20 and from_ipc(w._dots).height == 240
    assert from_ipc(w._weak).select("topic", "question_type").rows() == [PLANTED]
    w.selected_cell = list(PLANTED)
    sel = w.selection()
    assert sel.height == 12 and set(sel["topic"]) == {PLANTED[0]} and "prompt" in sel.columns
    with pytest.raises(traitlets.TraitError, match="grid cell"):
        w.selected_cell = ["nowhere", "factoid"]
    lab.set_threshold("rouge", "rouge_l", 0.1)
    w.refresh()
    assert from_ipc(w._weak).is_empty() and w._meta["threshold"] == 0.1


@pytest.mark.slow  # topic models and clusters over embeddings: ~25 s each
def test_failure_clusters_group_the_planted_failures() -> None:
    purities = []
    for seed in range(3):
        lab = weak_lab(per_cell=20, seed=seed)
        fc = lab.failure_clusters("rouge", "rouge_l", seed=seed)
        rows = fc.rows.with_columns(
            planted=(pl.col("topic") == PLANTED[0]) & (pl.col("question_type") == PLANTED[1])
        )
        by = rows.group_by("cluster").agg(n=pl.len(), planted=pl.col("planted").sum())
        best = by.sort("planted", descending=True).row(0, named=True)
        share = best["planted"] / rows["planted"].sum()
        purity = best["planted"] / best["n"]
        purities.append(purity)
        assert share >= 0.9 and purity >= 0.75, (seed, by)
        summary = fc.clusters.filter(pl.col("cluster") == best["cluster"]).row(0, named=True)
        assert summary["topics"][0].startswith(PLANTED[0])
        assert len(summary["representative_cases"]) == 3
    print(f"planted-cluster purity over 3 seeds: {[round(p, 2) for p in purities]}")
    assert fc.chart().to_dict()["mark"]["type"] == "circle"


def test_too_few_failures_is_a_success_with_a_message() -> None:
    lab = weak_lab(per_cell=2)
    lab.set_threshold("rouge", "rouge_l", 0.0)  # nothing fails
    fc = lab.failure_clusters("rouge", "rouge_l")
    assert fc.clusters.is_empty() and "nothing to cluster" in (fc.message or "")


@pytest.mark.slow  # topic models and clusters over embeddings: ~25 s each
def test_topics_are_reproducible_and_editable() -> None:
    lab = weak_lab(per_cell=6)
    a = evalnb.topics(lab, min_topic_size=5, seed=3)
    b = evalnb.topics(lab, min_topic_size=5, seed=3)
    assert a.assignments.equals(b.assignments) and a.topics.equals(b.topics)
    assert a.candidates["chosen"].sum() == 1 and a.topics["size"].sum() <= lab.cases.height
    # Topics follow the planted vocabulary: each found topic is mostly one product area.
    joined = a.assignments.with_columns(truth=lab.cases["topic"]).filter(pl.col("topic_id") >= 0)
    purity = joined.group_by("topic_id").agg(
        purity=pl.col("truth").value_counts(sort=True).first().struct.field("count") / pl.len()
    )
    assert purity["purity"].mean() >= 0.8
    first = int(a.topics["topic_id"][0])
    renamed = a.rename(first, "Renamed")
    assert "Renamed" in renamed.topics["topic"].to_list()
    merged = a.merge(a.topics["topic_id"].to_list()[:2], name="Both")
    assert merged.topics.height == a.topics.height - 1
    assert merged.topics.filter(pl.col("topic") == "Both")["size"][0] == a.topics["size"][:2].sum()
    dropped = a.exclude(first)
    assert (dropped.assignments["topic_id"] == -1).sum() >= a.topics["size"][0]
    with pytest.raises(KeyError, match="no topic"):
        a.rename(99, "x")
    out = renamed.to_lab(lab)
    assert "Renamed" in out.cases["topic"].to_list()


def test_question_type_rules_are_transparent_and_overridable() -> None:
    got = classify_questions(
        [
            "Is the APR fixed?",
            "How many branches are there?",
            "Why was my card declined?",
            "How do I reset my passcode?",
            "Which has the higher fee, the Gold card or the Classic card?",
            "What does APR mean?",
            "What is the name of the card?",
            "Where is the branch?",
            "Tell me a joke",
        ]
    )
    assert got["question_type"].to_list() == [
        "yes-no",
        "numeric",
        "causal",
        "procedural",
        "comparison",
        "definition",
        "factoid",
        "entity",
        "other",
    ]
    assert got["rule"][0] == "auxiliary first"
    lab = weak_lab(per_cell=1)
    lab = evalnb.Lab(
        {
            **{n: lab.table(n) for n in evalnb.TABLES},
            "cases": lab.cases.with_columns(question_type=pl.lit(None, pl.String)),
        }
    )
    shown = lab.set_question_types()
    assert lab.cases["question_type"].null_count() == 0 and "rule" in shown.columns
    first = lab.cases["case_id"][0]
    lab.set_question_types({first: "multi-hop"})
    assert lab.cases["question_type"][0] == "multi-hop"
    with pytest.raises(KeyError, match="no case"):
        lab.set_question_types({"nope": "x"})


def test_a_one_case_cell_has_no_interval_and_is_never_weak() -> None:
    lab = weak_lab(per_cell=1)
    with pytest.warns(UserWarning, match="no interval"):
        idx = weakness_index(lab, "rouge", "rouge_l", min_n=1)
    cells = grid_cells(idx)
    assert (cells["n"] == 1).all()
    assert cells["ci_low"].is_null().all() and cells["ci_high"].is_null().all()
    assert not cells["weak"].any() and weaknesses(idx).is_empty()
    for row in cells.iter_rows(named=True):  # Wilson: honest at n = 1, never 0-0
        assert 0 <= row["pass_low"] <= row["pass_rate"] <= row["pass_high"] <= 1
        assert row["pass_high"] - row["pass_low"] > 0.5
    wide = grid_cells(weakness_index(weak_lab(per_cell=3), "rouge", "rouge_l", min_n=3))
    assert (wide["ci_high"] >= wide["mean"]).all()  # Student's t at n = 3
