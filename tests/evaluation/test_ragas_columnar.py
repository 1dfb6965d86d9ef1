"""ragas JSONL read by columns gives the record path's lab, and hands it anything unusual."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import evalnb
from evalnb.io import load as load_mod
from evalnb.io.ragas_columnar import ragas_jsonl_tables
from evalnb.lab.errors import InputError

ROOT = Path(__file__).resolve().parents[2]


def records(n: int) -> list[dict[str, object]]:
    return [
        {
            "user_input": f"What is item {i}?",
            "response": f"Item {i} is {'é' * (i % 3)} fine.",
            "reference": f"Item {i} is fine.",
            "retrieved_contexts": [f"ctx {i}", "shared [1]"],
            "reference_contexts": [f"ref ctx {i}"],
            "retrieved_context_ids": [f"d{i}", "d0"],
        }
        for i in range(n)
    ]


def write(tmp_path: Path, recs: list[dict[str, object]], sep: str = "\n") -> Path:
    path = tmp_path / "data.jsonl"
    path.write_text(sep.join(json.dumps(r, ensure_ascii=False) for r in recs) + sep)
    return path


def record_path_lab(path: Path, monkeypatch: pytest.MonkeyPatch, **kw: object) -> evalnb.Lab:
    with monkeypatch.context() as m:
        m.setattr(load_mod, "ragas_jsonl_tables", lambda *_: None)
        return evalnb.load(path, **kw)  # type: ignore[arg-type]


def assert_same_lab(path: Path, monkeypatch: pytest.MonkeyPatch, **kw: object) -> None:
    model = str(kw.get("model", "model"))
    assert ragas_jsonl_tables(path.read_text(), model) is not None, "expected the columnar path"
    fast, slow = evalnb.load(path, **kw), record_path_lab(path, monkeypatch, **kw)  # type: ignore[arg-type]
    for table in ("cases", "outputs", "scores", "metrics", "models", "info"):
        assert_frame_equal(fast.table(table), slow.table(table))


def test_the_demo_dataset_ragas_wrote(monkeypatch: pytest.MonkeyPatch) -> None:
    assert_same_lab(ROOT / "data" / "ragas_dataset.jsonl", monkeypatch, model="rag")


def test_fields_of_their_own_ids_models_and_gaps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    recs = records(40)
    for i, r in enumerate(recs):
        r.update(
            rubrics=["be brief", "cite"],
            persona_name='Bo\n\t\x01ß"',
            query_length=i,
            flag=i % 2 == 0,
            multi_responses=["a", f"b{i}"],
        )
    for r in recs[:5]:
        r["id"], r["model"] = f"given-{r['user_input']}", "other"
    recs[6]["reference"] = ""  # no expected answer
    del recs[7]["response"]  # no answer
    recs[8]["synthesizer_name"] = "single_hop"
    assert_same_lab(write(tmp_path, recs, sep="\r\n"), monkeypatch, model="rag")
    path = tmp_path / "blank.jsonl"
    path.write_text("\n\n  \n".join(json.dumps(r) for r in recs))
    assert_same_lab(path, monkeypatch)


@pytest.mark.parametrize(
    "change",
    [
        "a float of its own",
        "a field some records lack",
        "an id list mixing text and numbers",
        "a multi-turn sample",
        "two values on a line",
        "a surrogate escape",
        "a deep value",
    ],
)
def test_anything_unusual_takes_the_record_path(
    change: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    recs = records(6)
    for r in recs:
        r["persona_name"] = "Ann"
    lines: list[str] = []
    if change == "a float of its own":
        recs[2]["score"] = 0.5
    elif change == "a field some records lack":
        del recs[3]["persona_name"]
    elif change == "an id list mixing text and numbers":
        recs[1]["retrieved_context_ids"] = ["a", 1]
    elif change == "a multi-turn sample":
        recs[4]["user_input"] = [{"content": "hi", "type": "human"}]
    elif change == "two values on a line":
        lines = [json.dumps(recs[0]) + " " + json.dumps(recs[1])]
    elif change == "a surrogate escape":
        recs[0]["persona_name"] = "\ud800"
    elif change == "a deep value":
        lines = ['{"user_input": "q", "deep": ' + "[" * 300 + "]" * 300 + "}"]
    text = "\n".join(lines + [json.dumps(r) for r in recs]) + "\n"
    path = tmp_path / "data.jsonl"
    path.write_text(text)
    assert ragas_jsonl_tables(text, "model") is None
    expected: str | None = None
    try:
        slow = record_path_lab(path, monkeypatch)
    except InputError as exc:  # the record path's own error, naming the line
        expected = str(exc)
    if expected is not None:
        with pytest.raises(InputError) as got:
            evalnb.load(path)
        assert str(got.value) == expected
        assert "line" in expected
        return
    fast = evalnb.load(path)
    for table in ("cases", "outputs"):
        assert_frame_equal(fast.table(table), slow.table(table))


def test_speaks_only_for_single_turn_text() -> None:
    frame = pl.DataFrame({"user_input": ["q"], "response": ["a"]})
    text = frame.write_ndjson()
    tables = ragas_jsonl_tables(text, "m")
    assert tables is not None
    assert tables["outputs"].select("model", "actual").rows() == [("m", "a")]
    assert ragas_jsonl_tables('{"user_input": 5, "response": "a"}\n', "m") is None
    assert ragas_jsonl_tables('{"user_input": "q", "response": 5}\n', "m") is None


class FakeDataset:
    """What evalnb reads of an ``EvaluationDataset``: ``to_list()`` (duck-typed)."""

    def __init__(self, recs: list[dict[str, object]]) -> None:
        self.recs = recs

    def to_list(self) -> list[dict[str, object]]:
        return [dict(r) for r in self.recs]


def object_record_path_lab(
    recs: list[dict[str, object]], monkeypatch: pytest.MonkeyPatch, **kw: object
) -> evalnb.Lab:
    with monkeypatch.context() as m:
        m.setattr(load_mod, "ragas_object_tables", lambda *_: None)
        return evalnb.load(FakeDataset(recs), **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize("case", ["plain", "own fields", "nested", "mixed", "surrogate"])
def test_dataset_objects_by_columns_equal_the_record_path(
    case: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    recs = records(30)
    if case == "own fields":
        for i, r in enumerate(recs):
            r.update(persona_name="Ann", query_length=i, rubrics=["brief"], id=f"s{i}")
    elif case == "nested":
        recs[3]["rubrics"] = {"score1": "bad", "score5": "good"}
    elif case == "mixed":
        recs[3]["retrieved_context_ids"] = ["a", 2]
    elif case == "surrogate":
        recs[3]["response"] = "half \ud800 a pair"
    columnar = load_mod.ragas_object_tables(FakeDataset(recs).to_list(), "rag")
    assert (columnar is not None) == (case in {"plain", "own fields"})
    expected: str | None = None
    try:
        slow = object_record_path_lab(recs, monkeypatch, model="rag")
    except InputError as exc:
        expected = str(exc)
    if expected is not None:
        with pytest.raises(InputError) as got:
            evalnb.load(FakeDataset(recs), model="rag")  # type: ignore[arg-type]
        assert str(got.value) == expected
        return
    fast = evalnb.load(FakeDataset(recs), model="rag")  # type: ignore[arg-type]
    for table in ("cases", "outputs", "scores", "metrics", "models", "info"):
        assert_frame_equal(fast.table(table), slow.table(table))
