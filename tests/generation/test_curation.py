"""Curating a suite: accept / edit / exclude / restore, kept in the store, lost by no one."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

import evalnb

ROOT = Path(__file__).resolve().parents[2]


def _suite(path: Path, n: int = 6) -> evalnb.Lab:
    frame = pl.DataFrame(
        {
            "prompt": [f"Question {i}?" for i in range(n)],
            "expected": [f"Answer {i}." for i in range(n)],
        }
    )
    lab = evalnb.load(frame)
    lab.save(path)
    return evalnb.open(path)


def test_decisions_fold_into_a_curated_suite_and_survive_their_application(tmp_path: Path) -> None:
    store = tmp_path / "lab.duckdb"
    lab = _suite(store)
    ids = lab.cases["case_id"].to_list()
    lab.curation.curate(ids[0], "accept", reviewer="ana")
    lab.curation.curate(ids[1], "edit", reviewer="ana", prompt="Question one, reworded?")
    lab.curation.curate(ids[1], "edit", reviewer="ben", expected="Answer one, fixed.", note="typo")
    lab.curation.curate(ids[2], "exclude", reviewer="ben", note="not in the documents")
    view = evalnb.open(store).curation.view()  # from the store: each decision was committed
    status = dict(view.select("case_id", "status").iter_rows())
    assert [status[i] for i in ids] == ["accepted", "edited", "excluded"] + ["pending"] * 3
    edited = view.filter(pl.col("case_id") == ids[1]).row(0, named=True)
    assert (edited["prompt"], edited["expected"]) == (
        "Question one, reworded?",
        ["Answer one, fixed."],
    )
    assert (edited["reviewer"], edited["note"], edited["n_decisions"]) == ("ben", "typo", 2)

    suite = json.loads(lab.export(tmp_path / "suite.json", format="h2o_suite").read_text())
    exported = {c["key"]: c for t in suite["tests"] for c in t["test_cases"]}
    assert set(exported) == set(ids) - {ids[2]}
    assert exported[ids[1]]["prompt"] == "Question one, reworded?"
    assert exported[ids[1]]["expected_output"] == "Answer one, fixed."

    applied = lab.curation.apply()
    assert ids[2] not in set(evalnb.open(store).cases["case_id"])
    assert (
        applied.cases.filter(pl.col("case_id") == ids[1])["prompt"].item()
        == "Question one, reworded?"
    )
    assert applied.curation.apply().cases.equals(applied.cases)  # idempotent
    assert "excluded" in set(applied.curation.view()["status"])  # the excluded case is still listed

    applied.curation.curate(ids[2], "restore", reviewer="ana", note="it is, p. 3")
    back = evalnb.open(store).curation.apply().cases
    restored = back.filter(pl.col("case_id") == ids[2]).row(0, named=True)
    assert (restored["prompt"], restored["expected"]) == ("Question 2?", ["Answer 2."])
    assert back.height == 6
    assert evalnb.open(store).table("curation").height == 5  # the whole log, in order of decision


@pytest.mark.parametrize(
    ("action", "kwargs", "message"),
    [
        ("approve", {}, "one of"),
        ("edit", {}, "pass prompt= or expected="),
        ("accept", {"prompt": "x"}, "takes no prompt="),
        ("edit", {"expected": [" "]}, "non-empty text"),
    ],
)
def test_bad_decisions_are_refused_with_the_fix(
    tmp_path: Path, action: str, kwargs: dict[str, str], message: str
) -> None:
    lab = _suite(tmp_path / "lab.duckdb", n=1)
    with pytest.raises(ValueError, match=message):
        lab.curation.curate(lab.cases["case_id"][0], action, reviewer="ana", **kwargs)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="reviewer name"):
        lab.curation.curate(lab.cases["case_id"][0], "accept", reviewer="")
    with pytest.raises(KeyError, match="no case 'nope'"):
        lab.curation.curate("nope", "accept", reviewer="ana")
    assert lab.table("curation").is_empty()


WORKER = """
import sys, evalnb
lab = evalnb.open(sys.argv[1])  # each reviewer's copy goes stale as the others write
ids = lab.cases["case_id"].to_list()
for i in range(int(sys.argv[3])):
    lab.curation.curate(ids[i % len(ids)], "accept" if i % 2 else "exclude", reviewer=sys.argv[2])
"""


def test_reviewers_curating_at_once_from_separate_processes_lose_no_decision(
    tmp_path: Path,
) -> None:
    store = tmp_path / "lab.duckdb"
    _suite(store, n=4)
    workers = [
        subprocess.Popen([sys.executable, "-c", WORKER, str(store), name, "15"], cwd=ROOT)
        for name in ("ana", "ben", "eve")
    ]
    assert [w.wait(timeout=300) for w in workers] == [0, 0, 0]
    log = evalnb.open(store).table("curation")
    assert log.group_by("reviewer").len().sort("reviewer")["len"].to_list() == [15, 15, 15]
    assert log["curation_id"].n_unique() == 45


def test_the_curator_stores_each_decision_and_moves_to_the_next_open_case(tmp_path: Path) -> None:
    store = tmp_path / "lab.duckdb"
    lab = _suite(store, n=4)
    ids = lab.cases["case_id"].to_list()
    lab.curation.curate(
        ids[0], "accept", reviewer="ben"
    )  # decided before: the curator starts after it
    w = lab.curation.curator(reviewer="ann")
    assert w.position == 1 and w.item is not None and w.item["status"] == "pending"
    w.edit(prompt="Question one, clearer?", expected=w.item["expected"], note="wording")
    assert w.position == 2
    w.exclude(note="duplicate")
    w.go(2)
    w.restore()
    assert w.position == 2 and w.item is not None and w.item["status"] == "pending"
    w.edit(prompt=w.item["prompt"], expected=w.item["expected"])  # unchanged: an acceptance
    log = evalnb.open(store).table("curation")
    assert log["action"].to_list() == ["accept", "edit", "exclude", "restore", "accept"]
    edit = log.row(1, named=True)
    assert (
        edit["prompt"] == "Question one, clearer?" and edit["expected"] is None
    )  # only the change
    assert (edit["reviewer"], edit["note"]) == ("ann", "wording")
    again = evalnb.open(store).curation.curator(reviewer="ann")
    assert again.position == 3  # reopened: the first case still open
    with pytest.raises(ValueError, match="reviewer="):
        lab.curation.curator(reviewer="")


def test_an_old_lab_object_is_told_it_is_older_than_its_store_not_blamed_on_others(
    tmp_path: Path,
) -> None:
    store = tmp_path / "lab.duckdb"
    lab = _suite(store)
    ids = lab.cases["case_id"].to_list()
    lab.curation.curate(ids[0], "exclude", reviewer="ana")
    applied = lab.curation.apply()  # a new lab; `lab` still holds the cases it read
    with pytest.raises(evalnb.StoreConflict) as caught:
        lab.set_question_types()  # rewrites `cases` from the old copy
    message = str(caught.value)
    assert "this Lab object is older than its store" in message
    assert "apply_curation()" in message and "evalnb.open(path)" in message
    assert "another process" not in message
    assert evalnb.open(store).cases.height == applied.cases.height == 5  # nothing written
    applied.set_question_types()  # the lab the call returned writes as usual
    # Another process's write is still called that.
    subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, evalnb; evalnb.open(sys.argv[1]).set_question_types(overwrite=True)",
            str(store),
        ],
        check=True,
    )
    with pytest.raises(evalnb.StoreConflict, match="another process"):
        applied.set_question_types(overwrite=True)
