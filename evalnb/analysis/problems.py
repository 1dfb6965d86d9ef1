"""Problems: what is wrong, how bad, and what to do about it.

Every problem is one row with H2O's fields (``description``, ``severity``, ``problem_type``,
AVID code, ``actions_description``) plus structured attributes (evaluator, metric, model,
the offending case keys), so a frame can be filtered and the JSON export has H2O's shape.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import polars as pl

from evalnb.analysis.agent_problems import tool_problems
from evalnb.analysis.task import with_task_domain

if TYPE_CHECKING:
    from evalnb.lab.core import LabCore

__all__ = ["AVID", "MIN_CASES", "PROBLEM_SCHEMA", "problems", "problems_json"]

AVID = {
    "P0100": "Problems arising due to faults in the data pipeline",
    "P0200": "Ability for the AI to perform as intended",
    "P0300": "Protect leakage of user information as required by rules and regulations",
    "E0100": "Concerns of algorithms propagating societal bias",
    "E0300": "Perpetuating/causing/being affected by negative user actions",
}
PROBLEM_SCHEMA = pl.Schema(
    dict[str, pl.DataType](
        {
            "severity": pl.String(),
            "problem_type": pl.String(),
            "avid_code": pl.String(),
            "evaluator": pl.String(),
            "metric": pl.String(),
            "model": pl.String(),
            "description": pl.String(),
            "actions_description": pl.String(),
            "score": pl.Float64(),
            "threshold": pl.Float64(),
            "case_ids": pl.List(pl.String()),
        }
    )
)
_SEVERITY_ORDER = {"HIGH": 0, "MEDIUM": 1, "LOW": 2}
MIN_CASES = 5  # below this a model's mean and its interval say little
_TYPE_BY_DOMAIN = {
    "generation": "accuracy",
    "retrieval": "retrieval",
    "privacy": "privacy",
    "fairness": "fairness",
    "summarization": "summarization",
    "classification": "classification",
    "agents": "agents",
}
_AVID_BY_EVALUATOR = {"toxicity": "E0300", "fairness_bias": "E0100"}
_AVID_BY_DOMAIN = {"privacy": "P0300", "retrieval": "P0100"}
# Evaluators whose verdicts H2O compares across perturbations; the others do not.
_NO_FLIPS = {"answer_relevancy_similarity", "context_mrr", "looping", "summarization"}
_ACTIONS = {
    "accuracy": "Review the failing answers; improve the prompt, the model or its fine-tuning "
    "on the failing cases.",
    "retrieval": "Check the retriever: chunking, embedding model, top-k and the corpus itself.",
    "privacy": "Add output filtering of personal and sensitive data, or remove it from the "
    "corpus the model sees.",
    "fairness": "Add guardrails against toxic or biased output and test with adversarial prompts.",
    "summarization": "Tune the summarization prompt or model for coverage and faithfulness.",
    "classification": "Review misclassified cases and the label set; retrain or re-prompt.",
    "agents": "Read the failing runs step by step (the eye's steps): the tools chosen, their "
    "arguments and results; fix the tool descriptions, the agent's prompt or the tools.",
}
_FLIP_ACTION = (
    "Perform sensitivity analysis on various perturbation types and intensities to explore "
    "the model's robustness with regard to the specified perturbations."
)


def _avid(evaluator: str, domain: str) -> str:
    return _AVID_BY_EVALUATOR.get(evaluator, _AVID_BY_DOMAIN.get(domain, "P0200"))


def _threshold_problems(
    board: pl.DataFrame, verdicts: pl.DataFrame | pl.LazyFrame, *, case_ids: bool = True
) -> list[dict[str, object]]:
    """One problem per (evaluator, metric, model) whose mean is on the wrong side.

    ``case_ids=False`` leaves each problem's list of failing cases empty (its longest part).
    """
    out: list[dict[str, object]] = []
    bad = board.filter(
        pl.col("mean").is_not_null()
        & pl.col("threshold").is_finite()
        & pl.when(pl.col("higher_is_better"))
        .then(pl.col("mean") < pl.col("threshold"))
        .otherwise(pl.col("mean") > pl.col("threshold"))
    )
    bad_rows = bad.select("evaluator", "metric", "model")
    if bad_rows.is_empty():
        return out
    # Only the failing rows of failing (evaluator, metric, model)s are read: the filter on
    # the scores' own columns runs before any join when the verdicts are a query.
    cut = verdicts.lazy().filter(
        pl.col("evaluator").is_in(bad_rows["evaluator"].unique().implode())
        & pl.col("metric").is_in(bad_rows["metric"].unique().implode())
        & pl.col("model").is_in(bad_rows["model"].unique().implode())
    )
    fails: dict[tuple[str, str, str], list[str]] = {}
    if case_ids:
        failing_cases = (
            cut.filter(pl.col("passed").not_())
            .join(bad_rows.lazy(), on=["evaluator", "metric", "model"], how="semi")
            .group_by("evaluator", "metric", "model")
            .agg(pl.col("case_id").unique().sort())
            .collect()
        )
        fails = {(r[0], r[1], r[2]): r[3] for r in failing_cases.iter_rows()}
    meta = cut.select("evaluator", "metric", "domain", "title").unique(["evaluator", "metric"])
    info = {(r[0], r[1]): (r[2], r[3]) for r in meta.collect().iter_rows()}
    for row in bad.iter_rows(named=True):
        thr, mean = row["threshold"], row["mean"]
        domain, title = info[(row["evaluator"], row["metric"])]
        kind = _TYPE_BY_DOMAIN.get(domain or "", "accuracy")
        out.append(
            {
                "severity": "MEDIUM" if mean > thr / 2 else "HIGH",
                "problem_type": kind,
                "avid_code": _avid(row["evaluator"], domain or ""),
                "evaluator": row["evaluator"],
                "metric": row["metric"],
                "model": row["model"],
                "description": (
                    f"Evaluated model {row['model']} failed to satisfy the threshold {thr} for "
                    f"metric '{title}', with average score {mean:.4f}."
                ),
                "actions_description": _ACTIONS[kind],
                "score": mean,
                "threshold": thr,
                "case_ids": fails.get((row["evaluator"], row["metric"], row["model"]), []),
            }
        )
    return out


def _flip_problems(
    verdicts: pl.DataFrame | pl.LazyFrame, cases: pl.DataFrame
) -> list[dict[str, object]]:
    """Flag each perturbed case whose verdict differs from its original's, per metric."""
    lineage = cases.filter(pl.col("perturbation_of").is_not_null()).select(
        "case_id", "perturbation_of", "perturbation", pl.col("prompt").alias("perturbed_prompt")
    )
    if lineage.is_empty():
        return []
    involved = pl.concat([lineage["case_id"], lineage["perturbation_of"]]).unique()
    v = (
        verdicts.lazy()
        .filter(pl.col("case_id").is_in(involved.implode()))
        .filter(pl.col("passed").is_not_null() & ~pl.col("evaluator").is_in(list(_NO_FLIPS)))
        .collect()
    )
    pert = v.join(lineage, on="case_id")
    orig = v.select(
        pl.col("case_id").alias("perturbation_of"),
        "model",
        "sample",
        "evaluator",
        "metric",
        pl.col("value").alias("orig_value"),
        pl.col("passed").alias("orig_passed"),
    )
    flips = pert.join(
        orig, on=["perturbation_of", "model", "sample", "evaluator", "metric"]
    ).filter(pl.col("passed") != pl.col("orig_passed"))
    prompts = dict(cases.select("case_id", "prompt").iter_rows())
    out: list[dict[str, object]] = []
    for r in flips.iter_rows(named=True):
        way = "from passed to failed" if r["orig_passed"] else "from failed to passed"
        out.append(
            {
                "severity": "HIGH",
                "problem_type": "robustness",
                "avid_code": "P0200",
                "evaluator": r["evaluator"],
                "metric": r["metric"],
                "model": r["model"],
                "description": (
                    "Model robustness problem detected in case of prompt perturbation: metric "
                    f"'{r['title']}' value flipped {way} (from {r['orig_value']:.4f} to "
                    f"{r['value']:.4f} with threshold {r['threshold']}) in case of answers "
                    f"generated by the model '{r['model']}'. ORIGINAL prompt: "
                    f"'{prompts.get(r['perturbation_of'])}', PERTURBED prompt: '{r['perturbed_prompt']}'."
                ),
                "actions_description": _FLIP_ACTION,
                "score": r["value"],
                "threshold": r["threshold"],
                "case_ids": [r["case_id"]],
            }
        )
    return out


