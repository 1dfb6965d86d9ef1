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
code) in the fields ragas defines as lists or objects; a text field stays the text it was,
brackets and all. A dataset carries no model: ``evalnb.load(dataset, model="my-rag")`` names it.
"""

from __future__ import annotations

import ast
import json
import math
import numbers
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from evalnb.io.agents import is_agent_record, read_agent_records
from evalnb.io.fields import Where, to_json
from evalnb.io.media_fields import base_of, split_media_contexts
from evalnb.lab.bounds import MAX_OBJECT_SAMPLES, MAX_RESOLVED_CHARS
from evalnb.lab.errors import InputError

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

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
# Fields ragas defines as lists or objects: the only CSV cells read as literals.
_STRUCTURED = _LISTS | {"rubrics", "reference_tool_calls", "reference_topics"}
_SIGNS = ("response", "reference", "retrieved_contexts", "reference_contexts")
_MAX_LITERAL = 1_000_000  # characters of one CSV cell parsed as a Python literal
_MAX_VALUES = 1_000_000  # values (texts, numbers, entries) in one field of one sample
_MAX_NESTING = 500  # levels of lists and dicts in one field (what reads them recurses)


def is_ragas_record(value: object) -> bool:
    """Whether a parsed record is a ragas single-turn sample (``user_input`` text and more)."""
    return (
        isinstance(value, dict)
        and isinstance(value.get("user_input"), str)
        and any(k in value for k in _SIGNS)
    )


def ragas_object_records(
    obj: object, where: Where
) -> tuple[list[dict[str, Any]], list[dict[str, Any]] | None]:
    """Return a ragas ``EvaluationDataset``'s records, or an ``EvaluationResult``'s with scores.

    Duck-typed, so evalnb needs no ragas to read what ragas made: a result has ``scores``
    (one dict of metric values per sample) and ``dataset``; a dataset has ``to_list()``.
    These are the user's objects, so what they yield is bounded and checked before anything
    else reads it: at most :data:`~evalnb.lab.bounds.MAX_OBJECT_SAMPLES` samples (an
    endless iterator is refused, not followed), records of JSON's types only (no sets,
    bytes or arbitrary objects; nothing that contains itself), their text within
    :data:`~evalnb.lab.bounds.MAX_RESOLVED_CHARS` characters in all.
    """
    scores = None
    if hasattr(obj, "scores") and hasattr(obj, "dataset"):
        scores = [
            _mapping(s, where.at(i), "a dict of metric values")
            for i, s in enumerate(_bounded(obj.scores, where, "scores"))
        ]
        obj = obj.dataset
    to_list = getattr(obj, "to_list", None)
    if not callable(to_list):
        msg = (
            f"expected a ragas EvaluationDataset or EvaluationResult, a file or a frame; "
            f"got {type(obj).__name__}"
        )
        raise TypeError(msg)
    records = []
    chars = 0
    for i, item in enumerate(_bounded(to_list(), where, "to_list()")):
        record = _mapping(item, where.at(i), "a dict of sample fields")
        for key, value in record.items():
            if not isinstance(key, str):
                raise where.at(i).error(None, "text field names", key)
            problem, size = _not_json(value)
            if problem is not None:
                raise _refused(
                    where.at(i), key, "text, numbers, booleans, None, lists, dicts", problem
                )
            chars += size
        if chars > MAX_RESOLVED_CHARS:
            raise _refused(
                where.at(i),
                None,
                f"at most {MAX_RESOLVED_CHARS:,} characters of text in all",
                f"more by sample {i}",
                "load it from a file (evalnb import --on-disk) or raise EVALNB_MAX_RESOLVED_CHARS",
            )
        records.append(record)
    return records, scores


def _bounded(values: object, where: Where, what: str) -> Iterator[object]:
    """Iterate over what user code returned, refusing more than MAX_OBJECT_SAMPLES items."""
    try:
        items = iter(values)  # type: ignore[call-overload]
    except TypeError:
        raise where.error(what, "a list", values) from None
    for n, item in enumerate(items):
        if n >= MAX_OBJECT_SAMPLES:
            raise _refused(
                where,
                what,
                f"at most {MAX_OBJECT_SAMPLES:,} samples in one object",
                "more (an endless iterator?)",
                "load a larger dataset from a file, or raise EVALNB_MAX_OBJECT_SAMPLES",
            )
        yield item


def _refused(
    where: Where, field: str | None, expected: str, found: str, hint: str = ""
) -> InputError:
    """Build the error for a value already described in words (Where.error describes one)."""
    return InputError(where.source, where.location, field, expected, found, hint)


def _mapping(value: object, where: Where, what: str) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise where.error(None, what, value)
    return dict(value)


def _from_csv(raw: Mapping[str, object], where: Where) -> dict[str, object]:
    """Read back a row of ragas' ``to_csv``: empty cells dropped, structured fields parsed.

    ragas writes every value with ``str()``, so a list or dict field holds a Python literal
    and a text field holds the text as it was. Only the fields ragas defines as lists or
    objects are parsed (a ``response`` of ``'[2, 3, 5]'`` is text); ``user_input`` is a
    conversation only when its literal is a list of messages (``"[URGENT] ..."`` is a prompt).
    """
    rec: dict[str, object] = {}
    for key, value in raw.items():
        if value == "":
            continue
        if isinstance(value, str) and value[:1] in "[{":
            if key in _STRUCTURED:
                value = _literal(value, where, key)
            elif key == "user_input" and value.startswith("[{"):
                turns = _literal(value, where, key, strict=False)
                if isinstance(turns, list) and turns and all(_message(t) for t in turns):
                    value = turns
        rec[key] = value
    return rec


def _message(value: object) -> bool:
    return isinstance(value, dict) and isinstance(value.get("type"), str) and "content" in value


def _literal(value: str, where: Where, key: str, *, strict: bool = True) -> object:
    """Parse a cell ragas wrote with ``str()``: literals only (no code), JSON's types only.

    With ``strict=False`` a cell that is no literal comes back as its text.
    """
    if len(value) > _MAX_LITERAL:
        raise _refused(
            where, key, f"a literal under {_MAX_LITERAL:,} characters", f"{len(value):,}"
        )
    try:
        parsed = ast.literal_eval(value)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        if not strict:
            return value
        raise where.error(
            key, "a Python list or dict literal, as ragas' to_csv writes", value[:80]
        ) from None
    bad, _ = _not_json(parsed)
    if bad is not None:
        raise _refused(
            where,
            key,
            "lists and dicts of text, numbers, booleans and None (what ragas writes)",
            bad,
        )
    return parsed


def _not_json(value: object) -> tuple[str | None, int]:
    """Describe the first part of a value JSON cannot hold, and count its characters.

    Returns ``(None, chars)`` when all of it can. Iterative, with bounds that keep what
    reads the value later safe: at most :data:`_MAX_VALUES` values (shared sub-lists
    expand) and :data:`_MAX_NESTING` levels; a list or dict that contains itself is named,
    not followed; text must be valid Unicode (a Python string may hold a lone surrogate).
    """
    stack: list[tuple[object, int]] = [(value, 0)]  # depth -1 marks leaving a container
    path: set[int] = set()  # the containers being walked: one met again is a cycle
    seen = chars = 0
    while stack:
        item, depth = stack.pop()
        if depth < 0:
            path.discard(id(item))
            continue
        seen += 1
        if seen > _MAX_VALUES:
            return f"more than {_MAX_VALUES:,} values", chars
        if isinstance(item, str):
            chars += len(item)
            try:
                item.encode("utf-8")
            except UnicodeEncodeError as exc:
                return f"text with a lone surrogate at character {exc.start}", chars
        elif item is None or isinstance(item, bool | int):
            continue
        elif isinstance(item, float):
            if not math.isfinite(item):
                return f"the number {item!r}", chars
        elif isinstance(item, list | dict):
            if id(item) in path:
                return f"a {type(item).__name__} that contains itself", chars
            if depth >= _MAX_NESTING:
                return f"values nested more than {_MAX_NESTING} levels deep", chars
            path.add(id(item))
            stack.append((item, -1))
            children = item.values() if isinstance(item, dict) else item
            if isinstance(item, dict):
                for k in item:
                    if not isinstance(k, str):
                        return f"a {type(k).__name__} key {_shown(k)}", chars
                    stack.append((k, depth + 1))  # keys are text too
            stack.extend((v, depth + 1) for v in children)
        else:
            return f"a {type(item).__name__} ({_shown(item)})", chars
    return None, chars


def _shown(value: object) -> str:
    """``repr`` cut to 60 characters, or the type when the object's repr fails."""
    try:
        return repr(value)[:60]
    except Exception:  # user objects' repr may raise anything
        return f"<{type(value).__name__}>"


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
    if csv:
        records = [(w, _from_csv(r, w)) for w, r in records]
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
        key = _sample(raw, where, builder, model)
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
    # ragas' multimodal samples put image paths and URLs among the retrieved contexts.
    contexts, context_media = split_media_contexts(
        [str(c) for c in rec.get("retrieved_contexts") or []],
        where,
        "retrieved_contexts",
        builder,
        base_of(where.source),
    )
    builder.add_output(
        {
            "case_id": case_id,
            "model": name,
            "sample": 0,
            "actual": where.opt_string(rec, "response"),
            "context": contexts,
            "context_media": context_media,
            "extra": to_json(extra),
        },
        where,
        id_field="user_input",
    )
    return case_id, name, 0


