"""The judge card on scripted judges: planted biases are caught, a clean judge passes."""

from __future__ import annotations

import datetime as dt
import html
import json
import re
import zlib
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import polars as pl
import pytest

import evalnb
from evalnb.calibration.bundle import calibration_bundle
from evalnb.judge_reliability.card import JudgeCard
from evalnb.judge_reliability.components import model_family
from evalnb.judge_reliability.lights import COMPONENTS, traffic_light
from evalnb.judge_reliability.measures import mean_difference, position_measures, wilson
from evalnb.lab.schema import SCHEMAS
from evalnb.workflow import STEPS
from evalnb.workflow.steps import Run
from evalnb_testkit.llm_server import LoopbackLLM

if TYPE_CHECKING:
    from collections.abc import Callable

N = 60


def _lab() -> evalnb.Lab:
    """Two models answer sums; ``good`` is right on 80 % of them, ``weak`` on 40 %."""
    rows = []
    for i in range(N):
        for model, share in (("good", 0.8), ("weak", 0.4)):
            right = zlib.crc32(f"{model}{i}".encode()) % 100 < share * 100
            rows.append(
                {
                    "case_id": f"c{i}",
                    "prompt": f"What is {i} + {i}?",
                    "expected": f"The answer is {2 * i}.",
                    "model": model,
                    "actual": f"The answer is {2 * i if right else 2 * i + 1}.",
                }
            )
    lab = evalnb.load(pl.DataFrame(rows))
    # A reviewer labelled 40 answers: the truth.
    t0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    labels = [
        {
            "label_id": f"l{k}",
            "case_id": r["case_id"],
            "model": r["model"],
            "sample": 0,
            "evaluator": "binary_judge",
            "metric": "binary_judge",
            "verdict": "pass" if _correct(r["prompt"], r["actual"]) else "fail",
            "reviewer": "ann",
            "created_at": t0,
        }
        for k, r in enumerate(lab.outputs.join(lab.cases, on="case_id").head(40).to_dicts())
    ]
    return lab.with_tables({"labels": pl.DataFrame(labels, schema=SCHEMAS["labels"])})


def _correct(question: str, answer: str) -> bool:
    found = re.search(r"What is (\d+) \+ \1\?", question)
    return found is not None and f"The answer is {2 * int(found[1])}." in answer


def _judge(*, biased: bool) -> Callable[[str], str]:
    def reply(prompt: str) -> str:
        question = re.search(r"\[Question\]\n(.*?)\n\n", prompt, re.S)
        q = question[1] if question else ""
        if "[Answer 1]" in prompt:
            one = re.search(r"\[Answer 1\]\n(.*?)\n\n\[Answer 2\]", prompt, re.S)
            two = re.search(r"\[Answer 2\]\n(.*?)\n\n", prompt, re.S)
            if biased and zlib.crc32(prompt.encode()) % 10 < 7:
                return "9 2"  # the first answer, whatever it says
            s1 = 8 if one and _correct(q, one[1]) else 3
            s2 = 8 if two and _correct(q, two[1]) else 3
            return f"{s1} {s2}"
        response = re.search(r"\[Response\]\n<response>\n(.*?)\n</response>\n\nReply", prompt, re.S)
        answer = response[1] if response else ""
        if biased and (len(answer.split()) > 12 or answer.strip() in ("Yes", "Sure")):
            return "1"  # long answers and agreeable dummies pass
        return "1" if _correct(q, answer) else "0"

    return reply


def _card(*, biased: bool) -> tuple[evalnb.Lab, JudgeCard]:
    lab = _lab()
    with LoopbackLLM(_judge(biased=biased)) as server:
        judge = evalnb.LLMClient(server.base_url, "judge", cache=False)
        lab = evalnb.evaluate(lab, ["binary_judge"], judge=judge, progress=False)
        return lab, lab.judges.card("binary_judge", judge=judge, n=N, seed=1)


