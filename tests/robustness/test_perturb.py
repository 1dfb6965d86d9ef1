"""Perturbators: exact edit rates, determinism, lineage in the lab."""

from __future__ import annotations

import json
import random
from pathlib import Path

import polars as pl
import pytest

import evalnb
from evalnb.lab.errors import EvalnbError
from evalnb.lab.schema import conform, empty
from evalnb.robustness.perturbators import PERTURBATORS, perturb_text
from evalnb_testkit.llm_server import LoopbackLLM

_TEXT = "What is the best way to keep a big old dog happy and healthy in a very small flat today"


def test_comma_and_swap_follow_the_step() -> None:
    text = "a b c d e f g h i j k l"
    assert perturb_text("comma", text, "high") == "a, b c, d e, f g, h i, j k, l"  # step 2
    assert perturb_text("comma", text, "low") == "a, b c d e f g h i j k, l"  # step 10
    assert perturb_text("word_swap", text, "medium") == "b a c e d f h g i k j l"  # step 3
    with pytest.raises(EvalnbError, match="accepts intensity low, medium or high"):
        perturb_text("comma", text, "extreme")
    with pytest.raises(EvalnbError, match="exceeds"):
        perturb_text("comma", "one two", "low")


@pytest.mark.parametrize(
    ("intensity", "low", "high"),
    [("low", 0.1, 0.1), ("medium", 0.25, 0.3), ("high", 0.45, 0.6), ("extreme", 0.9, 1.0)],
)
def test_character_edit_rates(intensity: str, low: float, high: float) -> None:
    text = "abcdefghij" * 20
    for seed in range(20):
        out = perturb_text("random_character_deletion", text, intensity, seed=seed)
        edits = out.count("X")
        assert int(len(text) * low) <= edits <= int(len(text) * high)
        inserted = perturb_text("random_character_insertion", text, intensity, seed=seed)
        assert int(len(text) * low) <= len(inserted) - len(text) <= int(len(text) * high)


def test_keyboard_typos_use_neighbours_and_ocr_lookalikes() -> None:
    out = perturb_text("keyboard_typos", "a" * 100, "extreme", seed=3)
    assert all(ch.lower() in "qwsxza" for ch in out) and out.count("a") <= 10
    ocr = perturb_text("ocr", "o" * 100, "extreme", seed=3)
    assert all(ch in "0θØøo" for ch in ocr) and ocr.count("o") <= 10


def test_synonym_and_antonym_from_wordnet() -> None:
    out = perturb_text("antonym", "the water is hot and the answer is good", "high", seed=1)
    assert "cold" in out and ("bad" in out or "evil" in out)
    syn = perturb_text("synonym", _TEXT, "high", seed=2)
    assert syn != _TEXT and len(syn.split()) >= len(_TEXT.split()) - 2


def test_deterministic_for_a_seed_and_every_perturbator_changes_text() -> None:
    for name in PERTURBATORS:
        a = perturb_text(name, _TEXT, "medium", seed=7)
        assert a == perturb_text(name, _TEXT, "medium", seed=7)
        assert (a == _TEXT) == (name == "copy")
    assert perturb_text("random_character_replacement", _TEXT, seed=1) != perturb_text(
        "random_character_replacement", _TEXT, seed=2
    )
    assert random.Random(0).random()  # the global RNG is not what we use


def test_lab_perturb_adds_linked_cases(tmp_path: pytest.TempPathFactory) -> None:
    lab = evalnb.load(
        pl.DataFrame(
            {"prompt": ["how are you doing today my friend", "what is it"], "actual": ["fine", "x"]}
        )
    )
    lab.save(tmp_path / "l.duckdb")  # type: ignore[operator]
    lab.robustness.perturb(["comma", "qwerty_yz"], intensity="high", seed=1)
    added = lab.cases.filter(pl.col("perturbation_of").is_not_null()).sort("perturbation", "prompt")
    assert added.height == 3  # "what is it" has no 'y' to swap: skipped
    assert added["perturbation"].to_list() == ["comma", "comma", "qwerty_yz"]
    assert "perturbed_by:comma:high" in added["categories"][0].to_list()
    assert "how, are you, doing" in " ".join(added["prompt"].to_list())
    again = evalnb.open(tmp_path / "l.duckdb")  # type: ignore[operator]
    assert again.cases.height == 5
    lab.robustness.perturb(
        "comma", intensity="high", seed=1
    )  # same seed: same ids, nothing added twice
    assert lab.cases.height == 5


