"""H2O Eval Studio test suites and test labs."""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalnb.io.fields import MAX_SAMPLE, Where, json_or_none, to_json

if TYPE_CHECKING:
    from collections.abc import Mapping

    from evalnb.io.builder import LabBuilder

__all__ = ["internal_error", "read_h2o_lab", "read_h2o_suite"]

_SUITE_CASE_KEYS = {
    "key",
    "prompt",
    "categories",
    "relationships",
    "constraints",
    "condition",
    "expected_output",
}
# Row keys of a test lab; the `evalnb` ones are ours, written by the exporter so that fields
# H2O has no slot for survive an export and re-import.
_ROW_KEYS = {
    "key",
    "test_case_key",
    "test_key",
    "input",
    "corpus",
    "context",
    "categories",
    "relationships",
    "expected_output",
    "output_constraints",
    "output_condition",
    "actual_output",
    "actual_duration",
    "cost",
    "model_key",
    "system",
    "messages",
    "topic",
    "question_type",
    "language",
    "perturbation",
    "perturbation_intensity",
    "sample",
    "reasoning",
    "error",
}
_SUITE_KEYS = {"name", "description", "tests"}
_LAB_KEYS = {"name", "description", "raw_dataset", "dataset", "models", "llm_model_names"}
_ERROR_MARKERS = ("MODEL HOST INTERNAL ERROR", "INTERNAL ERROR", "LLM HOST INTERNAL ERROR")
_PERTURBED_BY = "perturbed_by:"


def internal_error(actual: str) -> str | None:
    """H2O's rule for an answer that is really a host failure; returns its first line."""
    if actual and (_ERROR_MARKERS[0] in actual or actual.startswith(_ERROR_MARKERS[1:])):
        return actual.strip().splitlines()[0]
    return None


def _perturbation(
    categories: list[str], relationships: list[Mapping[str, object]]
) -> tuple[str | None, str | None, str | None]:
    """(original key, perturbator, intensity) from H2O's relationships and categories."""
    original = next(
        (
            str(r.get("target"))
            for r in relationships
            if r.get("type") == "perturbation_source" and isinstance(r.get("target"), str)
        ),
        None,
    )
    name = intensity = None
    for cat in categories:
        if cat.startswith(_PERTURBED_BY):
            name, _, intensity = cat[len(_PERTURBED_BY) :].rpartition(":")
            if not name:
                name, intensity = intensity, None
    return original, name, intensity


def _relationships(where: Where, obj: Mapping[str, object]) -> list[Mapping[str, object]]:
    if obj.get("relationships") is None:
        return []
    return where.records(obj, "relationships")


def _header(
    doc: object, where: Where, builder: LabBuilder, fmt: str, expected: str
) -> Mapping[str, object]:
    """Check the root object and record the document's format, name and description."""
    root = where.record(doc, expected)
    builder.info["format"] = fmt
    for key in ("name", "description"):
        if key in root:
            builder.info[key] = where.string(root, key)
    return root


def read_h2o_suite(doc: object, where: Where, builder: LabBuilder) -> None:
    """Add the test cases of an H2O test suite JSON document (no outputs)."""
    root = _header(doc, where, builder, "h2o_suite", "a test suite object with a 'tests' list")
    builder.info["extra"] = {k: v for k, v in root.items() if k not in _SUITE_KEYS}
    tests_meta: dict[str, object] = {}
    for i, test in enumerate(where.records(root, "tests")):
        tw = where.at("tests").at(i)
        test_id = tw.string(test, "key") or f"test-{i}"
        documents = tw.strings(test, "documents")
        tests_meta[test_id] = {k: v for k, v in test.items() if k not in {"test_cases", "key"}}
        for j, tc in enumerate(tw.records(test, "test_cases")):
            cw = tw.at("test_cases").at(j)
            relationships = _relationships(cw, tc)
            categories = cw.strings(tc, "categories", wrap=True)
            original, name, intensity = _perturbation(categories, relationships)
            expected = cw.string(tc, "expected_output")
            case = {
                "case_id": cw.string(tc, "key"),
                "test_id": test_id,
                "prompt": cw.string(tc, "prompt", required=True),
                "expected": [expected] if expected else [],
                "condition": cw.opt_string(tc, "condition") or None,
                "constraints": json_or_none(tc.get("constraints")),
                "categories": categories,
                "corpus": documents,
                "perturbation_of": original,
                "perturbation": name,
                "perturbation_intensity": intensity,
                "extra": to_json(_extra(tc, _SUITE_CASE_KEYS, relationships, original)),
            }
            builder.add_case(case, cw, id_field="key")
    builder.info["h2o_tests"] = tests_meta


