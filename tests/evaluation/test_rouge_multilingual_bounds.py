"""rouge_multilingual: word forms meet through Snowball stems, and long texts are bounded (issue 54)."""

from __future__ import annotations

import json
import random

import polars as pl

import evalnb
from evalnb.evaluation.families.text.rouge import MAX_TOKENS
from evalnb.text.multilingual import rouge_words


def _score(expected: str, answers: list[str], language: str) -> pl.DataFrame:
    frame = pl.DataFrame(
        {
            "prompt": ["q"] * len(answers),
            "expected": [[expected]] * len(answers),
            "actual": answers,
            "model": [f"m{i}" for i in range(len(answers))],
            "language": [language] * len(answers),
        }
    )
    lab = evalnb.evaluate(evalnb.load(frame), ["rouge_multilingual"], progress=False)
    return lab.scores.filter(pl.col("metric") == "rouge_l_ml").sort("model")


def test_russian_word_forms_meet_and_a_paraphrase_beats_an_unrelated_sentence() -> None:
    scores = _score(
        "Год состоит из двенадцати месяцев.",
        ["В году двенадцать месяцев.", "Кошка спит на тёплом диване у окна."],
        "ru",
    )
    paraphrase, unrelated = scores["value"].to_list()
    assert paraphrase > unrelated
    assert json.loads(scores["detail"][0])["tokenizer"] == "words+snowball-russian"
    stems = rouge_words(pl.Series(["году", "год"]), "words+snowball-russian").to_list()
    assert stems[0] == stems[1]


def test_a_long_answer_is_scored_on_its_first_words_and_says_so() -> None:
    rng = random.Random(0)
    words = [f"w{rng.randrange(500)}" for _ in range(3 * MAX_TOKENS)]
    long_answer = " ".join(words)
    scores = _score(" ".join(words[:50]), [long_answer, "w1 w2"], "en")
    detail = [json.loads(d) if d else {} for d in scores["detail"]]
    assert detail[0]["truncated_to_tokens"] == MAX_TOKENS
    assert "truncated_to_tokens" not in detail[1]
    assert scores["value"].is_not_null().all()
