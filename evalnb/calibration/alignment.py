"""Judge alignment: teach an LLM judge the reviewers' verdicts, and keep it only if it helps.

An aligned version of a judge evaluator carries human-graded examples (chosen from the
labelled answers, those the judge got wrong first, both verdicts represented) and, on
request, grading rules the judge model itself wrote from its disagreements with the
humans. Whether it helps is measured on labels it did not see: k-fold, each fold graded by
a version built from the other folds, so κ and accuracy before and after compare the judge
with humans on the same held-out answers. A version that does not raise κ is recorded but
not kept. Versions live in the lab's ``info`` table with their prompts; applying one
rescores the evaluator with it (the client's cache makes rolling back cheap).
"""

from __future__ import annotations

import datetime as dt
import json
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
import polars as pl

from evalnb.calibration.labels import cohen_kappa, human_verdicts
from evalnb.evaluation.base import key_params
from evalnb.evaluation.engine import evaluate
from evalnb.evaluation.families.judges.prompts import aligned_system
from evalnb.lab.core import LabCore
from evalnb.lab.verdicts import verdicts

if TYPE_CHECKING:
    from evalnb.llm.client import LLMClient

__all__ = [
    "JudgeAlignment",
    "align_judge",
    "apply_judge_version",
    "judge_versions",
    "kept_versions",
    "with_versions",
]

L = TypeVar("L", bound=LabCore)
_KEY = "judge_version/"
_ROW = ["case_id", "model", "sample"]
_RUBRIC = (
    "You graded the answers below; human reviewers disagreed with you on each. Write at most "
    "five short grading rules that would make your verdicts match theirs. Reply with the rules "
    "only, one per line.\n\n{cases}"
)


@dataclass(frozen=True)
class JudgeAlignment:
    """An alignment attempt: the version, and how it did on held-out labels."""

    evaluator: str
    metric: str
    version_id: str
    kept: bool
    n_labels: int
    kappa_before: float
    kappa_after: float
    accuracy_before: float
    accuracy_after: float
    examples: list[dict[str, str]] = field(repr=False)
    guidance: str = field(repr=False)
    confusion_before: pl.DataFrame = field(repr=False)
    confusion_after: pl.DataFrame = field(repr=False)

    def summary(self) -> str:
        """Return one paragraph a reviewer can read."""
        verdict = "kept" if self.kept else "not kept (it does not agree better with the humans)"
        return (
            f"{self.evaluator}/{self.metric}: aligned version {self.version_id} {verdict}. On "
            f"{self.n_labels} held-out labels: Cohen's κ {self.kappa_before:.3f} → "
            f"{self.kappa_after:.3f}, accuracy {self.accuracy_before:.3f} → {self.accuracy_after:.3f}."
        )


def _labelled(lab: LabCore, evaluator: str, metric: str) -> pl.DataFrame:
    """Labelled rows with their text, the human verdict and the judge's verdict now."""
    human = human_verdicts(lab.labels, evaluator, metric).drop_nulls("human_pass")
    v = verdicts(lab.metric_scores(evaluator, metric), lab.metrics, lab.thresholds)
    return (
        human.select(*_ROW, "human_pass")
        .join(v.select(*_ROW, judge_pass="passed"), on=_ROW)
        .join(lab.outputs_of(human, "actual"), on=_ROW)
        .join(lab.cases.select("case_id", "prompt"), on="case_id")
        .drop_nulls("judge_pass")
        .sort(_ROW)
    )


def _interleave(rows: pl.DataFrame, rng: np.random.Generator) -> list[dict[str, Any]]:
    """Rows alternating human pass and fail (each side shuffled), so both verdicts show."""
    sides = []
    for verdict in (True, False):
        side = rows.filter(pl.col("human_pass") == verdict).to_dicts()
        sides.append([side[i] for i in rng.permutation(len(side))])
    out = []
    for i in range(max(len(s) for s in sides)):
        out += [s[i] for s in sides if i < len(s)]
    return out


def _examples(rows: pl.DataFrame, k: int, seed: int) -> list[dict[str, str]]:
    """Up to ``k`` examples: the judge's mistakes first, then agreements; both verdicts."""
    rng = np.random.default_rng(seed)
    wrong = rows.filter(pl.col("human_pass") != pl.col("judge_pass"))
    right = rows.filter(pl.col("human_pass") == pl.col("judge_pass"))
    picked = (_interleave(wrong, rng) + _interleave(right, rng))[:k]
    return [
        {
            "question": r["prompt"] or "",
            "answer": r["actual"] or "",
            "verdict": "pass" if r["human_pass"] else "fail",
        }
        for r in picked
    ]


