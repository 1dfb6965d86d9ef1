"""Looping detection and the longest non-overlapping repeat."""

from __future__ import annotations

import zlib

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import evalnb
from evalnb.evaluation.families.text.looping import looping_metrics
from evalnb.text.repeats import longest_repeat
from evalnb_testkit.budget import examples


def _brute(s: str) -> str:
    """H2O's O(n²) search: for i < j extend while equal and the copies do not overlap."""
    best, sub = 0, ""
    for i in range(len(s)):
        for j in range(i + 1, len(s)):
            k = 0
            while j + k < len(s) and s[i + k] == s[j + k] and i + k < j:
                k += 1
            if k > best:
                best, sub = k, s[i : i + k]
    return sub


@settings(max_examples=examples(500), deadline=None)
@given(st.text(alphabet="ab c.é", max_size=60))
def test_longest_repeat_equals_brute_force(text: str) -> None:
    assert longest_repeat(text) == _brute(text)


def test_metrics_on_a_looping_answer() -> None:
    answer = "I can help with that. " * 6 + "Anything else?"
    unique, longest, ratio, detail = looping_metrics(answer)
    assert unique == 2 / 7
    repeat = _brute(answer)
    assert longest == answer.count(repeat) * len(repeat) / len(answer)
    data = answer.encode()
    assert ratio == min(1.0, len(zlib.compress(data, 9)) / len(data))
    assert detail["most_common_sentence"] == {"text": "I can help with that.", "repetitions": 6}


def test_single_sentence_is_not_looping_and_failed_answers_are_not_scored() -> None:
    assert looping_metrics("Paris is the capital of France.")[0] == 1.0
    frame = pl.DataFrame(
        {
            "prompt": ["a", "b"],
            "actual": ["", "MODEL HOST INTERNAL ERROR: x"],
            "error": [None, "MODEL HOST INTERNAL ERROR: x"],
        }
    )
    with pytest.warns(evalnb.NothingScoredWarning, match="not scored: the answer is empty"):
        lab = evalnb.evaluate(evalnb.load(frame), ["looping_detection"], progress=False)
    wide = lab.scores.pivot(on="metric", index="case_id", values="value")
    assert wide.select(
        "unique_sentences", "longest_repeated_substring", "compression_ratio"
    ).rows() == [(None, None, None), (None, None, None)]
    assert lab.scores["detail"].str.contains("not scored").all()


def test_each_row_gets_its_own_answers_metrics() -> None:
    # Distinct answers are computed once and joined back: every row must get its own.
    loop = "I can help with that. " * 6 + "Anything else?"
    plain = "Paris is the capital of France. It is on the Seine."
    answers = [loop, plain, "", loop, plain, "x"]
    errors = [None, None, None, "boom", None, None]
    frame = pl.DataFrame(
        {"prompt": [f"q{i}" for i in range(6)], "actual": answers, "error": errors}
    )
    lab = evalnb.evaluate(evalnb.load(frame), ["looping_detection"], progress=False)
    got = (
        lab.scores.join(lab.cases.select("case_id", "prompt"), on="case_id")
        .pivot(on="metric", index="prompt", values="value")
        .sort("prompt")
    )
    for i, (answer, error) in enumerate(zip(answers, errors, strict=True)):
        row = got.row(i, named=True)
        want = (None, None, None) if error or not answer else looping_metrics(answer)[:3]
        assert (
            row["unique_sentences"],
            row["longest_repeated_substring"],
            row["compression_ratio"],
        ) == want, i
