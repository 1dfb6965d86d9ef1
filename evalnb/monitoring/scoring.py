"""Scoring live requests with a calibration bundle's evaluators, parameters and thresholds.

The bundle says which evaluators at which version and with which scoring parameters made the
scores its thresholds were calibrated on; a monitor scores traffic with exactly those,
through the same engine as :func:`evalnb.evaluate`, and refuses a bundle whose evaluator no
longer exists here, or exists at another version, or whose parameters it no longer takes.
"""

from __future__ import annotations

import hashlib
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import polars as pl

from evalnb.calibration.bundle_check import bundle_hash
from evalnb.evaluation.catalog import get_evaluator
from evalnb.evaluation.engine import NothingScoredWarning, evaluate
from evalnb.lab.core import LabCore
from evalnb.lab.errors import InputError
from evalnb.lab.verdicts import passes

if TYPE_CHECKING:
    from evalnb.llm.client import LLMClient

__all__ = ["SCORES", "BundleSpec", "quiet_evaluate", "requests_lab", "score_requests"]

SCORES = pl.Schema(
    {
        "trace_id": pl.String(),
        "evaluator": pl.String(),
        "metric": pl.String(),
        "value": pl.Float64(),
        "passed": pl.Boolean(),
        "detail": pl.String(),
        "bundle_hash": pl.String(),
    }
)


@dataclass(frozen=True)
class BundleSpec:
    """What a monitor applies: evaluators with parameters, thresholds, accepted pass rates."""

    bundle: dict[str, Any]
    hash: str
    evaluators: dict[str, dict[str, Any]]
    metrics: pl.DataFrame
    """evaluator, metric, threshold, higher_is_better, accepted."""
    judges: frozenset[str]

    @classmethod
    def of(cls, bundle: dict[str, Any], where: str) -> BundleSpec:
        """Check ``bundle`` against the evaluators installed here; see the module docstring."""
        if bundle.get("version", 1) < 2 or "evaluators" not in bundle:
            raise InputError(
                where,
                "$.version",
                "version",
                "a calibration bundle of version 2 (it names its evaluators' versions)",
                repr(bundle.get("version")),
                "Export it again with lab.calibration.export(path) in this evalnb",
            )
        evaluators: dict[str, dict[str, Any]] = {}
        judges = set()
        for i, record in enumerate(bundle["evaluators"]):
            ev = record["id"]
            at = f"$.evaluators[{i}]"
            try:
                cls_ = get_evaluator(ev)
            except ValueError:
                raise InputError(
                    where,
                    at,
                    "id",
                    "an evaluator this evalnb has",
                    repr(ev),
                    "Monitor with the evalnb that made the bundle, or recalibrate; a user "
                    "evaluator (@evalnb.evaluator) is found once its module is imported, or "
                    "installed with an 'evalnb.evaluators' entry point",
                ) from None
            if cls_.version != record["version"]:
                raise InputError(
                    where,
                    f"{at}.version",
                    "version",
                    f"{ev} at version {cls_.version} (the version installed here)",
                    repr(record["version"]),
                    "Its scores would differ from those the thresholds were calibrated on: "
                    "recalibrate with this evalnb, or monitor with the one that made it",
                )
            try:
                cls_.resolve(record["params"])
            except (TypeError, ValueError) as err:
                raise InputError(
                    where, f"{at}.params", "params", f"parameters {ev} takes", str(err)[:200]
                ) from None
            evaluators[ev] = dict(record["params"])
            if cls_.judge:
                judges.add(ev)
        rows = [
            {
                "evaluator": m["evaluator"],
                "metric": m["metric"],
                "threshold": float(m["threshold"]),
                "higher_is_better": bool(m["higher_is_better"]),
                "accepted": m.get("accepted"),
                "lab_pass_rate": m.get("lab_pass_rate"),
            }
            for m in bundle["metrics"]
        ]
        if not rows:
            raise InputError(
                where,
                "$.metrics",
                "metrics",
                "at least one calibrated metric (a bundle with none monitors nothing)",
                "[]",
                "Calibrate a threshold (lab.calibration.recalibrate) before lab.calibration.export",
            )
        for i, row in enumerate(rows):
            if row["evaluator"] not in evaluators:
                continue  # said below, with every evaluator missing
            known = {spec.key for spec in get_evaluator(row["evaluator"]).metrics}
            if row["metric"] not in known:
                raise InputError(
                    where,
                    f"$.metrics[{i}].metric",
                    "metric",
                    f"a metric {row['evaluator']} produces ({', '.join(sorted(known))})",
                    repr(row["metric"]),
                    "No score would ever reach it: export the bundle again from the lab",
                )
        missing = sorted({r["evaluator"] for r in rows} - set(evaluators))
        if missing:
            raise InputError(where, "$.evaluators", "evaluators", f"a record of {missing}", "none")
        metrics = pl.DataFrame(
            rows,
            schema={
                "evaluator": pl.String(),
                "metric": pl.String(),
                "threshold": pl.Float64(),
                "higher_is_better": pl.Boolean(),
                "accepted": pl.Float64(),
                "lab_pass_rate": pl.Float64(),
            },
        )
        return cls(bundle, bundle_hash(bundle), evaluators, metrics, frozenset(judges))


