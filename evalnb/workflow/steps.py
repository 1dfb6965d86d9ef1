"""The nine steps of H2O's MRM workflow: what each depends on, its parameters, what it does.

Each step function reads and writes the workflow's lab through a :class:`Run` and returns
its findings as a JSON-able summary (kept in the audit trail, shown in the report). Steps
are idempotent on the store: run again with the same inputs they come to the same tables,
so a step killed half-way is simply run again.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import polars as pl

from evalnb.analysis.flips import flip_table
from evalnb.api.adversarial import adversarial
from evalnb.api.corpus import Corpus, generate_tests, generation_report
from evalnb.api.corpus import corpus as read_corpus
from evalnb.api.validation import validate_tests
from evalnb.calibration.labels import current_labels
from evalnb.evaluation.catalog import get_evaluator
from evalnb.evaluation.engine import evaluate
from evalnb.judge_reliability.card import kept_card
from evalnb.transforms.weakness import univariate, weakness_index, weaknesses

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from evalnb.api.lab import Lab
    from evalnb.llm.client import LLMClient
    from evalnb.workflow.system import System

__all__ = ["STEPS", "Run", "Step", "StepWaiting"]

Summary = dict[str, Any]


class StepWaiting(Exception):
    """A step cannot finish yet: it waits for people (labels to calibrate on)."""


@dataclass
class Run:
    """What a step works with: the lab (replaced as it changes), corpus, system, LLM, store."""

    lab: Lab
    store: Path
    documents: list[str]
    system: System | None
    llm: LLMClient | None
    params_of: Callable[[str], dict[str, Any]]

    @property
    def corpus(self) -> Corpus:
        """The corpus of the lab as it is now."""
        return Corpus(self.lab)

    def need_system(self) -> System:
        """Return the system under test, or say how to give one."""
        if self.system is None:
            msg = (
                "this step asks the system under test, and the workflow has none: open it with "
                "evalnb.workflow(path, system=<function, LLMClient or 'retrieval-baseline'>)"
            )
            raise ValueError(msg)
        return self.system

    def answer_and_score(self, case_ids: list[str]) -> None:
        """Ask the system the cases it has not answered, then score every new answer."""
        system = self.need_system()
        self.lab = system.answer(self.lab, self.corpus, case_ids, self.store)
        ev = self.params_of("evaluation")
        judge = self.llm if ev.get("judge") else None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # fallbacks are recorded in each score's detail
            self.lab = evaluate(
                self.lab,
                ev["evaluators"],
                progress=False,
                judge=judge,
                **ev.get("evaluator_params", {}),
            )

    def system_rows(self, frame: pl.DataFrame) -> pl.DataFrame:
        """Keep the rows of the system under test."""
        return frame.filter(pl.col("model") == self.need_system().name)


@dataclass(frozen=True)
class Step:
    """One workflow step."""

    name: str
    title: str
    purpose: str
    depends: tuple[str, ...]
    defaults: dict[str, Any]
    run: Callable[[Run, dict[str, Any]], Summary]


def _topics(run: Run, p: dict[str, Any]) -> Summary:
    if run.documents:  # read (again): a document's chunks are replaced, the rest kept
        run.lab = read_corpus(run.documents, store=run.store, max_tokens=p["max_tokens"]).lab
    corpus = run.corpus
    if corpus.chunks.is_empty():
        msg = "no corpus: open the workflow with documents=<folder or files> to read them"
        raise ValueError(msg)
    model = corpus.topics(min_topic_size=p["min_topic_size"], seed=p["seed"])
    corpus.set_topics(model)
    run.lab = corpus.lab
    topics = model.topics.select("topic", "size", pl.col("keywords").list.head(6))
    return {
        "documents": corpus.chunks["doc"].n_unique(),
        "chunks": corpus.chunks.height,
        "topics": topics.to_dicts(),
    }


def _generation(run: Run, p: dict[str, Any]) -> Summary:
    # The suite is replaced whole: cases of an earlier generation (and their answers) go.
    empty = {t: run.lab.table(t).clear() for t in ("cases", "outputs", "scores")}
    run.lab = run.lab.with_tables(empty)
    llm = run.llm if p["use_llm"] else None
    run.lab = generate_tests(
        run.corpus, p["n"], generators=p["generators"], llm=llm, seed=p["seed"], dedupe=p["dedupe"]
    )
    cases = run.lab.cases
    counts = cases.group_by("question_type").len().sort("question_type")
    out: Summary = {
        "cases": cases.height,
        "topics": cases["topic"].n_unique(),
        "by_generator": dict(counts.iter_rows()),
    }
    if llm is not None:
        out["llm_report"] = generation_report(run.lab).to_dicts()
    return out


def _validation(run: Run, p: dict[str, Any]) -> Summary:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        v = validate_tests(run.lab, nli_model=p["nli_model"], outlier_z=p["outlier_z"])
    run.lab = v.lab
    found = v.outliers()
    ids = found["case_id"].unique().to_list()
    if p["exclude_outliers"]:
        for case_id in ids:
            run.lab.curation.curate(
                case_id, "exclude", reviewer="workflow", note="validation outlier"
            )
    means = v.scores().drop("case_id", "prompt", "question_type", "topic").mean()
    return {
        "validated": v.scores().height,
        "means": means.to_dicts()[0] if means.height else {},
        "outliers": ids[:50],
        "n_outliers": len(ids),
        "excluded": len(ids) if p["exclude_outliers"] else 0,
        "notes": sorted({str(w.message) for w in caught}),
    }


def _evaluation(run: Run, p: dict[str, Any]) -> Summary:  # noqa: ARG001 - read via params_of
    system = run.need_system()
    lab = run.lab.curation.apply()
    # Answers are asked again through the cache: an edited prompt gets a fresh answer.
    mine = pl.col("model") == system.name
    run.lab = lab.with_tables(
        {"outputs": lab.outputs.filter(~mine), "scores": lab.scores.filter(~mine)}
    )
    base = run.lab.cases.filter(pl.col("perturbation_of").is_null())["case_id"].to_list()
    run.answer_and_score(base)
    board = run.system_rows(run.lab.leaderboard())
    errors = run.system_rows(run.lab.outputs)["error"].is_not_null().sum()
    return {
        "cases": len(base),
        "errors": int(errors),
        "leaderboard": board.select(
            "evaluator", "metric", "mean", "ci_low", "ci_high", "pass_rate", "threshold"
        ).to_dicts(),
    }


def _calibration(run: Run, p: dict[str, Any]) -> Summary:
    labels = current_labels(run.lab.labels, p["evaluator"], p["metric"])
    n = labels.select("case_id", "model", "sample").unique().height
    if n < p["min_labels"]:
        msg = (
            f"{n} of {p['min_labels']} labelled answers for {p['evaluator']}/{p['metric']}: "
            "label them in wf.review('calibration', reviewer='<name>'), then run the step again"
        )
        raise StepWaiting(msg)
    cal = run.lab.calibration.recalibrate(p["evaluator"], p["metric"], criterion=p["criterion"])
    return {
        "evaluator": cal.evaluator,
        "metric": cal.metric,
        "n_labels": cal.n_labels,
        "old_threshold": cal.old_threshold,
        "threshold": cal.threshold,
        "ci": list(cal.ci),
        "agreement": cal.agreement,
        "kappa_before": cal.kappa_before,
        "kappa_after": cal.kappa_after,
        "text": cal.summary(),
        **_judge_card(run, p["evaluator"], p["metric"]),
    }


def _judge_card(run: Run, evaluator: str, metric: str) -> Summary:
    """Summarise the judge reliability card kept for this metric, or say how to keep one."""
    card = kept_card(run.lab, evaluator, metric)
    if card is None:
        if not get_evaluator(evaluator).judge:
            return {}  # no judge to vouch for: the metric is computed, not asked
        return {
            "judge_card": (
                "none kept for this metric: card = lab.judges.card(evaluator, metric, "
                "judge=...); lab = lab.judges.with_card(card); then run this step again"
            )
        }
    shown = ("component", "measure", "estimate", "ci_low", "ci_high", "n", "flag")
    measures = [{k: m.get(k) for k in shown} for m in card.get("measures", [])]
    return {
        "judge_card": f"{card.get('judge')}: {card.get('calls')} calls",
        "judge_red_lights": ", ".join(m["measure"] for m in measures if m["flag"] == "red")
        or "none",
        "judge_card_measures": measures,
    }


def _failures(run: Run, p: dict[str, Any]) -> Summary:
    found = run.lab.failure_clusters(
        p["evaluator"], p["metric"], min_failures=p["min_failures"], seed=p["seed"]
    )
    if found.message:
        return {"clusters": [], "message": found.message}
    keep = [
        c
        for c in (
            "cluster",
            "size",
            "keywords",
            "topics",
            "question_types",
            "representative_prompts",
        )
        if c in found.clusters.columns
    ]
    return {
        "clusters": found.clusters.select(keep).to_dicts(),
        "failed": found.rows.height,
        "silhouette": found.silhouette,
    }


def _weakness(run: Run, p: dict[str, Any]) -> Summary:
    idx = weakness_index(
        run.lab, p["evaluator"], p["metric"], models=[run.need_system().name], min_n=p["min_n"]
    )
    cols = ["n", "mean", "pass_rate"]
    by_topic = univariate(idx, "topic").head(5)  # worst first
    by_type = univariate(idx, "question_type").head(5)
    return {
        "weak_cells": weaknesses(idx, top=p["top"])
        .select("topic", "question_type", *cols)
        .to_dicts(),
        "worst_topics": by_topic.select(pl.col("group").alias("topic"), *cols).to_dicts(),
        "worst_question_types": by_type.select(
            pl.col("group").alias("question_type"), *cols
        ).to_dicts(),
        "threshold": idx.threshold,
    }


def _variations(run: Run, p: dict[str, Any]) -> Summary:
    run.lab = run.lab.robustness.perturb(
        p["perturbators"], intensity=p["intensity"], seed=p["seed"]
    )
    perturbed = run.lab.cases.filter(
        pl.col("perturbation_of").is_not_null()
        & ~pl.col("perturbation").str.starts_with("adversarial_")
    )["case_id"].to_list()
    run.answer_and_score(perturbed)
    flips = flip_table(
        run.system_rows(run.lab.verdicts()), run.lab.cases, p["evaluator"], p["metric"]
    )
    per_kind = flips.group_by("perturbation").agg(pl.col("n_pairs", "to_fail", "to_pass").sum())
    return {
        "perturbed": len(perturbed),
        "per_kind": per_kind.sort("perturbation").to_dicts(),
        "flips": flips.filter((pl.col("to_fail") + pl.col("to_pass")) > 0).head(30).to_dicts(),
    }


def _adversarial(run: Run, p: dict[str, Any]) -> Summary:
    llm = run.llm if p["use_llm"] else None
    run.lab = adversarial(run.lab, kinds=p["kinds"], n=p["n"], llm=llm, seed=p["seed"])
    ids = run.lab.cases.filter(pl.col("perturbation").str.starts_with("adversarial_"))[
        "case_id"
    ].to_list()
    run.answer_and_score(ids)
    effect = run.system_rows(run.lab.robustness.effect(seed=p["seed"])).filter(
        (pl.col("evaluator") == p["evaluator"]) & (pl.col("metric") == p["metric"])
    )
    return {"adversarial": len(ids), "effect": effect.drop("evaluator", "metric").to_dicts()}


_METRIC = {"evaluator": "answer_similarity", "metric": "answer_similarity"}

STEPS: tuple[Step, ...] = (
    Step(
        "topic_modeling",
        "Topic modeling",
        "Read the documents, chunk them and find their topics.",
        (),
        {"max_tokens": 256, "min_topic_size": 5, "seed": 0},
        _topics,
    ),
    Step(
        "test_generation",
        "Test generation",
        "Generate question / expected-answer pairs from the chunks, balanced over topics.",
        ("topic_modeling",),
        {"n": 50, "generators": None, "use_llm": False, "seed": 0, "dedupe": 0.92},
        _generation,
    ),
    Step(
        "test_validation",
        "Test validation",
        "Score each expected answer against its source; list outliers for curation.",
        ("test_generation",),
        {"outlier_z": 3.0, "nli_model": None, "exclude_outliers": False},
        _validation,
    ),
    Step(
        "evaluation",
        "Automated evaluation",
        "Ask the system every curated case and score its answers.",
        ("test_validation",),
        {
            "evaluators": ["answer_similarity", "answer_relevancy_similarity", "pii_leakage"],
            "evaluator_params": {"model": "all-MiniLM-L6-v2"},
            "judge": False,
        },
        _evaluation,
    ),
    Step(
        "calibration",
        "Human evaluation calibration",
        "Fit the metric's threshold to reviewers' pass/fail labels.",
        ("evaluation",),
        {**_METRIC, "min_labels": 10, "criterion": "balanced_accuracy"},
        _calibration,
    ),
    Step(
        "failure_clustering",
        "Failure clustering",
        "Group the failed cases by what they share, to find root causes.",
        ("calibration",),
        {**_METRIC, "min_failures": 5, "seed": 0},
        _failures,
    ),
    Step(
        "weakness_detection",
        "Weakness detection",
        "Find the topics and question types where the system does worst.",
        ("calibration",),
        {**_METRIC, "min_n": 3, "top": 5},
        _weakness,
    ),
    Step(
        "input_variations",
        "Robustness: input variations",
        "Perturb the questions (typos, punctuation, synonyms…) and count verdict flips.",
        ("evaluation",),
        {
            **_METRIC,
            "perturbators": ["comma", "keyboard_typos", "synonym"],
            "intensity": "medium",
            "seed": 0,
        },
        _variations,
    ),
    Step(
        "adversarial_inputs",
        "Robustness: adversarial inputs",
        "Mislead, contradict and inject; compare the scores with the base cases'.",
        ("evaluation",),
        {**_METRIC, "kinds": None, "n": 30, "use_llm": False, "seed": 0},
        _adversarial,
    ),
)