def _dataset_problems(lab: LabCore) -> list[dict[str, object]]:
    """Rows an evaluator could not score, grouped by reason; empty retrieved contexts."""
    out: list[dict[str, object]] = []
    unscored = (
        lab.scan("scores")  # a query: only the unscored rows' columns are materialized
        .filter(pl.col("value").is_null() & pl.col("detail").is_not_null())
        .select("evaluator", "case_id", "model", "detail")
        .with_columns(reason=pl.col("detail").str.json_path_match("$.reason"))
        .filter(pl.col("reason").is_not_null())
        .group_by("evaluator", "reason")
        .agg(pl.col("case_id").unique().sort(), pl.col("model").unique().sort())
        .sort("evaluator", "reason")
        .collect()
    )
    for ev, reason, case_ids, models in unscored.iter_rows():
        out.append(
            {
                "severity": "LOW",
                "problem_type": "dataset",
                "avid_code": "P0100",
                "evaluator": ev,
                "metric": None,
                "model": None,
                "description": f"{ev}: {len(case_ids)} test case(s) not scored ({reason}); "
                f"models {', '.join(models)}.",
                "actions_description": "Fill in the missing fields or fix the failing model host, then re-run.",
                "score": None,
                "threshold": None,
                "case_ids": case_ids,
            }
        )
    ctx = lab.scan("outputs").select("case_id", "model", n=pl.col("context").list.len()).collect()
    if ctx["n"].fill_null(0).sum() > 0:  # a RAG lab: an empty context is a retrieval failure
        empty = ctx.filter(pl.col("n").fill_null(0) == 0)
        for model, ids in (
            empty.group_by("model").agg(pl.col("case_id").unique().sort()).sort("model").iter_rows()
        ):
            out.append(
                {
                    "severity": "MEDIUM",
                    "problem_type": "retrieval",
                    "avid_code": "P0100",
                    "evaluator": None,
                    "metric": None,
                    "model": model,
                    "description": f"Model {model} retrieved no context for {len(ids)} test case(s).",
                    "actions_description": _ACTIONS["retrieval"],
                    "score": None,
                    "threshold": None,
                    "case_ids": ids,
                }
            )
    return out


