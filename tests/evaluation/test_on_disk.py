"""Labs kept on disk: outputs and scores as Parquet parts beside the DuckDB store.

The readers (leaderboard, problems, insights, the eye) and ``evaluate`` run with a memory
budget of zero, so any of them that loaded a table whole would fail here.
"""

from __future__ import annotations

import shutil
from typing import TYPE_CHECKING

import duckdb
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import evalnb
from evalnb.cli.main import main
from evalnb.lab.errors import StoreConflict, StoreError, TableTooLarge
from evalnb.transforms import case_detail, eye_index, weakness_index

if TYPE_CHECKING:
    from pathlib import Path

N = 1500
KEY = ["case_id", "model", "sample", "evaluator", "metric"]
ON_DISK = ("outputs", "scores")


def rag_lab(n: int = N) -> evalnb.Lab:
    """Two models, distinct answers, some contexts empty (a retrieval problem to find)."""
    rows = [
        {
            "case_id": f"c{i}",
            "prompt": f"question {i}?",
            "expected": f"the rate is {i} percent",
            "model": model,
            "actual": f"the rate is {i if (i + k) % 3 else i + 1} percent",
            "context": [f"rates page {i}"] if i % 7 else [],
            "cost": 0.001 * (k + 1),
        }
        for i in range(n)
        for k, model in enumerate(("m1", "m2"))
    ]
    return evalnb.load(pl.DataFrame(rows))


@pytest.fixture
def no_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    """A memory budget of zero: loading a table kept on disk raises."""
    monkeypatch.setenv("EVALNB_MEMORY_BUDGET_GB", "0")