def _extra(
    obj: Mapping[str, object],
    known: set[str],
    relationships: list[Mapping[str, object]],
    original: str | None,
) -> dict[str, object]:
    extra = {k: v for k, v in obj.items() if k not in known}
    # Relationships other than the one perturbation link we map are kept verbatim.
    if relationships and not (len(relationships) == 1 and original is not None):
        extra["relationships"] = list(relationships)
    return extra


def _model_names(models: list[Mapping[str, object]], where: Where) -> dict[str, str]:
    """Map model keys to the names users know: the LLM name when it is unique."""
    keys: list[str] = []
    for i, model in enumerate(models):
        mw = where.at("models").at(i)
        key = mw.string(model, "key", required=True)
        if key in keys:
            msg = "key"
            raise mw.error(msg, "a key unique among the models", key)
        keys.append(key)
        mw.string(model, "llm_model_name")
        mw.string(model, "name")
    for field in ("llm_model_name", "name"):
        names = [str(m.get(field) or "") for m in models]
        if all(names) and len(set(names)) == len(names):
            return dict(zip(keys, names, strict=True))
    return {k: k for k in keys}


def read_h2o_lab(doc: object, where: Where, builder: LabBuilder) -> None:
    """Add the cases, models and outputs of an H2O test lab JSON document."""
    root = _header(doc, where, builder, "h2o_lab", "a test lab with 'dataset' or 'raw_dataset'")
    models = where.records(root, "models") if root.get("models") is not None else []
    names = _model_names(models, where)
    for model in models:
        key = str(model["key"])
        builder.add_model(names[key], key, to_json(model))
    builder.info["llm_model_names"] = where.strings(root, "llm_model_names")
    builder.info["extra"] = {k: v for k, v in root.items() if k not in _LAB_KEYS}
    for part in ("raw_dataset", "dataset"):
        if root.get(part) is None:
            continue
        pw = where.at(part)
        section = pw.record(root[part])
        for i, row in enumerate(pw.records(section, "inputs")):
            _read_row(row, pw.at("inputs").at(i), builder, names, answered=part == "dataset")


def _read_row(
    row: Mapping[str, object],
    where: Where,
    builder: LabBuilder,
    names: dict[str, str],
    *,
    answered: bool,
) -> None:
    relationships = _relationships(where, row)
    categories = where.strings(row, "categories", wrap=True)
    original, name, intensity = _perturbation(categories, relationships)
    expected = where.string(row, "expected_output")
    constraints = row.get("output_constraints")
    messages = row.get("messages")
    case = {
        "case_id": where.string(row, "test_case_key") or where.string(row, "key"),
        "test_id": where.string(row, "test_key"),
        "prompt": where.string(row, "input", required=True),
        "messages": None if messages is None else to_json(messages),
        "system": where.opt_string(row, "system"),
        "expected": [expected] if expected else [],
        "condition": where.opt_string(row, "output_condition") or None,
        "constraints": json_or_none(constraints),
        "categories": categories,
        "topic": where.opt_string(row, "topic"),
        "question_type": where.opt_string(row, "question_type"),
        "language": where.opt_string(row, "language"),
        "corpus": where.strings(row, "corpus"),
        "perturbation_of": original,
        "perturbation": where.opt_string(row, "perturbation") or name,
        "perturbation_intensity": where.opt_string(row, "perturbation_intensity") or intensity,
        "extra": to_json(_extra({}, set(), relationships, original)),
    }
    id_field = "test_case_key" if row.get("test_case_key") else "key"
    case_id = builder.add_case(case, where, id_field=id_field)
    model_key = where.string(row, "model_key")
    if model_key and model_key not in names:
        msg = "model_key"
        raise where.error(msg, f"one of the keys in $.models ({sorted(names)[:5]})", model_key)
    actual = where.string(row, "actual_output")
    if answered and actual and not model_key:
        msg = "model_key"
        raise where.error(msg, "the key of the model that gave actual_output", None)
    if not answered or not model_key:
        return
    sample = row.get("sample", 0)
    if isinstance(sample, bool) or not isinstance(sample, int) or not 0 <= sample <= MAX_SAMPLE:
        msg = "sample"
        raise where.error(msg, "a non-negative integer below 2**63", sample)
    builder.add_output(
        {
            "case_id": case_id,
            "model": names[model_key],
            "sample": sample,
            "actual": actual,
            "reasoning": where.opt_string(row, "reasoning"),
            "context": where.strings(row, "context"),
            "duration_s": where.number(row, "actual_duration"),
            "cost": where.number(row, "cost"),
            "error": where.opt_string(row, "error") or internal_error(actual),
            "extra": to_json({k: v for k, v in row.items() if k not in _ROW_KEYS}),
        },
        where,
        id_field="model_key",
    )