def _prompts(cases: pl.DataFrame, ids: pl.Series) -> dict[str, str]:
    """Return the prompts of the cases ``ids`` names (a problem quotes its case's prompt)."""
    wanted = cases.filter(pl.col("case_id").is_in(ids.unique().implode()))
    return dict(wanted.select("case_id", "prompt").iter_rows())


def _primary(frame: pl.DataFrame) -> pl.DataFrame:
    """Rows of each evaluator's primary metric (all its rows when it marks none)."""
    marked = frame.group_by("evaluator").agg(pl.col("primary").fill_null(value=False).any())
    keep = frame.join(marked.rename({"primary": "_any"}), on="evaluator", how="left")
    return keep.filter(pl.col("primary").fill_null(value=False) | ~pl.col("_any")).drop("_any")


def _few_cases(board: pl.DataFrame) -> list[dict[str, object]]:
    """H2O's low test-case count problem, per evaluator and model.

    H2O raises it below its ``min_test_cases`` parameter, which defaults to 0 (never); here
    the bar is ``MIN_CASES``, under which a mean and its interval say little.
    """
    few = board.filter(pl.col("n_cases") < MIN_CASES).unique(["evaluator", "model"], keep="first")
    return [
        {
            "severity": "HIGH",
            "problem_type": "accuracy",
            "avid_code": "P0200",
            "evaluator": row["evaluator"],
            "metric": row["metric"],
            "model": row["model"],
            "description": (
                f"The number of evaluated rows is too low ({row['n_cases']} < {MIN_CASES}). "
                "Therefore the evaluation results may not be conclusive "
                f"(model {row['model']}, evaluator {row['evaluator']})."
            ),
            "actions_description": "Add test cases (e.g. generate them from the corpus) and "
            "re-run the evaluation.",
            "score": None,
            "threshold": None,
            "case_ids": [],
        }
        for row in few.sort("evaluator", "model").iter_rows(named=True)
    ]