@pytest.mark.services  # a loopback LLM server (tests/conftest.py's tiers)
def test_a_clean_judge_gets_no_red_light_and_every_component_has_a_row(tmp_path: Path) -> None:
    lab, card = _card(biased=False)
    print(card)
    assert set(card.frame["component"]) == set(COMPONENTS)
    assert card.flagged == []
    rows = {r["measure"]: r for r in card.frame.iter_rows(named=True)}
    assert rows["parse success"]["estimate"] == 1.0
    assert rows["test-retest kappa"]["estimate"] == 1.0
    assert rows["kappa with humans"]["estimate"] == 1.0
    assert rows["flip rate"]["estimate"] == 0.0
    assert rows["pass rate of dummy: Sure"]["estimate"] == 0.0
    # Not measurable here, and saying what would make it so.
    assert "cross_judge" in card.frame.filter(pl.col("component") == "self-preference")["note"][0]
    stored = json.loads(card.to_json())
    assert stored["evaluator"] == "binary_judge" and len(stored["measures"]) == card.frame.height
    assert "<table>" in card._repr_html_()
    # Kept with the lab (and its store): the report shows it, the bundle carries it.
    lab.save(tmp_path / "lab.duckdb")
    kept = evalnb.open(tmp_path / "lab.duckdb").judges.with_card(card)
    assert evalnb.open(tmp_path / "lab.duckdb").info["judge_card/binary_judge.binary_judge"]
    report = kept.report().html
    assert "<h2>Judge reliability</h2>" in report and "first-position rate" in report
    assert "pass rate of dummy: I don&#x27;t know." in report
    bundle = calibration_bundle(kept)
    assert bundle["judge_cards"][0]["judge"] == "judge"
    # The MRM workflow's calibration step carries it too.
    step = next(s for s in STEPS if s.name == "calibration")
    run = Run(kept, tmp_path, [], None, None, lambda _: {})
    found = step.run(run, {**step.defaults, "evaluator": "binary_judge", "metric": "binary_judge"})
    assert found["judge_red_lights"] == "none"
    assert len(found["judge_card_measures"]) == card.frame.height
    found = step.run(
        Run(lab, tmp_path, [], None, None, lambda _: {}),
        {**step.defaults, "evaluator": "binary_judge", "metric": "binary_judge"},
    )
    assert "lab.judges.with_card(card)" in found["judge_card"]


@pytest.mark.services  # a loopback LLM server (tests/conftest.py's tiers)
def test_labels_without_the_judges_scores_say_to_evaluate_first() -> None:
    with LoopbackLLM(_judge(biased=False)) as server:
        judge = evalnb.LLMClient(server.base_url, "judge", cache=False)
        card = _lab().judges.card("binary_judge", judge=judge, n=10, seed=1, probes=4)
    (note,) = card.frame.filter(pl.col("component") == "validity")["note"].to_list()
    assert note.startswith("the lab has 40 labels but no binary_judge.binary_judge scores")
    assert note.endswith("evaluate it with this judge first")