def sorted_scores(frame: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    return frame.lazy().sort(KEY).collect()


def test_a_lab_kept_on_disk_reads_back_and_sql_sees_its_tables(tmp_path: Path) -> None:
    lab = evalnb.evaluate(rag_lab(), ["rouge", "bleu"], progress=False)
    store = tmp_path / "lab.duckdb"
    lab.save(store, on_disk=ON_DISK)
    assert sorted(p.name for p in (tmp_path / "lab.duckdb.parts").iterdir()) == [
        "outputs",
        "scores",
    ]
    back = evalnb.open(store)
    assert back.on_disk == ON_DISK
    assert back.height("scores") == lab.scores.height
    assert back.summary().equals(lab.summary())
    assert back.equals(lab)  # loaded on use, within the memory budget
    # Any DuckDB client queries the same rows through the store's views.
    with duckdb.connect(str(store), read_only=True) as con:
        means = con.sql("SELECT metric, avg(value) AS m FROM scores GROUP BY metric").pl()
        n_outputs = con.execute("SELECT count(*) FROM outputs").fetchall()
    expected = lab.scores.group_by("metric").agg(m=pl.col("value").mean())
    assert_frame_equal(means.sort("metric"), expected.sort("metric"), abs_tol=1e-12)
    assert n_outputs == [(lab.outputs.height,)]
    # Back to rows: the parts go, the store reads the same.
    back.save(store, on_disk=())
    assert evalnb.open(store).on_disk == ()
    assert not list((tmp_path / "lab.duckdb.parts").rglob("*.parquet"))
    assert evalnb.open(store).equals(lab)


def test_a_store_moved_without_its_parts_says_which_folder_is_missing(tmp_path: Path) -> None:
    rag_lab(50).save(tmp_path / "lab.duckdb", on_disk=ON_DISK)
    moved = tmp_path / "elsewhere"
    moved.mkdir()
    shutil.copy(tmp_path / "lab.duckdb", moved / "lab.duckdb")
    lab = evalnb.open(moved / "lab.duckdb")
    with pytest.raises(StoreError, match=r"lab\.duckdb\.parts.*moves together"):
        lab.outputs  # noqa: B018 - the read is the test


@pytest.mark.usefixtures("no_memory")
def test_the_readers_never_load_a_table_kept_on_disk(tmp_path: Path) -> None:
    lab = evalnb.evaluate(rag_lab(), ["rouge", "text_matching"], progress=False)
    lab.save(tmp_path / "lab.duckdb", on_disk=ON_DISK)
    disk = evalnb.open(tmp_path / "lab.duckdb")
    with pytest.raises(
        TableTooLarge, match=r"'scores' table is kept on disk.*lab\.scan\('scores'\)"
    ):
        disk.scores  # noqa: B018 - the read is the test
    assert_frame_equal(disk.leaderboard(n_boot=50), lab.leaderboard(n_boot=50))
    problems = disk.problems()
    assert_frame_equal(problems, lab.problems())
    assert "retrieval" in problems["problem_type"].to_list()  # the empty contexts, from disk
    assert_frame_equal(disk.insights(), lab.insights())
    index = eye_index(disk)
    assert_frame_equal(index.board, eye_index(lab).board)
    shown = case_detail(disk, index, "c8", "m2")
    assert shown["actual"] == lab.outputs.filter(case_id="c8", model="m2")["actual"].item()
    assert disk.models == ["m1", "m2"]
    assert set(disk.on_disk).isdisjoint(disk._tables)  # still nothing loaded


@pytest.mark.usefixtures("no_memory")
def test_evaluate_on_disk_equals_in_memory_and_stays_incremental(tmp_path: Path) -> None:
    base = rag_lab()
    base.save(tmp_path / "lab.duckdb", on_disk=ON_DISK)
    disk = evalnb.evaluate(evalnb.open(tmp_path / "lab.duckdb"), ["rouge", "bleu"], progress=False)
    memory = evalnb.evaluate(base.__class__.view(rag_lab()), ["rouge", "bleu"], progress=False)
    assert_frame_equal(
        sorted_scores(disk.scan("scores")), sorted_scores(memory.scores), abs_tol=1e-12
    )
    assert_frame_equal(disk.metrics, memory.metrics)
    assert [p.evaluators for p in disk.parts_of("scores")] == [("rouge",), ("bleu",)]
    # Nothing left to score: no new part.
    again = evalnb.evaluate(disk, ["rouge"], progress=False)
    assert again.parts_of("scores") == disk.parts_of("scores")
    # A changed parameter rescores BLEU alone: its part is replaced, ROUGE's kept.
    changed = evalnb.evaluate(again, ["bleu"], progress=False, bleu={"lowercase": True})
    want = evalnb.evaluate(memory, ["bleu"], progress=False, bleu={"lowercase": True})
    assert_frame_equal(
        sorted_scores(changed.scan("scores")), sorted_scores(want.scores), abs_tol=1e-12
    )
    rouge, bleu = changed.parts_of("scores")
    assert rouge == disk.parts_of("scores")[0]
    assert bleu.folder != disk.parts_of("scores")[1].folder
    folders = {
        p.relative_to(tmp_path / "lab.duckdb.parts").as_posix()
        for p in (tmp_path / "lab.duckdb.parts" / "scores").iterdir()
    }
    assert folders == {rouge.folder, bleu.folder}  # the replaced part's files are gone
    reopened = evalnb.open(tmp_path / "lab.duckdb")
    assert reopened.parts_of("scores") == changed.parts_of("scores")


def test_two_copies_score_different_evaluators_and_the_same_one_conflicts(tmp_path: Path) -> None:
    rag_lab(200).save(tmp_path / "lab.duckdb", on_disk=ON_DISK)
    first, second, late = (evalnb.open(tmp_path / "lab.duckdb") for _ in range(3))
    first = evalnb.evaluate(first, ["rouge"], progress=False)
    # Another evaluator lands beside it: nobody's rows are lost.
    second = evalnb.evaluate(second, ["bleu"], progress=False)
    assert {p.evaluators for p in second.parts_of("scores")} == {("rouge",), ("bleu",)}
    assert second.scan("scores").select("evaluator").unique().collect().height == 2
    # The same evaluator from a copy that did not see the first run: refused, nothing left.
    parts = tmp_path / "lab.duckdb.parts" / "scores"
    before = sorted(parts.iterdir())
    with pytest.raises(StoreConflict, match=r"another process changed the 'scores' rows"):
        evalnb.evaluate(late, ["rouge"], progress=False, rouge={"use_stemmer": False})
    assert sorted(parts.iterdir()) == before
    assert evalnb.open(tmp_path / "lab.duckdb").parts_of("scores") == second.parts_of("scores")


def test_a_copy_that_loaded_a_table_on_disk_rereads_it_after_another_process_wrote(
    tmp_path: Path,
) -> None:
    rag_lab(100).save(tmp_path / "lab.duckdb", on_disk=ON_DISK)
    reader = evalnb.open(tmp_path / "lab.duckdb")
    assert reader.scores.is_empty()  # loaded, and empty
    evalnb.evaluate(evalnb.open(tmp_path / "lab.duckdb"), ["rouge"], progress=False)
    reader.save(tmp_path / "lab.duckdb")  # syncs: the other process's parts are seen
    assert reader.scores.height == 100 * 2 * 3


@pytest.mark.usefixtures("no_memory")
def test_the_command_line_imports_evaluates_and_describes_a_lab_on_disk(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "answers.csv"
    rag_lab(40).to_pandas().drop(columns=["context", "expected", "categories", "corpus"]).assign(
        expected=lambda f: f["prompt"]
    ).to_csv(source, index=False)
    store = tmp_path / "lab.duckdb"
    assert main(["import", str(source), "--to", str(store), "--on-disk"]) == 0
    assert main(["evaluate", str(store), "-e", "rouge"]) == 0
    assert main(["info", str(store)]) == 0
    out = capsys.readouterr().out
    assert "evaluators run: rouge" in out
    assert "primary metric per model" in out
    assert evalnb.open(store).on_disk == ON_DISK
    assert evalnb.open(store).height("scores") == 80 * 3


@pytest.mark.usefixtures("no_memory")
def test_an_evaluator_that_scores_nothing_on_disk_says_so_for_every_answer(
    tmp_path: Path,
) -> None:
    answers = pl.DataFrame({"prompt": [f"q{i}" for i in range(300)], "actual": ["a"] * 300})
    evalnb.load(answers).save(tmp_path / "lab.duckdb", on_disk=ON_DISK)
    with pytest.warns(evalnb.NothingScoredWarning, match="bleu scored none of the 300 answers"):
        evalnb.evaluate(evalnb.open(tmp_path / "lab.duckdb"), ["bleu"], progress=False)


@pytest.mark.usefixtures("no_memory")
def test_the_weakness_grid_labeler_and_calibration_work_on_disk(tmp_path: Path) -> None:
    memory = evalnb.evaluate(rag_lab(400), ["rouge"], progress=False)
    memory.save(tmp_path / "lab.duckdb", on_disk=ON_DISK)
    memory = evalnb.Lab.view(rag_lab(400))  # the same lab again, in memory only
    memory = evalnb.evaluate(memory, ["rouge"], progress=False)
    disk = evalnb.open(tmp_path / "lab.duckdb")
    assert_frame_equal(
        weakness_index(disk, "rouge", "rouge_l").rows,
        weakness_index(memory, "rouge", "rouge_l").rows,
    )
    grid = disk.weakness("rouge", "rouge_l", min_n=3)
    assert grid.selection().height == memory.outputs.height
    picked = disk.calibration.sample("rouge", "rouge_l", n=12, strategy="random", seed=3)
    assert_frame_equal(
        picked, memory.calibration.sample("rouge", "rouge_l", n=12, strategy="random", seed=3)
    )
    for i, row in enumerate(picked.iter_rows(named=True)):
        verdict = "pass" if row["value"] > 0.9 or i % 5 == 0 else "fail"
        for lab in (disk, memory):
            lab.calibration.add_label(
                row["case_id"], row["model"], "rouge", "rouge_l", verdict, reviewer="r"
            )
    found = disk.calibration.recalibrate("rouge", "rouge_l", n_boot=50)
    assert (
        found.threshold == memory.calibration.recalibrate("rouge", "rouge_l", n_boot=50).threshold
    )
    assert_frame_equal(
        disk.calibration.corrected_leaderboard("rouge", "rouge_l"),
        memory.calibration.corrected_leaderboard("rouge", "rouge_l"),
    )
    assert disk.calibration.guardrail_config() == memory.calibration.guardrail_config()
    labeler = evalnb.labeler(disk, "rouge", "rouge_l", reviewer="s", n=5, strategy="random")
    assert labeler.remaining == 5
    shown = labeler.item
    assert shown is not None
    assert (
        shown["actual"]
        == memory.outputs_of(
            pl.DataFrame({"case_id": [shown["case_id"]], "model": [shown["model"]], "sample": [0]}),
            "actual",
        )["actual"].item()
    )
    assert set(disk.on_disk).isdisjoint(disk._tables)  # nothing loaded whole
