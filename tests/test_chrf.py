"""chrF's counting: the packed character kernel against the general one and sacrebleu."""

from __future__ import annotations

import random

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sacrebleu.metrics import CHRF

from evalnb.text import chrf as chrf_mod
from evalnb.text.chrf import chrf
from evalnb.text.ngram_kernel import clipped_counts, kept_chars, packed_clipped_counts


def test_the_white_space_table_is_pythons_for_every_code_point() -> None:
    spaces = [c for c in range(0x110000) if chr(c).isspace()]
    assert max(spaces) < chrf_mod._SPACE_END
    assert np.flatnonzero(chrf_mod._is_space()).tolist() == spaces


@settings(max_examples=80, deadline=None)
@given(
    texts=st.lists(st.lists(st.integers(1, 6), max_size=30), min_size=2, max_size=12),
    order=st.integers(1, 6),
)
def test_packed_counts_equal_the_general_counter(texts: list[list[int]], order: int) -> None:
    if len(texts) % 2:
        texts = texts[:-1]
    lens = np.array([len(t) for t in texts], dtype=np.int64)
    tokens = np.array([x for t in texts for x in t], dtype=np.int64)
    off = np.concatenate([[0], np.cumsum(lens)])
    half = len(texts) // 2
    h_lo, h_hi = off[:half], off[1 : half + 1]
    r_lo, r_hi = off[half:-1], off[half + 1 :]
    want, want_total, _ = clipped_counts(
        tokens, h_lo, h_hi, r_lo, r_hi, np.arange(half + 1, dtype=np.int64), order
    )
    got, got_total = packed_clipped_counts(tokens, h_lo, h_hi, r_lo, r_hi, order, 7)
    assert (got == want).all()
    assert (got_total == want_total).all()


def test_kept_chars_drops_white_space_and_numbers_characters_densely() -> None:
    texts = ["a b\x1cа", "", " \u3000", "ba"]
    points = np.frombuffer("".join(texts).encode("utf-32-le"), dtype=np.uint32)
    lens = np.array([len(t) for t in texts], dtype=np.int64)
    ids, kept, vocabulary = kept_chars(points, lens, chrf_mod._is_space())
    assert ids.tolist() == [1, 2, 3, 2, 1]  # a, b, Cyrillic а, then b, a again
    assert kept.tolist() == [3, 0, 0, 2]
    assert vocabulary == 3


@pytest.mark.parametrize("alphabet", ["latin", "cjk"])
def test_chrf_equals_sacrebleu_on_either_counter(alphabet: str) -> None:
    rng = random.Random(3)
    if alphabet == "latin":  # few characters: the packed counter
        chars = "abcdefgh ijk’é"
    else:  # 3,000 distinct characters do not pack six to 63 bits: the general counter
        chars = "".join(chr(0x4E00 + i) for i in range(3000)) + " "
    hyps = ["".join(rng.choice(chars) for _ in range(rng.randint(0, 60))) for _ in range(150)]
    refs = [h[: len(h) // 2] + "".join(rng.choice(chars) for _ in range(20)) for h in hyps]
    hyps[0], refs[1] = "  \x1c ", ""
    got = chrf(pl.Series(hyps), pl.Series(refs))
    scorer = CHRF()
    for g, h, r in zip(got, hyps, refs, strict=True):
        want = (
            0.0 if not h.strip() or not r.strip() else scorer.corpus_score([h], [[r]]).score / 100
        )
        assert g == pytest.approx(want, abs=1e-12)
