"""Export a lab as an H2O Eval Studio test lab or test suite JSON document."""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import polars as pl

    from evalnb.lab.core import LabCore

__all__ = ["h2o_lab_document", "h2o_suite_document"]


def _model_meta(lab: LabCore) -> dict[str, dict[str, Any]]:
    metas: dict[str, dict[str, Any]] = {}
    for name, key, meta in lab.model_table.iter_rows():
        metas[name] = json.loads(meta) if meta else {"key": key or name}
    for name in lab.models:
        # Models known only from outputs (non-H2O sources) get a minimal H2O record whose
        # `llm_model_name` gives the same name back on import.
        metas.setdefault(
            name,
            {"key": name, "name": name, "llm_model_name": name, "model_type": "evalnb"},
        )
    return metas


def _relationships(case: dict[str, Any], extra: dict[str, Any]) -> list[dict[str, Any]]:
    """Return a case's H2O relationships: those kept at import, else its perturbation link."""
    kept = extra.pop("relationships", None)
    if kept is not None:
        return list(kept)
    if case["perturbation_of"] is None:
        return []
    return [
        {
            "type": "perturbation_source",
            "target": case["perturbation_of"],
            "target_type": "test_case",
        }
    ]


def _case_fields(case: dict[str, Any]) -> dict[str, Any]:
    extra: dict[str, Any] = json.loads(case["extra"] or "{}")
    relationships = _relationships(case, extra)
    fields: dict[str, Any] = {
        "key": case["case_id"],
        "input": case["prompt"],
        "corpus": list(case["corpus"] or []),
        "categories": list(case["categories"] or []),
        "relationships": relationships,
        "expected_output": case["expected"][0] if case["expected"] else "",
    }
    if case["test_id"]:
        fields["test_key"] = case["test_id"]
    if case["constraints"] is not None:
        fields["output_constraints"] = json.loads(case["constraints"])
    if case["condition"] is not None:
        fields["output_condition"] = case["condition"]
    if case["messages"] is not None:
        fields["messages"] = json.loads(case["messages"])
    names = (
        "system",
        "topic",
        "question_type",
        "language",
        "perturbation",
        "perturbation_intensity",
    )
    for name in names:
        if case[name] is not None:
            fields[name] = case[name]
    fields.update(extra)
    return fields


def h2o_lab_document(lab: LabCore) -> dict[str, Any]:
    """Build the test lab document.

    ``dataset`` holds one row per output. ``raw_dataset`` holds every case once, unanswered
    and with no model, in the lab's case order: so cases without outputs survive the round
    trip and a re-import gives the cases back in the same order.
    """
    metas = _model_meta(lab)
    cases = {c["case_id"]: _case_fields(c) for c in lab.cases.iter_rows(named=True)}
    rows: list[dict[str, Any]] = []
    for out in lab.outputs.iter_rows(named=True):
        row = dict(cases[out["case_id"]])
        row.update(
            {
                "context": list(out["context"]),
                "actual_output": out["actual"],
                "model_key": metas[out["model"]]["key"],
            }
        )
        if out["duration_s"] is not None:
            row["actual_duration"] = out["duration_s"]
        if out["cost"] is not None:
            row["cost"] = out["cost"]
        if out["sample"]:
            row["sample"] = out["sample"]
        for name in ("reasoning", "error"):
            if out[name] is not None:
                row[name] = out[name]
        row.update(json.loads(out["extra"] or "{}"))
        rows.append(row)
    raw = [
        {**fields, "context": [], "actual_output": "", "model_key": ""} for fields in cases.values()
    ]
    info = lab.info
    extra = lab.info.get("extra") if lab.info.get("format") == "h2o_suite" else None
    doc: dict[str, Any] = dict(extra) if isinstance(extra, dict) else {}
    for key in ("name", "description"):
        if key in info:
            doc[key] = info[key]
    doc["raw_dataset"] = {"inputs": raw}
    doc["dataset"] = {"inputs": rows}
    doc["models"] = list(metas.values())
    doc["llm_model_names"] = info.get(
        "llm_model_names", [m.get("llm_model_name", n) for n, m in metas.items()]
    )
    extra = info.get("extra")
    if isinstance(extra, dict):
        doc.update(extra)
    return doc


def _suite_case(case: dict[str, Any]) -> tuple[list[str], dict[str, Any]]:
    """Return the test's documents and the test case of one case of the lab."""
    extra: dict[str, Any] = json.loads(case["extra"] or "{}")
    relationships = _relationships(case, extra)
    # A generated case's corpus holds its chunks' texts; H2O's documents name the files.
    docs = extra.get("docs")
    if isinstance(docs, list) and docs and all(isinstance(d, str) for d in docs):
        documents = list(docs)
    else:
        documents = list(case["corpus"] or [])
    fields: dict[str, Any] = {
        "key": case["case_id"],
        "prompt": case["prompt"],
        "categories": list(case["categories"] or []),
        "expected_output": case["expected"][0] if case["expected"] else "",
    }
    if relationships:
        fields["relationships"] = relationships
    if case["constraints"] is not None:
        fields["constraints"] = json.loads(case["constraints"])
    if case["condition"] is not None:
        fields["condition"] = case["condition"]
    for name in ("topic", "question_type"):  # not H2O's, kept as extra keys it ignores
        if case[name] is not None:
            fields[name] = case[name]
    fields.update(extra)
    return documents, fields


def h2o_suite_document(lab: LabCore, cases: pl.DataFrame | None = None) -> dict[str, Any]:
    """Build an H2O Eval Studio test suite: cases grouped into tests by test id and documents.

    Only cases travel (a suite has no answers): ``cases`` (default the lab's). ``evalnb.load``
    reads the file back with the same case ids, prompts, expected answers, constraints,
    categories and documents.
    """
    tests: dict[tuple[str, tuple[str, ...]], dict[str, Any]] = {}
    for case in (lab.cases if cases is None else cases).iter_rows(named=True):
        documents, fields = _suite_case(case)
        group = (case["test_id"] or "", tuple(documents))
        if group not in tests:
            key = (
                case["test_id"]
                or "test-" + hashlib.sha256(json.dumps(documents).encode()).hexdigest()[:12]
            )
            meta = lab.info.get("h2o_tests")  # a test's other keys, kept at import
            known = meta.get(key, {}) if isinstance(meta, dict) else {}
            tests[group] = {"key": key, **known, "documents": documents, "test_cases": []}
        tests[group]["test_cases"].append(fields)
    extra = lab.info.get("extra") if lab.info.get("format") == "h2o_suite" else None
    doc: dict[str, Any] = dict(extra) if isinstance(extra, dict) else {}
    for key in ("name", "description"):
        if key in lab.info:
            doc[key] = lab.info[key]
    doc["tests"] = list(tests.values())
    return doc