def _scores(row: Mapping[str, object], key: tuple[str, str, int], builder: LabBuilder) -> None:
    """One imported score per metric of an EvaluationResult row (ragas' NaN: no value)."""
    for metric, value in row.items():
        number = _number(value)
        detail = None
        if number is None:
            detail = to_json({"reason": f"ragas gave no number: {_shown(value)}"})
        builder.add_imported_score(
            key,
            EVALUATOR,
            str(metric),
            number,
            detail,
            description=f"ragas' {metric}, as its EvaluationResult holds it.",
            spec={"min": 0.0, "max": 1.0, "default_threshold": 0.5},
        )


def _number(value: object) -> float | None:
    """Return a score as a finite float (NumPy's numbers too), or None."""
    if not isinstance(value, numbers.Real):
        return None
    try:
        number = float(value)
    except (OverflowError, ValueError, TypeError):  # 10**400, or a number type that refuses
        return None
    return number if math.isfinite(number) else None


def ragas_records(lab: LabCore, model: str | None = None) -> list[dict[str, Any]]:
    """Return the lab's outputs (of ``model``, else all) as ragas single-turn records.

    Fields as ragas names them; the case's and output's ``extra`` come back as fields. With
    several models and no ``model``, each record also carries ``model`` (ragas ignores it).
    A case no model answered is a sample without a ``response`` (ragas' test sets are such
    samples), so an export loses no case.
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
        rec = _case_record(cases[o["case_id"]])
        if o["context"] is not None and len(o["context"]):
            rec["retrieved_contexts"] = list(o["context"])
        if o["actual"] is not None:
            rec["response"] = o["actual"]
        rec.update(json.loads(o["extra"] or "{}"))
        if several:
            rec["model"] = o["model"]
        out.append(rec)
    answered = set(lab.outputs["case_id"])
    out += [_case_record(c) for k, c in cases.items() if k not in answered]
    return out


def _case_record(case: Mapping[str, Any]) -> dict[str, Any]:
    """Return the fields of a ragas sample that a case holds (its prompt, reference, ...)."""
    rec: dict[str, Any] = {"user_input": case["prompt"]}
    if case["corpus"] is not None and len(case["corpus"]):
        rec["reference_contexts"] = list(case["corpus"])
    if case["expected"] is not None and len(case["expected"]):
        rec["reference"] = case["expected"][0]
    if case["question_type"] is not None:
        rec["synthesizer_name"] = case["question_type"]
    rec.update(json.loads(case["extra"] or "{}"))
    return rec
