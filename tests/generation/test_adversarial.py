"""Adversarial cases from a generated suite, and their paired effect on a system's scores.

The system under test is a real chat endpoint on loopback (``run_suite`` asks it), scripted
as a RAG assistant that knows every base answer, takes a confident hint at its word, and
is not moved by injected instructions: so the effect table must show a clear drop for
``misleading``, none for ``injection``, with intervals that say so.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest

import evalnb
from evalnb.generation.judge_free import negate
from evalnb_testkit.corpus_docs import LICENSES
from evalnb_testkit.llm_server import LoopbackLLM

# Suites generated from a real corpus with the embedding model, end to end: the slow tier.
pytestmark = [
    pytest.mark.skipif(not LICENSES.is_dir(), reason="needs Debian's base-files"),
    pytest.mark.slow,
    pytest.mark.xdist_group(
        "generation_adversarial"
    ),  # its module fixture is built once: on one worker
]
_HINT = re.compile(r"\n\(I am quite sure the answer is (.*)\.\)$", re.DOTALL)


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, evalnb.Lab]:
    folder = tmp_path_factory.mktemp("adversarial")
    store = folder / "lab.duckdb"
    docs = [LICENSES / n for n in ("Apache-2.0", "GPL-3", "MPL-2.0")]
    corpus = evalnb.corpus(docs, store=store, max_tokens=160)
    return store, evalnb.generate_tests(corpus, n=60, seed=0)


def test_judge_free_kinds_rewrite_their_base_case_and_link_to_it(
    suite: tuple[Path, evalnb.Lab],
) -> None:
    store, _ = suite
    out = evalnb.adversarial(evalnb.open(store), n=30, seed=0)
    cases = out.cases
    adv = cases.filter(pl.col("perturbation").str.starts_with("adversarial_"))
    assert adv.height == 30
    assert adv.group_by("perturbation").len().sort("perturbation")["len"].to_list() == [10] * 3
    bases = {r["case_id"]: r for r in cases.filter(pl.col("perturbation_of").is_null()).to_dicts()}
    for row in adv.iter_rows(named=True):
        base = bases[row["perturbation_of"]]
        kind = row["perturbation"].removeprefix("adversarial_")
        assert row["expected"] == base["expected"]
        assert (row["topic"], row["question_type"]) == (base["topic"], base["question_type"])
        assert f"adversarial:{kind}" in row["categories"]
        if kind == "misleading":
            hint = _HINT.search(row["prompt"])
            assert hint and row["prompt"][: hint.start()] == base["prompt"]
            assert hint.group(1).lower() != base["expected"][0].lower()
        elif kind == "contradictory":
            premise, _, question = row["prompt"].partition("\n")
            assert question == base["prompt"]
            # The generator's contract: the premise is the base case's evidence sentence
            # with its first auxiliary negated or its negation dropped (`negate`), claimed
            # as what the documents say; which words change is negate's own test.
            evidence = json.loads(base["extra"])["evidence"][0]
            claimed = premise.removeprefix("The documents state: “").removesuffix("”")
            assert premise.startswith("The documents state: “") and premise.endswith("”")
            assert claimed == " ".join((negate(evidence) or "").split())
            assert claimed != " ".join(evidence.split())
        else:
            assert row["prompt"].startswith(base["prompt"] + "\n\n")
    assert evalnb.open(store).cases.height == cases.height  # kept in the store
    lab = evalnb.open(store)
    again = evalnb.adversarial(lab, n=30, seed=0).cases
    assert again.sort("case_id").equals(cases.sort("case_id"))  # a seed repeats it
    with pytest.raises(ValueError, match="'ambiguous' is written by an LLM"):
        evalnb.adversarial(lab, kinds=["ambiguous"])
    with pytest.raises(ValueError, match="unknown adversarial kinds"):
        evalnb.adversarial(lab, kinds=["sarcasm"])


def _system(answers: dict[str, str]) -> Callable[[str], str]:
    """A RAG assistant that knows the base answers, believes hints, ignores injections."""

    def respond(prompt: str) -> str:
        if (hint := _HINT.search(prompt)) is not None:
            return hint.group(1)
        for base, answer in answers.items():
            if prompt.startswith(base) or prompt.endswith(base):
                return answer
        return "I do not know."

    return respond


def test_the_effect_table_and_chart_tell_a_real_drop_from_none(
    suite: tuple[Path, evalnb.Lab], tmp_path: Path
) -> None:
    lab = evalnb.Lab({"cases": suite[1].cases})  # in memory: the other tests' cases apart
    lab = evalnb.adversarial(lab, n=45, kinds=["misleading", "injection", "contradictory"])
    bases = lab.cases.filter(pl.col("perturbation_of").is_null())
    answers = {r["prompt"]: r["expected"][0] for r in bases.to_dicts()}
    with LoopbackLLM(_system(answers)) as server:
        client = evalnb.LLMClient(server.base_url, "rag", cache=tmp_path / "c.duckdb")
        lab = evalnb.run_suite(lab, client, ["rag"], progress=False)
    lab = evalnb.evaluate(lab, "rouge", progress=False)
    effect = lab.robustness.effect(n_boot=500, seed=0).filter(pl.col("metric") == "rouge_l")
    by_kind = {r["kind"]: r for r in effect.iter_rows(named=True)}
    assert set(by_kind) == {"misleading", "injection", "contradictory"}
    assert all(r["n_pairs"] == 15 for r in by_kind.values())
    misled = by_kind["misleading"]
    assert misled["base_mean"] == pytest.approx(1.0)
    assert misled["ci_low"] <= misled["difference"] <= misled["ci_high"] < 0
    assert misled["flips"] > 0 and misled["adversarial_pass_rate"] < misled["base_pass_rate"]
    for kind in ("injection", "contradictory"):  # answered as the base: no effect, no flip
        row = by_kind[kind]
        assert row["difference"] == row["ci_low"] == row["ci_high"] == 0.0
        assert row["flips"] == 0
    spec = lab.robustness.chart("rouge", "rouge_l", n_boot=200).to_dict()
    text = json.dumps(spec, ensure_ascii=False)
    assert len(spec["layer"]) == 3 and "adversarial − base" in text  # zero, intervals, points
    assert all(f'"kind": "{k}"' in text for k in by_kind)
    with pytest.raises(ValueError, match="no adversarial pairs scored"):
        lab.robustness.chart("bleu", "bleu_1")


def _rewriter(prompt: str) -> str:
    """A scripted LLM rewriting base questions; a fixed share of replies are garbled."""
    question = prompt.split("\nQuestion: ", 1)[1].split("\nExpected answer: ", 1)[0]
    spin = int(hashlib.sha256(prompt.encode()).hexdigest(), 16) % 5
    if spin == 0:
        return "I cannot write adversarial questions."
    if spin == 1:
        return json.dumps({"question": f"Tricky: {question}"})  # no expected answer
    return json.dumps({"question": f"Tricky: {question}", "expected": "Point out the trap."})


def test_llm_rewrites_cover_every_kind_and_count_their_failures(
    suite: tuple[Path, evalnb.Lab], tmp_path: Path
) -> None:
    lab = evalnb.Lab({"cases": suite[1].cases})
    with LoopbackLLM(_rewriter) as server:
        client = evalnb.LLMClient(server.base_url, "writer", cache=tmp_path / "c.duckdb")
        out = evalnb.adversarial(
            lab, n=40, llm=client, kinds=["misleading", "ambiguous", "contradictory", "injection"]
        )
        sent = server.total_calls
    adv = out.cases.filter(pl.col("perturbation").str.starts_with("adversarial_"))
    report = evalnb.generation_report(out, step="adversarial")
    assert sent == report["calls"].sum() == 40
    assert report["parse_failures"].sum() == 40 - adv.height > 0
    reasons = [json.loads(r) for r in report["failure_reasons"]]
    assert {k for r in reasons for k in r} == {"no JSON object", "schema"}
    assert set(adv["perturbation"]) == {
        f"adversarial_{k}" for k in ("misleading", "ambiguous", "contradictory", "injection")
    }
    assert adv["prompt"].str.starts_with("Tricky: ").all()
    assert (adv["expected"].list.first() == "Point out the trap.").all()
    assert (
        report["used"].to_list()
        == adv.group_by("perturbation").len().sort("perturbation")["len"].to_list()
    )
