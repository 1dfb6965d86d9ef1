"""Perturbators: exact edit rates, determinism, lineage in the lab."""

from __future__ import annotations

import random

import polars as pl
import pytest

import evalnb
from evalnb.lab.errors import EvalnbError
from evalnb.robustness.perturbators import PERTURBATORS, perturb_text

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


@pytest.mark.parametrize(("intensity", "low", "high"),
                         [("low", 0.1, 0.1), ("medium", 0.25, 0.3), ("high", 0.45, 0.6),
                          ("extreme", 0.9, 1.0)])  # fmt: skip
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
    lab = evalnb.load(pl.DataFrame({"prompt": ["how are you doing today my friend", "what is it"],
                                    "actual": ["fine", "x"]}))  # fmt: skip
    lab.save(tmp_path / "l.duckdb")  # type: ignore[operator]
    lab.perturb(["comma", "qwerty_yz"], intensity="high", seed=1)
    added = lab.cases.filter(pl.col("perturbation_of").is_not_null()).sort("perturbation", "prompt")
    assert added.height == 3  # "what is it" has no 'y' to swap: skipped
    assert added["perturbation"].to_list() == ["comma", "comma", "qwerty_yz"]
    assert "perturbed_by:comma:high" in added["categories"][0].to_list()
    assert "how, are you, doing" in " ".join(added["prompt"].to_list())
    again = evalnb.open(tmp_path / "l.duckdb")  # type: ignore[operator]
    assert again.cases.height == 5
    lab.perturb("comma", intensity="high", seed=1)  # same seed: same ids, nothing added twice
    assert lab.cases.height == 5
