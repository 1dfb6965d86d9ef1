"""Export a lab as an H2O Eval Studio test lab JSON document."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evalnb.lab.core import LabCore

__all__ = ["h2o_lab_document"]


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


def _case_fields(case: dict[str, Any]) -> dict[str, Any]:
    extra: dict[str, Any] = json.loads(case["extra"] or "{}")
    relationships = extra.pop("relationships", None)
    if relationships is None:
        relationships = (
            []
            if case["perturbation_of"] is None
            else [
                {
                    "type": "perturbation_source",
                    "target": case["perturbation_of"],
                    "target_type": "test_case",
                }
            ]
        )
    fields: dict[str, Any] = {
        "key": case["case_id"],
        "input": case["prompt"],
        "corpus": list(case["corpus"]),
        "categories": list(case["categories"]),
        "relationships": relationships,
        "expected_output": case["expected"][0] if len(case["expected"]) else "",
    }
    if case["test_id"]:
        fields["test_key"] = case["test_id"]
    if case["constraints"] is not None:
        fields["output_constraints"] = json.loads(case["constraints"])
    if case["condition"] is not None:
        fields["output_condition"] = case["condition"]
    if case["messages"] is not None:
        fields["messages"] = json.loads(case["messages"])
    for name in ("system", "topic", "question_type", "perturbation", "perturbation_intensity"):
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
    doc: dict[str, Any] = {}
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
