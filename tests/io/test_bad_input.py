"""Bad input: every failure is an InputError naming file, place, field, expected and found;
a failed import leaves the store untouched."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import evalnb
from evalnb.lab import store as _store
from evalnb_testkit.paths import SHARED, needs_shared


def _write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("name", "content", "fmt", "pattern"),
    [
        ("empty.json", "", None, r"empty\.json: expected at least one record, found an empty file"),
        ("blank.jsonl", "\n  \n", None, r"found an empty file"),
        (
            "broken.json",
            '{"tests": [',
            None,
            r"broken\.json, line 1, column 12: expected valid JSON",
        ),
        (
            "lines.jsonl",
            '{"messages": []}\n{"messages": [}\n',
            None,
            r"line 2, column \d+: expected one JSON value per line",
        ),
        (
            "latin1.csv",
            "prompt,actual\ncaf\xe9,ok\n".encode("latin-1"),
            None,
            r"line 2, byte 17: expected UTF-8 text",
        ),
        (
            "suite.json",
            '{"tests": [{"test_cases": [{"prompt": 3}]}]}',
            None,
            r"\$\.tests\[0\]\.test_cases\[0\]: field 'prompt': expected a string, found integer 3",
        ),
        (
            "suite2.json",
            '{"tests": [{"test_cases": [{"expected_output": "x"}]}]}',
            None,
            r"field 'prompt': expected a string, found no such key",
        ),
        (
            "lab.json",
            '{"dataset": {"inputs": [{"input": "q", "model_key": "m", "actual_output": "a"}]}, "models": []}',
            None,
            r"\$\.dataset\.inputs\[0\]: field 'model_key': expected one of the keys in \$\.models",
        ),
        (
            "lab2.json",
            '{"dataset": {"inputs": [{"input": "q", "model_key": "m", "cost": "cheap"}]}, "models": [{"key": "m"}]}',
            None,
            r"field 'cost': expected a number or null, found string 'cheap'",
        ),
        (
            "lab3.json",
            '{"dataset": {"inputs": [{"input": "q", "categories": [1]}]}}',
            None,
            r"field 'categories\[0\]': expected a string, found integer 1",
        ),
        (
            "harpia.json",
            '{"instances": [{"id": "1", "input": "x"}, {"id": "1", "input": "y"}], "metrics": []}',
            None,
            r"\$\.instances\[1\]: field 'id': expected a unique id",
        ),
        (
            "harpia2.json",
            '{"instances": []}',
            None,
            r"field 'metrics': expected a list of objects, found no such key",
        ),
        (
            "chat.jsonl",
            '{"messages": [{"role": "user", "content": ["x"]}]}\n',
            None,
            r"line 1\.messages\[0\]: field 'content': expected a string, found list",
        ),
        (
            "chat2.jsonl",
            '{"messages": [{"role": "assistant", "content": "x"}]}\n',
            None,
            r"field 'messages': expected at least one message with role 'user'",
        ),
        (
            "dup.jsonl",
            '{"messages": [{"role": "user", "content": "q"}], "model_outputs": [{"model_name": "m", "responses": [{"content": "a"}]}, {"model_name": "m", "responses": [{"content": "b"}]}]}\n',
            None,
            r"field 'model_name': expected one answer per \(case, model, sample\)",
        ),
        (
            "ragged.csv",
            "prompt,actual\na,b\nc\n",
            None,
            r"ragged\.csv, line 3: expected 2 columns as in the header, found 1 columns",
        ),
        (
            "types.csv",
            "prompt,actual,cost\na,b,free\n",
            None,
            r"line 2: field 'cost': expected a number",
        ),
        (
            "dupcol.csv",
            "prompt,prompt\na,b\n",
            None,
            r"line 1: field 'prompt': expected unique column names",
        ),
        ("x.parquet", b"PAR1garbage", None, r"x\.parquet: expected a Parquet file"),
        (
            "sur.jsonl",
            '{"prompt": "a\\ud800b"}\n',
            None,
            r"line 1\.prompt: expected valid Unicode text",
        ),
        (
            "sur.json",
            '{"tests": [{"test_cases": [{"prompt": "\\udfff"}]}]}',
            None,
            r"\$\.tests\[0\]\.test_cases\[0\]\.prompt: expected valid Unicode text",
        ),
    ],
)
def test_bad_input_messages(
    tmp_path: Path, name: str, content: str | bytes, fmt: str | None, pattern: str
) -> None:
    path = _write(tmp_path, name, content)
    with pytest.raises(evalnb.InputError, match=pattern) as info:
        evalnb.load(path, format=fmt)
    assert str(path) in str(info.value)


def test_missing_file_and_unknown_format(tmp_path: Path) -> None:
    with pytest.raises(evalnb.InputError, match="no such file"):
        evalnb.load(tmp_path / "nope.json")
    with pytest.raises(ValueError, match="unknown format 'xml'"):
        evalnb.load(tmp_path / "nope.json", format="xml")


def test_store_errors(tmp_path: Path) -> None:
    with pytest.raises(evalnb.StoreError, match="no such lab store"):
        evalnb.open(tmp_path / "none.duckdb")
    junk = _write(tmp_path, "junk.duckdb", b"not a database at all")
    with pytest.raises(evalnb.StoreError, match="is not an evalnb lab store"):
        evalnb.open(junk)


@needs_shared
def test_failed_write_leaves_store_unchanged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = tmp_path / "lab.duckdb"
    before = evalnb.load(SHARED / "doc_text_matching_regexps.json")
    before.save(store)
    other = evalnb.load(SHARED / "pii_test_lab.json")
    real_insert = _store._insert

    def failing_insert(con, name, frame):  # type: ignore[no-untyped-def]
        if name == "outputs":  # cases are already written in this transaction by now
            raise RuntimeError("disk full (simulated)")
        real_insert(con, name, frame)

    monkeypatch.setattr(_store, "_insert", failing_insert)
    with pytest.raises(RuntimeError, match="simulated"):
        other.save(store)
    monkeypatch.undo()
    assert evalnb.open(store).equals(before)


def test_merge_conflict(tmp_path: Path) -> None:
    one = evalnb.load(
        _write(tmp_path, "a.jsonl", json.dumps({"id": 1, "prompt": "p", "actual": "x"}) + "\n")
    )
    two = evalnb.load(
        _write(tmp_path, "b.jsonl", json.dumps({"id": 1, "prompt": "p", "actual": "y"}) + "\n")
    )
    with pytest.raises(evalnb.EvalnbError, match="cannot merge table 'outputs'"):
        one.merge(two)
    assert one.merge(one).equals(one)
