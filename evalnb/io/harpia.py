"""HarpIA Lab input JSON: instances plus the metrics to run."""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalnb.io.fields import Where, to_json

if TYPE_CHECKING:
    from evalnb.io.builder import LabBuilder

__all__ = ["read_harpia"]

_INSTANCE_KEYS = {"id", "input", "actual-output", "expected-output"}


def read_harpia(doc: object, where: Where, builder: LabBuilder, *, model: str) -> None:
    """Add a HarpIA input document: one case and one output (of ``model``) per instance.

    The metric list is kept in ``lab.info["harpia_metrics"]`` so the HarpIA command can run
    exactly what the file asks for.
    """
    root = where.record(doc, "an object with 'instances' and 'metrics' lists")
    builder.info["format"] = "harpia"
    for i, inst in enumerate(where.records(root, "instances")):
        iw = where.at("instances").at(i)
        raw_id = iw.require(inst, "id", "a string or integer id")
        if isinstance(raw_id, bool) or not isinstance(raw_id, str | int) or raw_id == "":
            msg = "id"
            raise iw.error(msg, "a non-empty string or integer id", raw_id)
        case = {
            "case_id": str(raw_id),
            "prompt": iw.string(inst, "input", required=True),
            "expected": iw.strings(inst, "expected-output", wrap=True),
            "extra": to_json({k: v for k, v in inst.items() if k not in _INSTANCE_KEYS}),
        }
        case_id = builder.add_case(case, iw, id_field="id")
        if "actual-output" in inst:
            builder.add_output(
                {
                    "case_id": case_id,
                    "model": model,
                    "actual": iw.string(inst, "actual-output"),
                },
                iw,
                id_field="id",
            )
    metrics: list[dict[str, object]] = []
    for i, metric in enumerate(where.records(root, "metrics")):
        mw = where.at("metrics").at(i)
        enable = metric.get("enable", True)
        if not isinstance(enable, bool):
            msg = "enable"
            raise mw.error(msg, "true or false", enable)
        params = metric.get("parameters", {})
        if params is None:
            params = {}
        if not isinstance(params, dict):
            msg = "parameters"
            raise mw.error(msg, "an object of metric parameters", params)
        metrics.append(
            {"id": mw.string(metric, "id", required=True), "enable": enable, "parameters": params}
        )
    builder.info["harpia_metrics"] = metrics
