"""``evalnb harpia``: HarpIA Lab's headless metric run.

Reads a HarpIA input JSON, runs each enabled metric (an evalnb evaluator id, with its
parameters) over all instances, and writes one output object per metric (id, parameters,
aggregated ``score``, ``elapsed time``) plus a JSONL log with one line per (instance,
metric). Everything is validated before anything runs: an unknown metric or a bad
parameter writes nothing.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

import polars as pl

from evalnb.cli.harbor_metric import write_json_atomic
from evalnb.evaluation.catalog import get_evaluator
from evalnb.evaluation.engine import evaluate
from evalnb.io.load import load
from evalnb.lab.files import write_atomic

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["run_harpia"]


def run_harpia(
    input_path: Path, output_path: Path, log_path: Path | None = None
) -> list[dict[str, object]]:
    """Run a HarpIA input file; returns the output objects it wrote."""
    lab = load(input_path, format="harpia")
    listed = lab.info.get("harpia_metrics", [])
    requested: list[dict[str, Any]] = (
        [m for m in listed if m["enable"]] if isinstance(listed, list) else []
    )
    for metric in requested:  # validate all before running any
        cls = get_evaluator(str(metric["id"]))
        cls.resolve(dict(metric["parameters"]))
    outputs: list[dict[str, object]] = []
    log_lines: list[str] = []
    for metric in requested:
        cls = get_evaluator(str(metric["id"]))
        start = time.perf_counter()
        per_evaluator: dict[str, Any] = {cls.id: dict(metric["parameters"])}
        scored = evaluate(
            lab, [cls.id], progress=False, judge=None, engine="local", **per_evaluator
        )
        elapsed = time.perf_counter() - start
        rows = scored.scores.filter(pl.col("evaluator") == cls.id)
        means = rows.group_by("metric", maintain_order=True).agg(pl.col("value").mean())
        outputs.append(
            {
                "metric": metric["id"],
                "parameters": metric["parameters"],
                "score": dict(means.iter_rows()),
                "elapsed time": elapsed,
            }
        )
        wide = rows.pivot(on="metric", index="case_id", values="value")
        for record in wide.iter_rows(named=True):
            instance = record.pop("case_id")
            log_lines.append(
                json.dumps(
                    {
                        "instance_id": instance,
                        "metric": metric["id"],
                        "parameters": metric["parameters"],
                        "result": record,
                    }
                )
            )
    write_json_atomic(output_path, outputs)
    if log_path is not None:
        write_atomic(log_path, "".join(line + "\n" for line in log_lines))
    return outputs
