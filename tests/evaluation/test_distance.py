"""Batched string similarity: a floor that stops distances early keeps every verdict."""

from __future__ import annotations

import random

import numpy as np
import pytest

from evalnb.text.distance import MEASURES, similarity
from evalnb_testkit.real_pairs import real_pairs


@pytest.mark.parametrize("measure", MEASURES)
def test_a_floor_keeps_every_value_at_or_above_it(measure: str) -> None:
    cands, refs = real_pairs(400, seed=5)
    rng = random.Random(2)
    left, right = [], []
    for _ in range(6000):
        a = rng.choice(cands + refs)
        b = a if rng.random() < 0.2 else rng.choice(cands + refs)
        cut = rng.randint(0, len(b))
        right.append(b[:cut] + rng.choice(["", "x", " and some words"]))
        left.append(a)
    # pairs exactly at the floors: 14 edits in 40 characters is 0.65 similar
    left += ["a" * 26 + "b" * 14, "abcdefghij" * 2]
    right += ["a" * 26 + "c" * 14, "abcdefghij" + "klmnopqrst"]
    exact = similarity(left, right, measure)
    for floor in (0.3, 0.5, 0.55, 0.65, 0.9):
        floored = similarity(left, right, measure, floor)
        kept = exact >= floor
        assert np.array_equal(floored[kept], exact[kept])
        assert (floored[~kept] < floor).all()