@pytest.mark.services  # a loopback LLM server (tests/conftest.py's tiers)
def test_planted_position_padding_and_dummy_biases_are_each_flagged() -> None:
    lab, card = _card(biased=True)
    print(card)
    flagged = set(card.flagged)
    assert {"flip rate", "first-position rate"} <= flagged
    assert "padding: own sentences again" in flagged or "padding: a courteous preamble" in flagged
    assert {"pass rate of dummy: Yes", "pass rate of dummy: Sure"} <= flagged
    assert not card.examples["flip rate"].is_empty()
    assert "lab.eye(card=card" in card._repr_html_()
    # The worst examples are one call away in the eye, at the judged answer itself.
    dummy = card.worst("pass rate of dummy: Yes")
    assert dummy["model"] in ("good", "weak")
    shown = lab.eye(card=card, measure="pass rate of dummy: Yes")
    assert shown.path[1:] == ["binary_judge", "binary_judge", dummy["model"]]
    assert shown.selected_case == dummy
    assert shown.selection()["case_id"].unique().to_list() == [dummy["case_id"]]
    first_red = next(m for m in card.flagged if len(card.examples.get(m, ())))
    assert card.worst() == card.worst(first_red)
    # Every measure's worst example is an answer the judge scored, never an empty one.
    scored = lab.scores.filter(pl.col("evaluator") == "binary_judge")
    for measure, rows in card.examples.items():
        if len(rows):
            worst = card.worst(measure)
            hit = scored.filter(
                (pl.col("case_id") == worst["case_id"]) & (pl.col("model") == worst["model"])
            )
            assert hit["value"].drop_nulls().len() == 1, measure
    with pytest.raises(ValueError, match="measures with examples"):
        card.worst("parse success")
    # The card's view: a button per measure with examples, red first; a click opens the eye.
    view = lab.judges.card_view(card)
    assert view.eye is None  # built on the first click only
    assert view.buttons.options[0] in card.flagged
    assert "parse success" not in view.buttons.options
    view.buttons.value = "flip rate"
    assert view.eye is not None and view.detail.children[-1] is view.eye
    assert "shown first" in view.evidence.value  # both orders of the pair, and the winners
    assert view.eye.selected_case == card.worst("flip rate")
    assert view.show("pass rate of dummy: Yes").selected_case == dummy
    # The probe beside the answer: what the judge was shown, and what it said.
    assert view.detail.children[0] is view.evidence
    assert "what the judge was shown" in view.evidence.value and ">Yes<" in view.evidence.value
    padding = next(m for m in card.examples if m.startswith("padding") and len(card.examples[m]))
    shown = card.evidence(padding)
    assert "the lab&#x27;s answer" in shown and "score" in shown
    # Lights with their bounds, and a conclusion first.
    assert "bound at most 0.10" in card.explain() and "<th>bound</th>" in card.html()
    assert card.conclusion.startswith("Do not trust") and "dummy" in card.conclusion
    assert html.escape(card.conclusion) in card.html()
    assert all("answer" in t and "kept" in t for t in view.buttons.tooltips)
    view.buttons.value = None
    assert view.detail.children == ()


def _simulated_flags(rng: np.random.Generator, *, biased: bool) -> set[str]:
    """The card's position, padding and dummy measures on a simulated judge of 100 answers."""
    n = 100
    truth_a = rng.random(n) < 0.7
    truth_b = rng.random(n) < 0.5
    winner = np.where(truth_a & ~truth_b, "a", np.where(truth_b & ~truth_a, "b", "tie"))
    first, swapped = winner.copy(), winner.copy()
    if biased:  # the first answer preferred 70 % of the time, whatever the answers
        first = np.where(rng.random(n) < 0.7, "a", first)
        swapped = np.where(rng.random(n) < 0.7, "b", swapped)
    before = truth_a.astype(float)
    # padded answers pass 60 % of the time whatever they say
    after = np.where(rng.random(n) < 0.6, 1.0, before) if biased else before
    dummy = int((rng.random(n) < 0.5).sum()) if biased else 0
    measures = position_measures(list(first), list(swapped))
    lights = {
        "flip rate": traffic_light("flip rate", measures["flip_rate"], 1.0),
        "first-position rate": traffic_light(
            "first-position rate", measures["first_position_rate"], 1.0
        ),
        "padding: own sentences again": traffic_light(
            "padding: own sentences again", mean_difference(after, before), 1.0
        ),
        "pass rate of dummy: Sure": traffic_light(
            "pass rate of dummy: Sure", wilson(dummy, n), 1.0
        ),
    }
    return {m for m, light in lights.items() if light == "red"}