def requests_lab(requests: pl.DataFrame) -> LabCore:
    """Return a lab of requests: a case per trace (its id the case id), one answer each."""
    return LabCore(
        {
            "cases": requests.select(
                pl.col("trace_id").alias("case_id"), "prompt", "expected", "condition"
            ),
            "outputs": requests.select(
                pl.col("trace_id").alias("case_id"),
                "model",
                pl.lit(0, dtype=pl.Int64).alias("sample"),
                "actual",
                "context",
                "error",
            ),
        }
    )


def quiet_evaluate(lab: LabCore, names: list[str], **options: Any) -> LabCore:  # noqa: ANN401
    """Run ``evaluate`` without its nothing-scored warning: a monitor reports the unscored share.

    Traffic often lacks what a metric needs (no expected answer for ROUGE): every batch would
    warn, while ``Monitor.windows`` says per window which share went unscored.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NothingScoredWarning)
        return evaluate(lab, names, progress=False, **options)


def judged(trace_ids: pl.Series, rate: float) -> pl.Series:
    """Whether each trace is in the judges' sample: a stable hash of its id below ``rate``."""

    def share(trace: str) -> float:
        digest = hashlib.sha256(trace.encode()).digest()
        return int.from_bytes(digest[:8], "big") / 2**64

    return trace_ids.map_elements(lambda t: share(t) < rate, return_dtype=pl.Boolean)


def score_requests(
    requests: pl.DataFrame,
    spec: BundleSpec,
    *,
    judge: LLMClient | None = None,
    judge_rate: float = 0.0,
) -> pl.DataFrame:
    """Score requests with the bundle's evaluators; one row per (trace, calibrated metric).

    A judge evaluator scores only the share ``judge_rate`` of the traces (a stable sample by
    trace id), and only with a ``judge``; without one it is left out.
    """
    if not requests.height:
        return pl.DataFrame(schema=SCORES)
    lab = requests_lab(requests)
    plain = [ev for ev in spec.evaluators if ev not in spec.judges]
    parts = []
    if plain:
        params: dict[str, Any] = {ev: spec.evaluators[ev] for ev in plain}
        scored = quiet_evaluate(lab, plain, **params)
        parts.append(scored.scores)
    if judge is not None and judge_rate > 0 and spec.judges:
        chosen = requests.filter(judged(requests.get_column("trace_id"), judge_rate))
        if chosen.height:
            sub = LabCore(
                {
                    "cases": lab.cases.filter(
                        pl.col("case_id").is_in(chosen["trace_id"].implode())
                    ),
                    "outputs": lab.outputs.filter(
                        pl.col("case_id").is_in(chosen["trace_id"].implode())
                    ),
                }
            )
            names = sorted(spec.judges)
            judged_params: dict[str, Any] = {ev: spec.evaluators[ev] for ev in names}
            scored = quiet_evaluate(sub, names, judge=judge, **judged_params)
            parts.append(scored.scores)
    if not parts:
        return pl.DataFrame(schema=SCORES)
    scores = pl.concat(
        [p.select("case_id", "evaluator", "metric", "value", "detail") for p in parts]
    )
    return (
        scores.join(spec.metrics, on=["evaluator", "metric"], how="inner")
        .select(
            pl.col("case_id").alias("trace_id"),
            "evaluator",
            "metric",
            "value",
            passes(pl.col("value"), pl.col("threshold"), pl.col("higher_is_better")).alias(
                "passed"
            ),
            "detail",
            pl.lit(spec.hash).alias("bundle_hash"),
        )
        .cast(dict(SCORES))  # type: ignore[arg-type]
    )
