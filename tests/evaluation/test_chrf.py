"""chrF's counting: the packed character kernel against the general one and sacrebleu."""

from __future__ import annotations

import random

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sacrebleu.metrics import CHRF

from evalnb.text.chrf import chrf
from evalnb.text.ngram_kernel import clipped_counts, packed_clipped_counts
from evalnb.text.utf8 import NARROW, char_ids
from evalnb_testkit.budget import examples


def test_white_space_is_pythons_for_every_code_point() -> None:
    points = [c for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    text = "".join(chr(c) for c in points)
    data = np.frombuffer(text.encode("utf-8"), dtype=np.uint8)
    lens = [len(chr(c).encode("utf-8")) for c in points]
    lows = np.concatenate([[0], np.cumsum(lens)[:-1]]).astype(np.int64)
    highs = lows + np.array(lens, dtype=np.int64)
    ids, kept, _ = char_ids(data, lows, highs, 0)  # no packing: every id a code point + 1
    assert [c for c, k in zip(points, kept, strict=True) if k == 0] == [
        c for c in points if chr(c).isspace()
    ]
    assert (ids == np.array([c + 1 for c in points if not chr(c).isspace()])).all()


@settings(max_examples=examples(80), deadline=None)
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


def test_char_ids_drop_white_space_and_number_wide_characters_after_the_narrow() -> None:
    texts = ["a b\x1cа", "", " \u3000", "ba’’", "日"]
    data = np.frombuffer("".join(texts).encode("utf-8"), dtype=np.uint8)
    lens = [len(t.encode("utf-8")) for t in texts]
    lows = np.concatenate([[0], np.cumsum(lens)[:-1]]).astype(np.int64)
    highs = lows + np.array(lens, dtype=np.int64)
    ids, kept, top = char_ids(data, lows, highs, 5)
    a, b = ord("a") + 1, ord("b") + 1  # below U+0400: their own code points; Cyrillic а is wide
    assert ids.tolist() == [a, b, NARROW + 1, b, a, NARROW + 2, NARROW + 2, NARROW + 3]
    assert kept.tolist() == [3, 0, 0, 4, 1]
    assert top == NARROW + 3
    raw, _, raw_top = char_ids(data, lows, highs, 2)  # too many wide ones: code points
    assert raw.tolist()[-1] == ord("日") + 1 and raw_top == ord("日") + 1


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
