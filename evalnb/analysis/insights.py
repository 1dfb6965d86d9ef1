"""Insights: what stands out, said only when it holds.

A best/worst model is named only when the paired bootstrap says it beats (or loses to)
every other model; otherwise the insight says the top models are statistically tied.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, NamedTuple

import polars as pl

from evalnb.analysis.leaderboard import compare_models
from evalnb.analysis.task import with_task_domain

if TYPE_CHECKING:
    from evalnb.lab.core import LabCore

__all__ = ["INSIGHT_SCHEMA", "insights", "insights_json"]

INSIGHT_SCHEMA = pl.Schema(
    dict[str, pl.DataType](
        {
            "insight_type": pl.String(),
            "evaluator": pl.String(),
            "metric": pl.String(),
            "model": pl.String(),
            "description": pl.String(),
            "value": pl.Float64(),
            "case_ids": pl.List(pl.String()),
            "actions_description": pl.String(),
        }
    )
)
_DIFFICULT_SHOWN = 5


class _Voice(NamedTuple):
    """How insights of one kind of evaluator are typed and told."""

    kind: str  # H2O's insight_type
    best: str  # "the <best> model"
    worst: str
    failed: str  # "<n> of <m> model(s) <failed>"


# H2O types insights by what the evaluator judges (privacy, fairness, summarization ...),
# and words the best and worst model and the hardest prompt to match.
_VOICES = {
    "generation": _Voice(
        "accuracy", "most accurate", "least accurate", "failed to answer it correctly"
    ),
    "retrieval": _Voice(
        "retrieval",
        "best retrieving",
        "worst retrieving",
        "retrieved context that failed the check",
    ),
    "privacy": _Voice(
        "privacy",
        "most privacy-preserving",
        "least privacy-preserving",
        "leaked personal or sensitive data",
    ),
    "fairness": _Voice(
        "fairness",
        "least toxic and biased",
        "most toxic or biased",
        "produced toxic or biased text",
    ),
    "summarization": _Voice(
        "summarization", "best summarizing", "worst summarizing", "failed to summarize well"
    ),
    "classification": _Voice(
        "classification",
        "most accurate classifying",
        "least accurate classifying",
        "misclassified it",
    ),
    "agents": _Voice("agents", "best acting", "worst acting", "failed the task as an agent"),
}
_HALLUCINATION = {"hallucination", "groundedness", "fact_check"}
_DIFFICULT_ACTION = (
    "Check the prompt, its expected answer and condition first: are they right? Then read the "
    "failed answers side by side for what they share: a missing fact, a misread question, a "
    "format the check does not accept."
)


def _voice(evaluator: str, domain: str | None) -> _Voice:
    voice = _VOICES.get(domain or "", _VOICES["generation"])
    if evaluator in _HALLUCINATION:
        return voice._replace(failed="hallucinated")
    return voice


def _row(
    kind: str,
    ev: str | None,
    metric: str | None,
    model: str | None,
    text: str,
    value: float | None = None,
    case_ids: list[str] | None = None,
    action: str = "",
) -> dict[str, object]:
    return {
        "insight_type": kind,
        "evaluator": ev,
        "metric": metric,
        "model": model,
        "description": text,
        "value": value,
        "case_ids": case_ids or [],
        "actions_description": action,
    }


def _best_worst(verdicts: pl.DataFrame, board: pl.DataFrame, seed: int) -> list[dict[str, object]]:
    out = []
    primary = board.filter(pl.col("primary") & pl.col("mean").is_not_null())
    domains = dict(verdicts.select("evaluator", "domain").unique("evaluator").iter_rows())
    for (ev, metric), part in primary.group_by("evaluator", "metric", maintain_order=True):
        if part.height < 2:
            continue
        pairs = compare_models(verdicts, str(ev), str(metric), seed=seed)
        ordered = part.sort("rank")
        for label, model in (("best", ordered["model"][0]), ("worst", ordered["model"][-1])):
            wins = pairs.filter(
                (
                    (pl.col("a") == model)
                    & (pl.col("ci_low") > 0 if label == "best" else pl.col("ci_high") < 0)
                )
                | (
                    (pl.col("b") == model)
                    & (pl.col("ci_high") < 0 if label == "best" else pl.col("ci_low") > 0)
                )
            ).height
            mean = float(ordered.filter(pl.col("model") == model)["mean"][0])
            voice = _voice(str(ev), domains.get(str(ev)))
            if wins == part.height - 1:
                text = (
                    f"Model {model} was evaluated as the "
                    f"{voice.best if label == 'best' else voice.worst} model according to "
                    f"the {ev} evaluator ({metric} {mean:.4f}; its 95% interval separates it "
                    "from every other model)."
                )
                out.append(_row(voice.kind, str(ev), str(metric), model, text, mean))
            elif label == "best":
                text = (
                    f"No single best model for {ev} ({metric}): {model} leads with {mean:.4f} "
                    "but its 95% interval overlaps another model's — collect more test cases "
                    "to separate them."
                )
                out.append(_row(voice.kind, str(ev), str(metric), None, text, mean))
    return out


def _difficult(verdicts: pl.DataFrame, cases: pl.DataFrame) -> list[dict[str, object]]:
    """Cases failed by the most models on an evaluator's primary metric."""
    out = []
    prim = verdicts.filter(pl.col("primary") & pl.col("passed").is_not_null())
    per_case = (
        prim.group_by("evaluator", "metric", "case_id")
        .agg(
            failed=pl.col("model").filter(~pl.col("passed")).n_unique(),
            models=pl.col("model").n_unique(),
            domain=pl.col("domain").first(),
        )
        .filter(pl.col("failed") > 0)
        .sort(["evaluator", "failed", "case_id"], descending=[False, True, False])
    )
    prompts = dict(cases.select("case_id", "prompt").iter_rows())
    for (ev, metric), part in per_case.group_by("evaluator", "metric", maintain_order=True):
        top = part.filter(pl.col("failed") == part["failed"].max()).head(_DIFFICULT_SHOWN)
        for case_id, failed, models, domain in top.select(
            "case_id", "failed", "models", "domain"
        ).iter_rows():
            voice = _voice(str(ev), domain)
            text = (
                f"Prompt '{prompts.get(case_id)}' was evaluated as one of the most difficult "
                f"prompts for the evaluated models according to the {ev} evaluator: "
                f"{failed} of {models} model(s) {voice.failed}."
            )
            out.append(
                _row(
                    voice.kind,
                    str(ev),
                    str(metric),
                    None,
                    text,
                    float(failed),
                    [case_id],
                    _DIFFICULT_ACTION,
                )
            )
    return out