_SENTENCES = pl.Struct(
    {"sentences": pl.List(pl.Struct({"text": pl.String, "groundedness": pl.Float64}))}
)


def _least_grounded(
    verdicts: pl.DataFrame | pl.LazyFrame, cases: pl.DataFrame
) -> list[dict[str, object]]:
    """Per failing groundedness row, the answer sentence that decided its score (H2O)."""
    failing = (
        verdicts.lazy()
        .filter((pl.col("evaluator") == "groundedness") & (pl.col("metric") == "groundedness"))
        .filter(
            (pl.col("passed") == False)  # noqa: E712 - null (unscored) is not a failure
            & pl.col("detail").is_not_null()
        )
        .collect()
    )
    if failing.is_empty():
        return []
    worst = (
        failing.select(
            "case_id",
            "model",
            "sample",
            "value",
            "threshold",
            s=pl.col("detail").str.json_decode(_SENTENCES).struct.field("sentences"),
        )
        .explode("s")
        .unnest("s")
        .drop_nulls("groundedness")
        .sort("groundedness", "case_id", "model", "sample")
        .unique(["case_id", "model", "sample"], keep="first", maintain_order=True)
    )
    prompts = _prompts(cases, worst["case_id"])
    return [
        {
            "severity": "MEDIUM",
            "problem_type": "accuracy",
            "avid_code": "P0100",
            "evaluator": "groundedness",
            "metric": "groundedness",
            "model": r["model"],
            "description": (
                "The least grounded sentence identified by the Groundedness evaluator is: "
                f'"{r["text"]}". Additional details - prompt: "{prompts.get(r["case_id"])}", '
                f"LLM: {r['model']}."
            ),
            "actions_description": "Check that the retrieved context supports this sentence; "
            "if it does not, ground the model on the context (prompt, "
            "retrieval) or add the missing fact to the corpus.",
            "score": r["value"],
            "threshold": r["threshold"],
            "case_ids": [r["case_id"]],
        }
        for r in worst.iter_rows(named=True)
    ]


def _context_failed_answer_passed(
    verdicts: pl.DataFrame | pl.LazyFrame, cases: pl.DataFrame
) -> list[dict[str, object]]:
    """Text matching rows whose retrieved context failed the condition but the answer passed."""
    key = ["case_id", "model", "sample"]
    tm = verdicts.lazy().filter(pl.col("evaluator") == "text_matching").collect()
    context_failed = tm.filter(
        (pl.col("metric") == "model_retrieval_failures") & (pl.col("value") == 1.0)
    ).select(key)
    # With the context checked, model_passes needs both to pass: the answer alone is judged
    # by its generation-failure flag.
    answer_passed = tm.filter(
        (pl.col("metric") == "model_generation_failures") & (pl.col("value") == 0.0)
    )
    rows = answer_passed.join(context_failed, on=key).sort(key)
    prompts = _prompts(cases, rows["case_id"])
    return [
        {
            "severity": "MEDIUM",
            "problem_type": "retrieval",
            "avid_code": "P0100",
            "evaluator": "text_matching",
            "metric": "model_retrieval_failures",
            "model": r["model"],
            "description": (
                "Retrieved context provided by RAG for the evaluation did not satisfy the "
                f"output conditions for the prompt '{prompts.get(r['case_id'])}', but the "
                f"answer generated by the LLM model {r['model']} did."
            ),
            "actions_description": "The model answered from its own knowledge: check what the "
            "retriever returned for this prompt (chunking, top-k, "
            "embedding model) and whether the corpus holds the answer.",
            "score": 1.0,
            "threshold": None,
            "case_ids": [r["case_id"]],
        }
        for r in rows.iter_rows(named=True)
    ]


