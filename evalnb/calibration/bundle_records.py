"""What a calibration bundle records for monitoring (version 2): evaluators, levels, questions.

A monitor (:mod:`evalnb.monitoring`) scores live traffic with the evaluators at the versions
and scoring parameters the thresholds were calibrated on, compares pass rates with the level
accepted at sign-off, and measures drift against a sample of the lab's questions.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import polars as pl

from evalnb.evaluation.base import key_params, key_version

if TYPE_CHECKING:
    from evalnb.lab.core import LabCore

__all__ = [
    "REFERENCE_PROMPTS",
    "accepted_level",
    "check_accepted",
    "evaluator_records",
    "reference_sample",
]

REFERENCE_PROMPTS = 1000


def check_accepted(accepted: object) -> None:
    """Refuse an accepted level that is not a pass rate (one, or one per metric name)."""
    values = accepted.values() if isinstance(accepted, Mapping) else [accepted]
    for value in values:
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
            msg = f"accepted is a pass rate in [0, 1] (one, or one per metric); got {value!r:.40}"
            raise ValueError(msg)


def accepted_level(
    accepted: float | Mapping[str, float] | None, metric: str, corrected: pl.DataFrame
) -> float | None:
    """Return the pass rate a monitor must not fall below: given, else the lowest corrected one."""
    given = accepted.get(metric) if isinstance(accepted, Mapping) else accepted
    if given is not None:
        check_accepted(given)
        return float(given)
    if "corrected" not in corrected.columns:
        return None
    values = corrected.get_column("corrected").drop_nulls().drop_nans()
    return float(values.min()) if values.len() else None  # type: ignore[arg-type]


def evaluator_records(lab: LabCore, evaluators: list[str]) -> list[dict[str, Any]]:
    """Each evaluator with its version and the scoring parameters its scores were made with."""
    from evalnb.evaluation.catalog import get_evaluator  # noqa: PLC0415 - loads the catalog

    out = []
    for ev in dict.fromkeys(evaluators):
        keys = (
            lab.scores.filter(pl.col("evaluator") == ev)
            .group_by("params")
            .len()
            .sort(["len", "params"], descending=True)
        )
        key = keys.item(0, "params") if keys.height else None
        params = key_params(key)
        try:
            current = get_evaluator(ev).version
        except ValueError:  # an object made in a session (ragas.*): no catalog entry
            current = "session"
        # The version the scores were made with, which the thresholds were calibrated on.
        version = key_version(key) or current
        out.append({"id": ev, "version": version, "params": params})
    return out


def reference_sample(
    lab: LabCore, n: int = REFERENCE_PROMPTS, seed: int = 0
) -> dict[str, Any] | None:
    """Return a seeded sample of the lab's questions with their topics (drift's reference)."""
    cases = lab.cases.filter(pl.col("prompt").is_not_null())
    if not cases.height:
        return None
    if cases.height > n:
        cases = cases.sample(n, seed=seed)
    return {
        "prompts": cases.get_column("prompt").to_list(),
        "topics": cases.get_column("topic").to_list(),
    }


def lab_pass_rate(lab: LabCore, ev: str, metric: str, threshold: dict[str, Any]) -> float | None:
    """Return the calibration lab's own pass rate of a metric at its threshold (all models)."""
    values = lab.scores.filter((pl.col("evaluator") == ev) & (pl.col("metric") == metric))[
        "value"
    ].drop_nulls()
    values = values.filter(values.is_finite())
    if not values.len():
        return None
    cut = float(threshold["threshold"])
    passed = values >= cut if threshold["higher_is_better"] else values <= cut
    return float(passed.mean())  # type: ignore[arg-type]