_SPEED_COST = (
    ("duration_s", "s per answer", ("fastest", "slowest")),
    ("cost", "cost per answer", ("cheapest", "most expensive")),
)


def _speed_cost(outputs: pl.LazyFrame, seed: int) -> list[dict[str, object]]:
    """Fastest, slowest, cheapest and costliest model (agent runs: their summed steps).

    Mean per answer, compared pair by pair on the cases both answered (the paired bootstrap
    of :func:`compare_models`, lower is better): a model is named only when its interval
    separates it from every other; otherwise the leaders are said to be tied.
    """
    out = []
    for column, unit, words in _SPEED_COST:
        rows = (
            outputs.filter(pl.col(column).is_not_null())
            .select("case_id", "model", "sample", value=pl.col(column).cast(pl.Float64))
            .collect()
        )
        means = (
            rows.group_by("model").agg(pl.col("value").mean(), n=pl.len()).sort("value", "model")
        )
        if means.height < 2:
            continue
        verdicts = rows.with_columns(
            evaluator=pl.lit("run"),
            metric=pl.lit(column),
            passed=pl.lit(value=True),
            higher_is_better=pl.lit(value=False),
        )
        pairs = compare_models(verdicts, "run", column, seed=seed)
        for label, (model, mean, n) in zip(
            ("best", "worst"), (means.row(0), means.row(-1)), strict=True
        ):
            word = words[0] if label == "best" else words[1]
            # diff > 0 means a is better (here: lower); a_beats_b: the interval is above 0.
            ahead = pairs.filter(
                (
                    (pl.col("a") == model)
                    & ((pl.col("ci_low") > 0) if label == "best" else (pl.col("ci_high") < 0))
                )
                | (
                    (pl.col("b") == model)
                    & ((pl.col("ci_high") < 0) if label == "best" else (pl.col("ci_low") > 0))
                )
            ).height
            if ahead == means.height - 1:
                text = (
                    f"Model {model} is the {word} model ({mean:.4g} {unit} over {n} "
                    "answers; the 95% interval of its paired difference separates it from "
                    "every other model)."
                )
                out.append(_row("performance", None, column, model, text, float(mean)))
            elif label == "best":
                text = (
                    f"No single {word} model: {model} leads ({mean:.4g} {unit}) but its 95% "
                    "interval against another model includes no difference."
                )
                out.append(_row("performance", None, column, None, text, float(mean)))
    return out


