"""ROUGE against rouge-score on every pair of a seeded corpus and adversarial strings."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from rouge_score import rouge_scorer
from rouge_score.tokenizers import DefaultTokenizer

import evalnb
from evalnb.text.rouge_tokens import rouge_token_ids
from evalnb.text.synthetic import ADVERSARIAL, pairs

_EXTRA = (
    "Running runners ran quickly",
    "generously generalized GENERATION",
    "ÀÉÎõü naïve",
    "The K\u212a kelvin",
    "cats' dogs's oxen",
    "1st 2nd 3rd 100,000.5",
)


def _texts() -> tuple[list[str], list[str]]:
    cands, refs = pairs(1500, seed=11)
    extra = list(ADVERSARIAL) + list(_EXTRA)
    return cands + extra + extra[::-1], refs + extra[::-1] + extra


@pytest.mark.parametrize("stem", [True, False])
def test_tokenizer_is_rouge_score(stem: bool) -> None:
    cands, refs = _texts()
    tok = DefaultTokenizer(use_stemmer=stem)
    texts = cands + refs
    ours = rouge_token_ids([pl.Series(texts)], stem=stem).lists(0)
    assert [list(tokens) for tokens in ours] == [tok.tokenize(t) for t in texts]


@pytest.mark.parametrize("stem", [True, False])
def test_scores_identical_to_rouge_score(stem: bool) -> None:
    cands, refs = _texts()
    # The evaluator itself, one reference per answer: its scores are rouge-score's.
    frame = pl.DataFrame(
        {
            "prompt": [str(i) for i in range(len(cands))],
            "actual": cands,
            "expected": [[r] for r in refs],
        }
    )
    lab = evalnb.evaluate(evalnb.load(frame), "rouge", use_stemmer=stem, progress=False)
    ours = {
        key: lab.scores.filter(pl.col("metric") == key).sort("case_id")["value"].to_numpy()
        for key in ("rouge_1", "rouge_2", "rouge_l")
    }
    order = lab.cases.sort("case_id")["prompt"].cast(pl.Int64).to_list()
    cands, refs = [cands[i] for i in order], [refs[i] for i in order]
    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=stem)
    theirs = [scorer.score(r, c) for c, r in zip(cands, refs, strict=True)]
    for ours_key, their_key in (
        ("rouge_1", "rouge1"),
        ("rouge_2", "rouge2"),
        ("rouge_l", "rougeL"),
    ):
        expected = np.array([s[their_key].fmeasure for s in theirs])
        # Where rouge-score finds no words (a reference in Japanese), the row says so instead.
        unscored = np.isnan(ours[ours_key])
        assert [refs[i] for i in np.flatnonzero(unscored)] == ["日本語のテキスト。"] * 2
        assert np.max(np.abs(ours[ours_key][~unscored] - expected[~unscored])) == 0.0
    reasons = lab.scores.filter(pl.col("value").is_null())["detail"].str.json_path_match("$.reason")
    assert reasons.str.contains("not meaningful for Japanese").all()


def test_evaluator_best_reference_and_missing() -> None:
    frame = pl.DataFrame(
        {
            "prompt": ["a", "b", "c"],
            "expected": [["The quick brown fox jumps over the lazy dog", "a dog"], ["x"], []],
            "actual": ["The quick brown dog jumps on the log.", "", "y"],
        }
    )
    lab = evalnb.evaluate(evalnb.load(frame), ["rouge"], progress=False)
    wide = lab.scores.pivot(on="metric", index="case_id", values="value")
    scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)
    best = scorer.score_multi(frame["expected"][0].to_list(), frame["actual"][0])["rougeL"]
    assert wide["rouge_l"][0] == best.fmeasure
    assert wide["rouge_l"].to_list()[1:] == [0.0, None]
    assert lab.metrics.filter(pl.col("primary"))["metric"].to_list() == ["rouge_l"]