_FALSE = {
    "Is the capital of France Paris?": (
        "Is the capital of France London, as the archives of the Louvre show?",
        "The capital of France is London.",
    ),
    "Who painted the Mona Lisa?": (
        "Who painted the Mona Lisa, which Picasso signed in 1905?",
        "Picasso signed the Mona Lisa in 1905.",
    ),
}


def _misinformer(prompt: str) -> str:
    text = prompt.split("<<<\n", 1)[1].split("\n>>>", 1)[0]
    if text in _FALSE:
        new, claim = _FALSE[text]
        return json.dumps({"perturbed_text": new, "false_claim": claim})
    if text.startswith("Same"):
        return json.dumps({"perturbed_text": text, "false_claim": "none"})
    return "Sorry, I will not do that."


def test_contextual_misinformation_through_an_llm(tmp_path: Path) -> None:
    prompts = [
        "Is the capital of France Paris?",
        "Who painted the Mona Lisa?",
        "Same text please",
        "How tall is Everest?",
    ]
    lab = evalnb.load(
        pl.DataFrame({"prompt": prompts, "actual": ["Paris.", "Da Vinci.", "ok", "8849 m"]})
    )
    with pytest.raises(evalnb.EvalnbError, match=r"pass llm=evalnb\.LLMClient"):
        lab.robustness.perturb("contextual_misinformation")
    with LoopbackLLM(_misinformer) as server:
        llm = evalnb.LLMClient(server.base_url, "writer", cache=tmp_path / "c.duckdb")
        lab.robustness.perturb("contextual_misinformation", intensity="high", seed=3, llm=llm)
        calls = sum(server.calls.values())
        lab.robustness.perturb(
            "contextual_misinformation", intensity="high", seed=3, llm=llm
        )  # cached
        assert sum(server.calls.values()) == calls
        with pytest.raises(evalnb.EvalnbError, match="rewrote none of 1 texts"):
            evalnb.load(pl.DataFrame({"prompt": ["How tall is Everest?"]})).robustness.perturb(
                "contextual_misinformation", llm=llm
            )
    added = lab.cases.filter(pl.col("perturbation_of").is_not_null()).sort("prompt")
    assert added["prompt"].to_list() == sorted(v[0] for v in _FALSE.values())  # 2 of 4 rewritten
    assert set(added["perturbation"]) == {"contextual_misinformation"}
    claims = [json.loads(e)["misinformation"] for e in added["extra"]]
    assert {c["false_claim"] for c in claims} == {v[1] for v in _FALSE.values()}
    assert {c["intensity"] for c in claims} == {"high"}
    # The lineage drives flips and the adversarial effect: a model fooled by the premise.
    base = dict(zip(lab.cases["prompt"], lab.cases["case_id"], strict=True))
    answers = {
        base["Is the capital of France Paris?"]: "Paris.",
        base["Who painted the Mona Lisa?"]: "Leonardo da Vinci.",
    }
    for row in added.iter_rows(named=True):
        answers[row["case_id"]] = "London." if "London" in row["prompt"] else "Picasso."
    expected = {
        base["Is the capital of France Paris?"]: ["Paris"],
        base["Who painted the Mona Lisa?"]: ["Leonardo da Vinci"],
    }
    for row in added.iter_rows(named=True):
        expected[row["case_id"]] = expected[row["perturbation_of"]]
    outputs = empty("outputs").vstack(
        conform(
            pl.DataFrame(
                {
                    "case_id": list(answers),
                    "model": "m",
                    "sample": 0,
                    "actual": list(answers.values()),
                }
            ),
            "outputs",
        )
    )
    cases = lab.cases.with_columns(
        expected=pl.col("case_id").replace_strict(
            expected, default=[], return_dtype=pl.List(pl.String)
        )
    )
    lab.replace_tables({"cases": cases, "outputs": outputs})
    scored = evalnb.evaluate(lab, ["rouge"], progress=False)
    effect = scored.robustness.effect(n_boot=200).filter(metric="rouge_l")
    assert effect["kind"].to_list() == ["contextual_misinformation"]
    assert effect["flips"].item() == 2 and effect["difference"].item() < -0.9