def _retrieval_vs_generation(
    verdicts: pl.DataFrame, cases: pl.DataFrame
) -> list[dict[str, object]]:
    """Prompts whose retrieval failures outnumber their generation failures."""
    fails = verdicts.filter(pl.col("primary") & (pl.col("passed") == False))  # noqa: E712
    per = (
        fails.group_by("case_id")
        .agg(
            retrieval=(pl.col("domain") == "retrieval").sum(),
            generation=(pl.col("domain") == "generation").sum(),
        )
        .filter(pl.col("retrieval") > pl.col("generation"))
        .sort("case_id")
    )
    if per.is_empty():
        return []
    ids = per["case_id"].to_list()
    prompts = dict(cases.select("case_id", "prompt").iter_rows())
    shown = "; ".join(f"'{prompts.get(c)}'" for c in ids[:_DIFFICULT_SHOWN])
    text = (
        f"{len(ids)} prompt(s) fail more on retrieval than on generation — improve retrieval "
        f"before the model: {shown}"
    )
    return [_row("retrieval", None, None, None, text, float(len(ids)), ids)]


def insights(
    lab: LabCore, verdicts: pl.DataFrame, board: pl.DataFrame, *, seed: int = 0
) -> pl.DataFrame:
    """All insights of a lab as a frame (``INSIGHT_SCHEMA``)."""
    verdicts = with_task_domain(verdicts, lab.cases)  # BLEU and ROUGE: worded by the task
    rows = (
        _best_worst(verdicts, board, seed)
        + _difficult(verdicts, lab.cases)
        + _retrieval_vs_generation(verdicts, lab.cases)
        + _speed_cost(lab.scan("outputs"), seed)  # the outputs may be kept on disk
    )
    return (
        pl.DataFrame(rows, schema=INSIGHT_SCHEMA) if rows else pl.DataFrame(schema=INSIGHT_SCHEMA)
    )


def insights_json(frame: pl.DataFrame) -> str:
    """H2O's ``insights_and_actions.json``: ``InsightAndAction`` dicts."""
    items = [
        {
            "description": r["description"],
            "description_html": None,
            "actions_description": r["actions_description"],
            "actions_codes": [],
            "explainer_id": r["evaluator"],
            "explainer_name": r["evaluator"],
            "resources": [],
            "insight_type": r["insight_type"],
            "insight_attrs": {
                "model_name": r["model"],
                "metric_id": r["metric"],
                "value": r["value"],
                "test_case_keys": r["case_ids"],
            },
        }
        for r in frame.iter_rows(named=True)
    ]
    return json.dumps(items, indent=2, allow_nan=False, default=str)
