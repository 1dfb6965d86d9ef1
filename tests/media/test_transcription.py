"""WER and CER equal jiwer (issue 76), ANLS follows DocVQA's definition, through evaluate."""

from __future__ import annotations

import json
import random

import jiwer
import numpy as np
import polars as pl
import pytest

import evalnb
from evalnb.evaluation.families.text.transcription import corpus_rate
from evalnb.text.edit_rates import anls_scores

WORDS = [
    "the",
    "The",
    "cat",
    "cat,",
    "sat",
    "on",
    "mat.",
    "don't",
    "I'm",
    "[noise]",
    "<unk>",
    "naïve",
    "日本語",
    "Hello!",
    "well-known",
    "42",
    "a",
    "b",
]
GLUE = [" ", "  ", "\t", " \n ", ""]


def transcripts(n: int, seed: int) -> tuple[list[str], list[str]]:
    rng = random.Random(seed)

    def one() -> str:
        return "".join(rng.choice(WORDS) + rng.choice(GLUE) for _ in range(rng.randint(1, 9)))

    refs = [one() for _ in range(n)]
    hyps = [one() if rng.random() > 0.1 else "" for _ in range(n)]  # empty hypotheses too
    return refs, hyps


def lab_of(refs: list[str], hyps: list[str]) -> evalnb.Lab:
    frame = pl.DataFrame(
        {
            "case_id": [f"c{i}" for i in range(len(refs))],
            "prompt": ["say it"] * len(refs),
            "expected": [[r] for r in refs],
            "actual": hyps,
        }
    )
    return evalnb.load(frame)


@pytest.mark.parametrize(
    ("normalize", "transform"), [("none", jiwer.wer_default), ("standard", jiwer.wer_standardize)]
)
def test_wer_equals_jiwer_on_every_pair_and_on_the_corpus(
    normalize: str, transform: object
) -> None:
    refs, hyps = transcripts(400, seed=7)
    lab = evalnb.evaluate(lab_of(refs, hyps), ["wer"], progress=False, normalize=normalize)
    got = dict(zip(lab.scores["case_id"], lab.scores["value"], strict=True))
    expected = [
        jiwer.wer(r, h, reference_transform=transform, hypothesis_transform=transform)
        for r, h in zip(refs, hyps, strict=True)
    ]
    assert np.allclose([got[f"c{i}"] for i in range(len(refs))], expected, atol=1e-12)
    whole = jiwer.wer(refs, hyps, reference_transform=transform, hypothesis_transform=transform)
    assert corpus_rate(lab.scores) == pytest.approx(whole, abs=1e-12)


def test_cer_equals_jiwer_spaces_and_unicode_included() -> None:
    refs, hyps = transcripts(400, seed=11)
    lab = evalnb.evaluate(lab_of(refs, hyps), ["cer"], progress=False)
    got = dict(zip(lab.scores["case_id"], lab.scores["value"], strict=True))
    expected = [jiwer.cer(r, h) for r, h in zip(refs, hyps, strict=True)]
    assert np.allclose([got[f"c{i}"] for i in range(len(refs))], expected, atol=1e-12)
    assert corpus_rate(lab.scores) == pytest.approx(jiwer.cer(refs, hyps), abs=1e-12)


def test_an_empty_reference_counts_insertions_as_jiwer_does() -> None:
    lab = evalnb.evaluate(lab_of(["", "", "a b"], ["x y z", "", "a b"]), ["wer"], progress=False)
    values = dict(zip(lab.scores["case_id"], lab.scores["value"], strict=True))
    assert values == {"c0": 3.0, "c1": 0.0, "c2": 0.0}
    assert json.loads(lab.scores.sort("case_id")["detail"][0]) == {"errors": 3, "length": 0}


def test_anls_follows_docvqa_and_lmms_evals_variant() -> None:
    # "Lisbon" vs "lisbom": 1 edit over 6 -> 5/6; "Paris" vs "Rome": distance 5 of 5 -> 0
    preds = ["lisbom", "Rome", "  New   York ", "abcd", "x"]
    refs = [["Lisbon"], ["Paris"], ["new york", "NYC"], ["abef"], []]
    got = anls_scores(preds, refs)
    assert got[0] == pytest.approx(5 / 6)
    assert got[1] == 0.0
    assert got[2] == 1.0  # normalised: case and white space do not count
    assert got[3] == 0.0  # NL = 0.5 is not under τ
    assert np.isnan(got[4])
    lmms = anls_scores(preds, refs, convention="lmms_eval")
    assert lmms[3] == 0.5  # lmms-eval keeps a similarity of exactly 1 - τ
    assert lmms[2] == pytest.approx(1.0)
    lab = lab_of(["Lisbon"], ["lisbom"])
    scored = evalnb.evaluate(lab, ["anls"], progress=False)
    assert scored.scores["value"].to_list() == pytest.approx([5 / 6])
