"""ragas datasets in and out: ``EvaluationDataset`` samples and ``EvaluationResult`` scores.

Single-turn samples (``SingleTurnSample``, ``EvaluationDataset.to_jsonl`` / ``to_csv`` /
``to_list``) map field by field, as ragas names them:

======================  ==========================================================
``user_input``          the case's ``prompt``
``reference``           the case's ``expected``
``reference_contexts``  the case's ``corpus`` (the passages the reference rests on)
``synthesizer_name``    the case's ``question_type`` (ragas' test generation)
``response``            the output's ``actual``
``retrieved_contexts``  the output's ``context``
======================  ==========================================================

Everything else — ``rubrics``, ``reference_context_ids``, ``persona_name``,
``query_style``, ``query_length``, fields of your own — goes to the case's ``extra``, and
``multi_responses`` and ``retrieved_context_ids`` to the output's; :func:`ragas_records`
writes them back. Multi-turn samples (``user_input`` a list of messages) are agent
conversations (:mod:`evalnb.io.agents`). ragas' CSV holds lists and objects as Python
literals (``"['c1', 'c2']"``), read back with :func:`ast.literal_eval` (literals only, no
code). A dataset carries no model: ``evalnb.load(dataset, model="my-rag")`` names it.
"""

from __future__ import annotations

import ast
import json
import math
from typing import TYPE_CHECKING, Any

from evalnb.io.agents import is_agent_record, read_agent_records
from evalnb.io.fields import Where, to_json

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from evalnb.io.builder import LabBuilder
    from evalnb.lab.core import LabCore

__all__ = [
    "EVALUATOR",
    "is_ragas_record",
    "ragas_object_records",
    "ragas_records",
    "read_ragas_records",
]

EVALUATOR = "ragas_result"  # the scores of an imported EvaluationResult
_CASE = {
    "user_input": "prompt",
    "reference": "expected",
    "reference_contexts": "corpus",
    "synthesizer_name": "question_type",
}
_OUTPUT = {"response": "actual", "retrieved_contexts": "context"}
_OUTPUT_EXTRA = ("multi_responses", "retrieved_context_ids")
_LISTS = {
    "reference_contexts",
    "retrieved_contexts",
    "multi_responses",
    "retrieved_context_ids",
    "reference_context_ids",
}
_SIGNS = ("response", "reference", "retrieved_contexts", "reference_contexts")
_MAX_LITERAL = 1_000_000  # characters of one CSV cell parsed as a Python literal


def is_ragas_record(value: object) -> bool:
    """Whether a parsed record is a ragas single-turn sample (``user_input`` text and more)."""
    return (
        isinstance(value, dict)
        and isinstance(value.get("user_input"), str)
        and any(k in value for k in _SIGNS)
    )


def ragas_object_records(obj: object) -> tuple[list[dict[str, Any]], list[dict[str, Any]] | None]:
    """Return a ragas ``EvaluationDataset``'s records, or an ``EvaluationResult``'s with scores.

    Duck-typed, so evalnb needs no ragas to read what ragas made: a result has ``scores``
    (one dict of metric values per sample) and ``dataset``; a dataset has ``to_list()``.
    """
    scores = None
    if hasattr(obj, "scores") and hasattr(obj, "dataset"):
        scores = [dict(s) for s in obj.scores]
        obj = obj.dataset
    to_list = getattr(obj, "to_list", None)
    if not callable(to_list):
        msg = (
            f"expected a ragas EvaluationDataset or EvaluationResult, a file or a frame; "
            f"got {type(obj).__name__}"
        )
        raise TypeError(msg)
    return [dict(r) for r in to_list()], scores


def _literal(value: object, where: Where, key: str) -> object:
    """Read back a CSV cell ragas wrote with ``str()`` (a list or dict literal)."""
    if not isinstance(value, str) or value[:1] not in "[{":
        return value
    if len(value) > _MAX_LITERAL:
        raise where.error(key, f"a literal under {_MAX_LITERAL:,} characters", f"{len(value):,}")
    try:
        return ast.literal_eval(value)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        raise where.error(
            key, "a Python list or dict literal, as ragas' to_csv writes", value[:80]
        ) from None