def _current_params(lab: LabCore, evaluator: str) -> dict[str, Any]:
    """Return the evaluator's scoring parameters now (a BYOP template stays), not the judge's."""
    found = (
        lab.scan("scores")
        .filter(pl.col("evaluator") == evaluator)
        .select(pl.col("params").drop_nulls().head(1))
        .collect()
        .to_series()
    )
    params = key_params(found[0]) if found.len() else {}
    return {k: v for k, v in params.items() if k != "judge_model"}


def _rubric(rows: pl.DataFrame, judge: LLMClient) -> str:
    wrong = rows.filter(pl.col("human_pass") != pl.col("judge_pass")).head(8)
    if wrong.is_empty():
        return ""
    cases = "\n\n".join(
        f"[Question] {r['prompt']}\n[Answer] {r['actual']}\n[You said] "
        f"{'pass' if r['judge_pass'] else 'fail'}\n[Humans said] {'pass' if r['human_pass'] else 'fail'}"
        for r in wrong.iter_rows(named=True)
    )
    reply = judge.chat([{"role": "user", "content": _RUBRIC.format(cases=cases)}])
    return (reply.content or "").strip() if reply.error is None else ""


def _grade(
    lab: LabCore,
    rows: pl.DataFrame,
    evaluator: str,
    metric: str,
    judge: LLMClient,
    params: dict[str, Any],
) -> np.ndarray:
    """Grade ``rows`` with ``params`` on an in-memory copy (nothing stored); return verdicts."""
    keys = rows.select(_ROW)
    sub = LabCore(
        {
            "cases": lab.cases.join(keys.select("case_id").unique(), on="case_id"),
            "outputs": lab.outputs.join(keys, on=_ROW),
            "thresholds": lab.thresholds,
            "metrics": lab.metrics,
        }
    )
    per_evaluator: dict[str, Any] = {evaluator: params}
    scored = evaluate(
        sub, [evaluator], judge=judge, progress=False, engine="local", **per_evaluator
    )
    v = scored.verdicts().filter((pl.col("evaluator") == evaluator) & (pl.col("metric") == metric))
    got = keys.join(v.select(*_ROW, "passed"), on=_ROW, how="left", maintain_order="left")
    return got["passed"].fill_null(value=False).to_numpy().astype(bool)


def _confusion(judge: np.ndarray, human: np.ndarray) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "human": ["pass", "pass", "fail", "fail"],
            "judge": ["pass", "fail", "pass", "fail"],
            "n": [
                int(((human) & (judge)).sum()),
                int((human & ~judge).sum()),
                int((~human & judge).sum()),
                int((~human & ~judge).sum()),
            ],
        }
    )


