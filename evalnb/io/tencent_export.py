"""Export a lab as a Tencent TI evaluation-only JSONL set."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evalnb.lab.core import LabCore

__all__ = ["tencent_records"]


def _chat(case: dict[str, Any]) -> tuple[list[dict[str, Any]], str | None]:
    """Return the case's messages and the reference answer they do not already carry."""
    if case["messages"] is not None:
        messages: list[dict[str, Any]] = json.loads(case["messages"])
    else:
        messages = [{"role": "system", "content": case["system"]}] if case["system"] else []
        messages.append({"role": "user", "content": case["prompt"]})
    refs = list(case["expected"])
    # A trailing assistant turn is read back as a reference, so it must not be repeated.
    if messages and messages[-1].get("role") == "assistant" and messages[-1]["content"] in refs:
        refs.remove(messages[-1]["content"])
    return messages, (refs[0] if refs else None)


def tencent_records(lab: LabCore) -> list[dict[str, Any]]:
    """Build one evaluation-only record per case.

    Each holds ``id``, ``messages``, ``ref_answer``, the user fields kept in ``extra`` and
    ``model_outputs`` (one entry per model, one response per sample). Fields Tencent has no
    slot for (categories, condition, …) are not written.
    """
    by_case: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for out in lab.outputs.sort("sample", maintain_order=True).iter_rows(named=True):
        response: dict[str, Any] = {"content": out["actual"]}
        if out["reasoning"] is not None:
            response["reasoning_content"] = out["reasoning"]
        for name in ("duration_s", "cost", "error"):
            if out[name] is not None:
                response[name] = out[name]
        response.update(json.loads(out["extra"] or "{}"))
        by_case.setdefault(out["case_id"], {}).setdefault(out["model"], []).append(response)
    records: list[dict[str, Any]] = []
    for case in lab.cases.iter_rows(named=True):
        messages, ref = _chat(case)
        record: dict[str, Any] = {"id": case["case_id"], "messages": messages}
        if ref is not None:
            record["ref_answer"] = ref
        record.update(json.loads(case["extra"] or "{}"))
        models = by_case.get(case["case_id"])
        if models:
            record["model_outputs"] = [{"model_name": m, "responses": r} for m, r in models.items()]
        records.append(record)
    return records
