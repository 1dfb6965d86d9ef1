"""The columnar frame importer builds exactly what the record importer builds, or steps aside."""

from __future__ import annotations

import random

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import evalnb
from evalnb.io.builder import LabBuilder, content_id, content_ids
from evalnb.io.columnar import frame_tables
from evalnb.io.load import frame_records
from evalnb.io.tabular import read_records
from evalnb.lab.core import with_cases
from evalnb.lab.errors import InputError
from evalnb_testkit.budget import examples

_ODD = 'quote " back \\ tab\t nl\n ctl\x01 del\x7f é 漢 \u2028'


def _by_records(frame: pl.DataFrame, **mapping: object) -> dict[str, pl.DataFrame]:
    builder = LabBuilder()
    read_records(frame_records(frame, "<frame>"), frame.columns, mapping, "<frame>", builder)
    return builder.frames()


def _same(frame: pl.DataFrame, **mapping: object) -> None:
    fast = frame_tables(frame, mapping, "<frame>")
    assert fast is not None, "the columnar path stepped aside"
    slow = _by_records(frame, **mapping)
    assert set(fast) == set(slow)
    for name, table in slow.items():
        assert_frame_equal(fast[name], table)


def test_long_table_with_every_field_kind() -> None:
    _same(
        pl.DataFrame(
            {
                "case_id": ["a", "a", "b", "c", "d"],
                "question": ["q1", "q1", "", None, "q4"],
                "expected": [["x"], ["x"], [], None, ["y", "z"]],
                "answer": ["ans", "other", "", None, _ODD],
                "model": ["m1", "m2", "", None, "m1"],
                "contexts": [["c"], None, [], ["d", "e"], None],
                "latency": [0.5, None, 2.0, 1.0, 3.25],
                "cost": [1, 2, None, 4, 5],
                "error": [None, "", "boom", None, None],
                # unmapped: part of the case (its `extra`), so equal on the two rows of case a
                "note": [_ODD, _ODD, "n", "", None],
                "rank": [1, 1, None, 4, 5],
                "flag": [True, True, None, True, False],
            }
        ),
        prompt="question",
    )


def test_content_ids_and_repeated_cases() -> None:
    _same(
        pl.DataFrame(
            {
                "prompt": ["p", "p", "q", "r"],
                "expected": ["e", "e", "", None],
                "condition": ['"e"', '"e"', None, ""],
                "actual": ["1", "2", "3", "4"],
                "model": ["a", "b", "a", "a"],
                "category": ["k", "k", None, "j"],
                "sample": [0, 0, 1, None],
            }
        )
    )


_TEXT = st.one_of(st.none(), st.text(st.characters(codec="utf-8"), max_size=12))


@settings(max_examples=examples(150), deadline=None)
@given(
    st.lists(
        st.tuples(_TEXT, st.one_of(st.none(), st.lists(_TEXT, max_size=3)), _TEXT),
        min_size=1,
        max_size=8,
    )
)
def test_column_content_ids_are_the_record_ids(
    rows: list[tuple[str | None, list[str | None] | None, str | None]],
) -> None:
    """The vectorized ids must equal ``json.dumps``-based ones: labs store them."""
    frame = pl.DataFrame(
        [{"prompt": p, "expected": e, "system": s} for p, e, s in rows],
        schema={"prompt": pl.String, "expected": pl.List(pl.String), "system": pl.String},
    )
    assert content_ids(frame).to_list() == [content_id(r) for r in frame.iter_rows(named=True)]


def test_json_list_text_and_bracketed_prose() -> None:
    """A reference may be JSON text of a list, or prose that opens with a bracket."""
    _same(
        pl.DataFrame(
            {
                "prompt": ["a", "b", "c", "d"],
                "expected": ['["x", "y"]', "[1] Smith et al.", ' ["z"]', "[unclosed"],
                "actual": ["p", "q", "r", "s"],
            }
        )
    )


def test_wide_table() -> None:
    _same(
        pl.DataFrame(
            {
                "id": [1, 2, 3],
                "prompt": ["p1", "p2", "p3"],
                "gpt": ["g1", None, "g3"],
                "llama": ["l1", "l2", ""],
            }
        ),
        actual={"gpt": "gpt", "llama": "llama"},
    )


@pytest.mark.parametrize(
    "frame",
    [
        # a float column left unmapped: Python and Polars print floats differently
        pl.DataFrame({"prompt": ["p"], "actual": ["x"], "score": [0.1]}),
        # a string duration: converted record by record
        pl.DataFrame({"prompt": ["p"], "actual": ["x"], "duration": ["1.5"]}),
    ],
)
def test_steps_aside_and_the_record_path_imports(frame: pl.DataFrame) -> None:
    assert frame_tables(frame, {}, "<frame>") is None
    assert evalnb.load(frame).outputs.height == 1


def test_errors_come_from_the_record_path() -> None:
    numbers = pl.DataFrame({"prompt": ["p"], "expected": ["[1, 2]"], "actual": ["x"]})
    assert frame_tables(numbers, {}, "<frame>") is None
    with pytest.raises(InputError, match="record 0: field 'expected'"):
        evalnb.load(numbers)
    clash = pl.DataFrame({"case_id": ["a", "a"], "prompt": ["p", "q"], "actual": ["x", "y"]})
    with pytest.raises(InputError, match="record 1"):
        evalnb.load(clash)
    twice = pl.DataFrame({"case_id": ["a", "a"], "prompt": ["p", "p"], "actual": ["x", "y"]})
    with pytest.raises(InputError, match="one answer per"):
        evalnb.load(twice)
    negative = pl.DataFrame({"prompt": ["p"], "actual": ["x"], "sample": [-1]})
    with pytest.raises(InputError, match="non-negative"):
        evalnb.load(negative)


@settings(max_examples=examples(60), deadline=None)
@given(
    cases=st.integers(1, 6),
    models=st.integers(1, 3),
    order=st.sampled_from(["blocks", "side_by_side", "shuffled", "missing"]),
    seed=st.integers(0, 99),
)
def test_rows_equal_the_join_of_outputs_with_their_cases(
    cases: int, models: int, order: str, seed: int
) -> None:
    case_frame = pl.DataFrame(
        {
            "case_id": [f"c{i}" for i in range(cases)],
            "prompt": [f"p{i}" for i in range(cases)],
            "extra": [f'{{"i": {i}}}' for i in range(cases)],
        }
    )
    keys = [(f"c{i}", f"m{j}") for j in range(models) for i in range(cases)]
    if order == "side_by_side":
        keys = sorted(keys)
    elif order == "shuffled":
        random.Random(seed).shuffle(keys)
    elif order == "missing":
        keys = [*keys[1:], ("gone", "m0")]
    outputs = pl.DataFrame(
        {
            "case_id": [k[0] for k in keys],
            "model": [k[1] for k in keys],
            "prompt": [f"seen {k}" for k in keys],
            "extra": [None] * len(keys),
        },
        schema_overrides={"extra": pl.String},
    )
    want = outputs.join(case_frame, on="case_id", how="left", suffix="_case")
    want = want.rename({"extra": "output_extra", "extra_case": "case_extra"})
    assert_frame_equal(with_cases(outputs, case_frame), want)