def align_judge(
    lab: LabCore,
    evaluator: str,
    metric: str,
    judge: LLMClient,
    *,
    max_examples: int = 6,
    folds: int = 5,
    refine: bool = False,
    min_gain: float = 0.0,
    seed: int = 0,
) -> JudgeAlignment:
    """Build an aligned version of an LLM-judge evaluator from the human labels.

    Few-shot examples from the labelled answers (the judge's mistakes first) and, with
    ``refine``, grading rules the judge model writes from its disagreements. Measured
    k-fold on held-out labels (κ and accuracy before and after); recorded with its
    prompt, and ``kept`` only when κ rises by more than ``min_gain``. Apply a version
    with ``lab.judges.apply_version``; list them with ``lab.judges.versions``.
    """
    rows = _labelled(lab, evaluator, metric)
    if rows.height < 2 * folds:
        msg = (
            f"aligning {evaluator}/{metric} needs at least {2 * folds} labelled answers the judge "
            f"scored ({folds} folds of two); got {rows.height}. Label more (evalnb.labeler)"
        )
        raise ValueError(msg)
    base = _current_params(lab, evaluator)
    human = rows["human_pass"].to_numpy().astype(bool)
    before = rows["judge_pass"].to_numpy().astype(bool)
    after = np.empty_like(before)
    fold = np.random.default_rng(seed).permutation(rows.height) % folds
    for k in range(folds):
        train, test = rows.filter(pl.Series(fold != k)), rows.filter(pl.Series(fold == k))
        params = {
            **base,
            "judge_examples": json.dumps(_examples(train, max_examples, seed + k)),
            "judge_guidance": _rubric(train, judge) if refine else "",
        }
        after[fold == k] = _grade(lab, test, evaluator, metric, judge, params)
    k_before, k_after = cohen_kappa(before, human), cohen_kappa(after, human)
    examples = _examples(rows, max_examples, seed)
    guidance = _rubric(rows, judge) if refine else ""
    kept = bool(k_after > k_before + min_gain)
    result = JudgeAlignment(
        evaluator,
        metric,
        uuid.uuid4().hex[:10],
        kept,
        rows.height,
        k_before,
        k_after,
        float(np.mean(before == human)),
        float(np.mean(after == human)),
        examples,
        guidance,
        _confusion(before, human),
        _confusion(after, human),
    )
    record = {
        "version_id": result.version_id,
        "evaluator": evaluator,
        "metric": metric,
        "kept": kept,
        "n_labels": rows.height,
        "kappa_before": k_before,
        "kappa_after": k_after,
        "accuracy_before": result.accuracy_before,
        "accuracy_after": result.accuracy_after,
        "examples": examples,
        "guidance": guidance,
        "judge_model": judge.model,
        "system_prompt": aligned_system(
            {"judge_examples": json.dumps(examples), "judge_guidance": guidance}
        ),
        "created_at": dt.datetime.now(dt.UTC).isoformat(),
    }
    lab.replace_tables({"info": with_versions(lab, [record])})
    return result


def with_versions(lab: LabCore, records: list[dict[str, Any]]) -> pl.DataFrame:
    """Return ``lab``'s ``info`` table with these judge version records added (or replaced)."""
    keys = [f"{_KEY}{r['evaluator']}/{r['metric']}/{r['version_id']}" for r in records]
    kept = lab.table("info").filter(~pl.col("key").is_in(keys))
    return pl.concat([kept, pl.DataFrame({"key": keys, "value": [json.dumps(r) for r in records]})])


def kept_versions(lab: LabCore) -> list[dict[str, Any]]:
    """Return the full records of the judge versions that were kept (for the bundle)."""
    info = lab.table("info").filter(pl.col("key").str.starts_with(_KEY))
    return [r for r in (json.loads(v) for v in info["value"]) if r.get("kept")]


def judge_versions(lab: LabCore, evaluator: str | None = None) -> pl.DataFrame:
    """Every aligned version recorded: evaluator, metric, id, kept, κ and accuracy before/after."""
    info = lab.table("info").filter(pl.col("key").str.starts_with(_KEY))
    rows = [json.loads(v) for v in info["value"]]
    if evaluator is not None:
        rows = [r for r in rows if r["evaluator"] == evaluator]
    cols = [
        "evaluator",
        "metric",
        "version_id",
        "kept",
        "n_labels",
        "kappa_before",
        "kappa_after",
        "accuracy_before",
        "accuracy_after",
        "judge_model",
        "created_at",
        "system_prompt",
    ]
    return pl.DataFrame(
        [{c: r.get(c) for c in cols} for r in rows],
        schema={
            c: pl.Boolean
            if c == "kept"
            else pl.Int64
            if c == "n_labels"
            else pl.Float64
            if c.startswith(("kappa", "accuracy"))
            else pl.String
            for c in cols
        },
    )


def apply_judge_version(lab: L, evaluator: str, version_id: str | None, judge: LLMClient) -> L:
    """Rescore ``evaluator`` with an aligned version; ``None`` rolls back to the plain judge."""
    params = {**_current_params(lab, evaluator), "judge_examples": "", "judge_guidance": ""}
    if version_id is not None:
        found = [
            json.loads(v)
            for v in lab.table("info").filter(
                pl.col("key").str.starts_with(f"{_KEY}{evaluator}/")
                & pl.col("key").str.ends_with(f"/{version_id}")
            )["value"]
        ]
        if not found:
            msg = f"no aligned version {version_id!r} of {evaluator}; see lab.judges.versions()"
            raise KeyError(msg)
        params.update(
            judge_examples=json.dumps(found[0]["examples"]), judge_guidance=found[0]["guidance"]
        )
    per_evaluator: dict[str, Any] = {evaluator: params}
    return evaluate(lab, [evaluator], judge=judge, progress=False, engine="local", **per_evaluator)
