"""rouge-score's tokenizer, compiled, equals ``rouge_score``'s own on any text."""

from __future__ import annotations

import re
import sys

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rouge_score.tokenizers import DefaultTokenizer

from evalnb.text.rouge_tokens import rouge_token_ids
from evalnb_testkit.budget import examples


def test_only_two_characters_outside_ascii_lower_case_to_its_letters() -> None:
    # The kernel's premise, over all of Unicode as this Python knows it.
    found = [c for c in range(0x80, sys.maxunicode + 1) if re.search("[a-z0-9]", chr(c).lower())]
    assert found == [0x130, 0x212A]


_PIECES = st.sampled_from(
    [
        "Running",
        "RUNS",
        "ran",
        "İstanbul",
        "\u212aelvin",
        "naïve",
        "日本語",
        "ΣΑΣ",
        "1,000.5",
        "https://x.org/a?b=c",
        "e-mail",
        "—",
        "\u0307",
        "😀",
        " ",
        "\t",
        "\n",
        "...",
        "'s",
        "l33t",
    ]
)


@settings(max_examples=examples(300), deadline=None)
@given(
    st.lists(
        st.one_of(st.text(max_size=12), st.lists(_PIECES, max_size=8).map(" ".join)),
        min_size=1,
        max_size=12,
    ),
    st.booleans(),
)
def test_any_text_tokenizes_as_rouge_score(texts: list[str], stem: bool) -> None:
    tok = DefaultTokenizer(use_stemmer=stem)
    ours = rouge_token_ids([pl.Series(texts, dtype=pl.String)], stem=stem).lists(0)
    assert ours == [tok.tokenize(t) for t in texts]


@pytest.mark.parametrize("stem", [True, False])
def test_columns_share_ids_and_nulls_read_as_empty(stem: bool) -> None:
    a = pl.Series(["The runner runs", None, "İ"])
    b = pl.Series(["running RUNNERS", ""])
    tokens = rouge_token_ids([a, b], stem=stem)
    assert tokens.lists(0) == [
        ["the", "runner", "run" if stem else "runs"],
        [],
        ["i"],
    ]
    assert tokens.lists(1) == [["run" if stem else "running", "runner" if stem else "runners"], []]
    # "runner" of column 0 and "runners" of column 1: one id once stemmed, two without.
    same = tokens.ids[tokens.offsets[0][0] + 1] == tokens.ids[tokens.offsets[1][0] + 1]
    assert same == stem