def problems(
    lab: LabCore,
    verdicts: pl.DataFrame | pl.LazyFrame,
    board: pl.DataFrame,
    *,
    all_metrics: bool = False,
    case_ids: bool = True,
) -> pl.DataFrame:
    """All problems of a lab, most severe first.

    Threshold and flip problems concern each evaluator's primary metric, as in H2O (a flipped
    text-matching case is one problem, not one per pass/fail metric); ``all_metrics=True``
    raises them for every metric. Per-row problems as H2O raises them: the least grounded
    answer sentence of each failing groundedness row, and each text-matching row whose
    retrieved context failed the condition while the answer met it.

    ``verdicts`` may be a query (:func:`evalnb.lab.verdicts.lazy_verdicts`): each kind of
    problem collects only the rows it reads. ``case_ids=False`` leaves out the lists of
    failing cases of threshold problems (the eval eye counts problems, and the lists of a
    million-case lab cost a second).
    """
    verdicts = with_task_domain(verdicts, lab.cases)  # BLEU and ROUGE: typed by the task
    per_row = _least_grounded(verdicts, lab.cases) + _context_failed_answer_passed(
        verdicts, lab.cases
    )
    if not all_metrics:
        # Evaluators that mark a primary metric, read from the board (every evaluator of
        # the verdicts has rows there): the verdicts are then cut by a plain filter.
        marked = board.filter(pl.col("primary").fill_null(value=False))["evaluator"].unique()
        board = _primary(board)
        verdicts = verdicts.filter(
            pl.col("primary").fill_null(value=False) | ~pl.col("evaluator").is_in(marked.implode())
        )
    rows = (
        _threshold_problems(board, verdicts, case_ids=case_ids)
        + _flip_problems(verdicts, lab.cases)
        + per_row
        + _dataset_problems(lab)
        + tool_problems(lab)
        + _few_cases(board)
    )
    frame = (
        pl.DataFrame(rows, schema=PROBLEM_SCHEMA) if rows else pl.DataFrame(schema=PROBLEM_SCHEMA)
    )
    return (
        frame.with_columns(
            _order=pl.col("severity").replace_strict(_SEVERITY_ORDER, return_dtype=pl.Int8)
        )
        .sort("_order", "problem_type", "evaluator", "model", nulls_last=True)
        .drop("_order")
    )


def problems_json(frame: pl.DataFrame, model_keys: dict[str, str] | None = None) -> str:
    """H2O's ``problems_and_actions.json``: a list of ``ProblemAndAction`` dicts."""
    keys = model_keys or {}
    items = []
    for r in frame.iter_rows(named=True):
        attrs: dict[str, object] = {
            "model_name": r["model"],
            "evaluator_name": r["evaluator"],
            "dataset_row_keys": [
                [c, keys.get(r["model"] or "", r["model"])] for c in r["case_ids"]
            ],
            "test_case_keys": r["case_ids"],
            "avid_problem_code": r["avid_code"],
            "avid_problem_code_description": AVID.get(r["avid_code"], ""),
            "metric_id": r["metric"],
            "metric_threshold": r["threshold"],
            "metric_score": r["score"],
        }
        items.append(
            {
                "description": r["description"],
                "description_html": None,
                "actions_description": r["actions_description"],
                "actions_codes": [],
                "explainer_id": r["evaluator"],
                "explainer_name": r["evaluator"],
                "explanation_type": None,
                "explanation_name": None,
                "explanation_mime": None,
                "resources": [],
                "severity": r["severity"],
                "problem_type": r["problem_type"],
                "problem_attrs": attrs,
            }
        )
    return json.dumps(items, indent=2, allow_nan=False, default=str)