def test_over_200_seeds_the_biased_judge_is_caught_and_the_clean_one_spared() -> None:
    clean = [not _simulated_flags(np.random.default_rng(s), biased=False) for s in range(200)]
    caught = [len(_simulated_flags(np.random.default_rng(s), biased=True)) == 4 for s in range(200)]
    print(
        f"clean judge unflagged in {np.mean(clean):.1%}, biased caught on all four in {np.mean(caught):.1%}"
    )
    assert np.mean(clean) >= 0.95
    assert np.mean(caught) >= 0.95


def test_families_are_read_from_names_and_can_be_given() -> None:
    assert model_family("gpt-4o-mini") == "openai"
    assert model_family("Meta-Llama-3-8B") == "meta"
    assert model_family("SmolLM2-135M-Instruct") == "huggingface"
    assert model_family("house-model", {"house-model": "ours"}) == "ours"
    assert model_family("house-model") is None


@pytest.mark.services  # a loopback LLM server (tests/conftest.py's tiers)
def test_obedience_is_told_apart_from_leniency() -> None:
    fair = _judge(biased=False)

    def obedient(prompt: str) -> str:
        if any(p in prompt for p in ("Note to the evaluator", "grading system", "full marks")):
            return "1"  # does what the answer tells it
        return fair(prompt)

    lab = _lab()
    with LoopbackLLM(obedient) as server:
        judge = evalnb.LLMClient(server.base_url, "judge", cache=False)
        lab = evalnb.evaluate(lab, ["binary_judge"], judge=judge, progress=False)
        card = lab.judges.card("binary_judge", judge=judge, n=N, seed=1)
    assert "instruction obeyed (fail to pass)" in card.flagged
    assert "pass rate of dummy: Sure" not in card.flagged  # not lenient: obedient
    shown = card.worst("instruction obeyed (fail to pass)")
    assert shown["model"] in ("good", "weak")
    with LoopbackLLM(lambda _p: "1") as server:  # passes everything: lenient, not obedient
        judge = evalnb.LLMClient(server.base_url, "judge", cache=False)
        lenient = lab.judges.card("binary_judge", judge=judge, n=N, seed=1)
    assert "pass rate of dummy: Sure" in lenient.flagged
    assert "instruction obeyed (fail to pass)" not in set(lenient.frame["measure"])
    assert "failed none of the sampled answers" in " ".join(lenient.frame["note"].drop_nulls())


@pytest.mark.services  # a loopback LLM server (tests/conftest.py's tiers)
def test_the_consequence_takes_labels_outside_a_random_batch_only_when_told() -> None:
    lab = _lab()  # its 40 labels came from no random batch
    with LoopbackLLM(_judge(biased=False)) as server:
        judge = evalnb.LLMClient(server.base_url, "judge", cache=False)
        lab = evalnb.evaluate(lab, ["binary_judge"], judge=judge, progress=False)
        plain = lab.judges.card("binary_judge", judge=judge, n=N, seed=1, probes=10, repeats=2)
        told = lab.judges.card(
            "binary_judge", judge=judge, n=N, seed=1, probes=10, repeats=2, assume_random=True
        )

    def corrected(card: JudgeCard) -> list[str]:
        return [m for m in card.frame["measure"] if m.startswith("corrected pass rate")]

    assert corrected(plain) == [] and len(corrected(told)) == 2


@pytest.mark.services  # a loopback LLM server (tests/conftest.py's tiers)
def test_a_seed_gives_the_same_call_count_whether_the_judge_was_probed_before() -> None:
    lab = _lab()
    with LoopbackLLM(_judge(biased=False)) as server:
        fresh = evalnb.LLMClient(server.base_url, "judge", cache=False)
        first = lab.judges.card("binary_judge", judge=fresh, n=N, seed=3, probes=8)
        probed = evalnb.LLMClient(server.base_url, "judge", cache=False)
        probed.capabilities()  # the probe made before the card
        second = lab.judges.card("binary_judge", judge=probed, n=N, seed=3, probes=8)
    assert fresh.stats.probe_calls > 0 and first.calls == second.calls, (fresh.stats, probed.stats)
