"""contains_each: the compiled scan and Polars' search agree with Python's ``in``."""

from __future__ import annotations

import random

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalnb.text import contains as contains_mod
from evalnb.text.contains import contains_each
from evalnb.text.intern import utf8_buffers
from evalnb_testkit.budget import examples


@settings(max_examples=examples(200), deadline=None)
@given(
    st.lists(
        st.tuples(st.text("abé’日 ", max_size=40), st.text("abé’日 ", max_size=6)),
        min_size=1,
        max_size=30,
    )
)
def test_each_pair_as_python_in(pairs: list[tuple[str, str]]) -> None:
    texts, needles = [t for t, _ in pairs], [n for _, n in pairs]
    got = contains_each(pl.Series(texts, dtype=pl.String), pl.Series(needles, dtype=pl.String))
    assert got.tolist() == [n in t for t, n in pairs]


def test_long_pairs_go_to_polars_with_the_same_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(4)
    texts = ["".join(rng.choice("ab") for _ in range(3000)) for _ in range(20)]
    needles = [t[100:1600] if i % 2 else "b" * 40 + "a" for i, t in enumerate(texts)]
    texts += ["a" * 3000, "a" * 3000 + "b"]  # a scan would compare ~100 bytes at each
    needles += ["a" * 100 + "b", "a" * 100 + "b"]
    want = [n in t for t, n in zip(texts, needles, strict=True)]
    data, offsets = utf8_buffers(pl.Series(texts).to_arrow())
    ndata, noffsets = utf8_buffers(pl.Series(needles).to_arrow())
    _, done = contains_mod._scan(data, offsets, ndata, noffsets, contains_mod._SCAN_WORK)
    assert not done[-2:].any()  # left to Polars' linear search
    got = contains_each(pl.Series(texts), pl.Series(needles))
    assert got.tolist() == want
    assert isinstance(got, np.ndarray)
    monkeypatch.setattr(contains_mod, "_SCAN_WORK", 1 << 20)  # all of them scanned
    assert contains_each(pl.Series(texts), pl.Series(needles)).tolist() == want