def read_ragas_records(
    records: Sequence[tuple[Where, Mapping[str, object]]],
    builder: LabBuilder,
    *,
    model: str = "model",
    scores: Sequence[Mapping[str, object]] | None = None,
    csv: bool = False,
) -> None:
    """Add ragas samples (single- or multi-turn) and, for a result, their scores."""
    builder.info["format"] = "ragas"
    if scores is not None and len(scores) != len(records):
        msg = "scores"
        raise Where(records[0][0].source if records else "<ragas>").error(
            msg, f"one score row per sample ({len(records)})", len(scores)
        )
    multi = [
        (w, {**r, "model": r.get("model", model)})
        for w, r in records
        if is_agent_record(r) or isinstance(r.get("user_input"), list)
    ]
    if multi:
        read_agent_records(multi, builder)
        builder.info["format"] = "ragas"
        if len(multi) == len(records):
            return
    for i, (where, raw) in enumerate(records):
        if isinstance(raw.get("user_input"), list):
            continue
        rec = {
            k: (_literal(v, where, k) if csv else v)
            for k, v in raw.items()
            if not (csv and v == "")
        }
        key = _sample(rec, where, builder, model)
        if scores is not None:
            _scores(scores[i], key, builder)


def _sample(
    rec: Mapping[str, Any], where: Where, builder: LabBuilder, model: str
) -> tuple[str, str, int]:
    prompt = where.string(rec, "user_input", required=True)
    for key in _LISTS & set(rec):
        if rec[key] is not None and not (
            isinstance(rec[key], list) and all(isinstance(x, str | int) for x in rec[key])
        ):
            raise where.error(key, "a list of strings", rec[key])
    reference = where.opt_string(rec, "reference")
    case = {
        "case_id": str(rec["id"]) if rec.get("id") is not None else "",
        "prompt": prompt,
        "expected": [reference] if reference else [],
        "corpus": [str(c) for c in rec.get("reference_contexts") or []],
        "question_type": where.opt_string(rec, "synthesizer_name"),
        "extra": to_json(
            {
                k: v
                for k, v in rec.items()
                if k not in _CASE
                and k not in _OUTPUT
                and k not in _OUTPUT_EXTRA
                and k not in ("id", "model")
            }
        ),
    }
    case_id = builder.add_case(case, where, id_field="user_input")
    name = str(rec.get("model") or model)
    extra = {k: rec[k] for k in _OUTPUT_EXTRA if rec.get(k) is not None}
    builder.add_output(
        {
            "case_id": case_id,
            "model": name,
            "sample": 0,
            "actual": where.opt_string(rec, "response"),
            "context": [str(c) for c in rec.get("retrieved_contexts") or []],
            "extra": to_json(extra),
        },
        where,
        id_field="user_input",
    )
    return case_id, name, 0


def _scores(row: Mapping[str, object], key: tuple[str, str, int], builder: LabBuilder) -> None:
    """One imported score per metric of an EvaluationResult row (ragas' NaN: no value)."""
    for metric, value in row.items():
        number = (
            float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
        )
        if isinstance(value, bool):
            number = float(value)
        detail = None
        if number is None or not math.isfinite(number):
            detail = to_json({"reason": f"ragas gave no number: {value!r}"[:300]})
            number = None
        builder.add_imported_score(
            key,
            EVALUATOR,
            str(metric),
            number,
            detail,
            description=f"ragas' {metric}, as its EvaluationResult holds it.",
            spec={"min": 0.0, "max": 1.0, "default_threshold": 0.5},
        )


def ragas_records(lab: LabCore, model: str | None = None) -> list[dict[str, Any]]:
    """Return the lab's outputs (of ``model``, else all) as ragas single-turn records.

    Fields as ragas names them; the case's and output's ``extra`` come back as fields. With
    several models and no ``model``, each record also carries ``model`` (ragas ignores it).
    """
    outputs = lab.outputs if model is None else lab.outputs.filter(lab.outputs["model"] == model)
    if model is not None and outputs.is_empty():
        msg = (
            f"no outputs of model {model!r}; the lab's models: {sorted(set(lab.outputs['model']))}"
        )
        raise KeyError(msg)
    several = model is None and lab.outputs["model"].n_unique() > 1
    cases = {c["case_id"]: c for c in lab.cases.iter_rows(named=True)}
    out = []
    for o in outputs.iter_rows(named=True):
        c = cases[o["case_id"]]
        rec: dict[str, Any] = {"user_input": c["prompt"]}
        if o["context"] is not None and len(o["context"]):
            rec["retrieved_contexts"] = list(o["context"])
        if c["corpus"] is not None and len(c["corpus"]):
            rec["reference_contexts"] = list(c["corpus"])
        if o["actual"] is not None:
            rec["response"] = o["actual"]
        if c["expected"] is not None and len(c["expected"]):
            rec["reference"] = c["expected"][0]
        if c["question_type"] is not None:
            rec["synthesizer_name"] = c["question_type"]
        rec.update(json.loads(c["extra"] or "{}"))
        rec.update(json.loads(o["extra"] or "{}"))
        if several:
            rec["model"] = o["model"]
        out.append(rec)
    return out
