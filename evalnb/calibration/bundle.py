"""The calibration bundle: what the reviewers' labels decided, as one versioned, checked file.

``export_calibration`` writes a JSON file (schema-checked, written atomically) and a
Markdown summary beside it: per calibrated metric the threshold in force with its
interval, the agreement with the humans and Cohen's κ before and after, the labels per
reviewer and the corrected pass rates; who approved it; the content hash of the lab it was
made on and the evalnb version. ``load_calibration`` applies the thresholds to another lab
of the same evaluators — a production check — and refuses, naming what is missing, when
that lab does not score the same metrics.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import polars as pl

from evalnb.calibration.alignment import kept_versions, with_versions
from evalnb.calibration.bundle_check import (
    FORMAT,
    VERSION,
    check_calibration,
    seal,
    validate_schema,
)
from evalnb.calibration.bundle_records import (
    accepted_level,
    check_accepted,
    evaluator_records,
    lab_pass_rate,
    reference_sample,
)
from evalnb.calibration.corrected import corrected_leaderboard
from evalnb.calibration.labels import current_labels
from evalnb.calibration.recalibrate import calibrate
from evalnb.lab.errors import InputError
from evalnb.lab.files import read_json, write_atomic
from evalnb.lab.schema import JUDGE_CARD_KEY, SCHEMAS
from evalnb.lab.version import __version__

if TYPE_CHECKING:
    from collections.abc import Mapping

    from evalnb.lab.core import LabCore

__all__ = [
    "apply_calibration",
    "calibration_bundle",
    "export_calibration",
    "load_calibration",
    "read_calibration",
]

L = TypeVar("L", bound="LabCore")


def content_hash(lab: LabCore) -> str:
    """SHA-256 of the lab's cases, answers and scores (order-free), naming what was calibrated."""
    digest = hashlib.sha256()
    for name, keys in (
        ("cases", ["case_id"]),
        ("outputs", ["case_id", "model", "sample"]),
        ("scores", ["case_id", "model", "sample", "evaluator", "metric"]),
    ):
        frame = lab.table(name).sort(keys)
        digest.update(name.encode())
        digest.update(frame.write_json().encode())  # text: the same bytes in any version
    return digest.hexdigest()


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, (int, float)) and value == value else None


def calibration_bundle(
    lab: LabCore,
    *,
    approved_by: str | None = None,
    note: str | None = None,
    accepted: float | Mapping[str, float] | None = None,
) -> dict[str, Any]:
    """Build the bundle of every metric whose threshold in force was calibrated.

    ``accepted``: the pass rate each metric must keep in production (one for all, or per
    metric name); by default the lowest corrected pass rate among the lab's models.
    """
    check_accepted(accepted)
    calibrated = lab.current_thresholds().filter(pl.col("source") == "calibrated")
    metrics = []
    for row in calibrated.iter_rows(named=True):
        ev, metric = row["evaluator"], row["metric"]
        cal = calibrate(lab, ev, metric, n_boot=500)
        votes = current_labels(lab.labels, ev, metric).group_by("reviewer").len().sort("reviewer")
        corrected = corrected_leaderboard(lab, ev, metric)
        metrics.append(
            {
                "evaluator": ev,
                "metric": metric,
                "threshold": float(row["threshold"]),
                "higher_is_better": bool(row["higher_is_better"]),
                "ci": [_number(cal.ci[0]), _number(cal.ci[1])],
                "agreement": _number(cal.agreement),
                "kappa_before": _number(cal.kappa_before),
                "kappa_after": _number(cal.kappa_after),
                "n_labels": cal.n_labels,
                "labels_per_reviewer": dict(votes.iter_rows()),
                "corrected": [
                    {k: _number(v) if isinstance(v, float) else v for k, v in r.items()}
                    for r in corrected.to_dicts()
                ],
                "accepted": accepted_level(accepted, metric, corrected),
                "lab_pass_rate": lab_pass_rate(lab, ev, metric, row),
            }
        )
        if metrics[-1]["accepted"] is None:
            warnings.warn(
                f"no accepted pass rate for {ev}.{metric} (the lab has no corrected pass rate "
                "to default to): a monitor of this bundle cannot raise the labelled pass-rate "
                "alarm, only the uncorrected one against the lab's own rate "
                f"({metrics[-1]['lab_pass_rate']}); pass accepted= to set the level signed off",
                stacklevel=3,
            )
    now = dt.datetime.now(dt.UTC).isoformat()
    bundle = {
        "format": FORMAT,
        "version": VERSION,
        "evalnb_version": __version__,
        "created_at": now,
        "lab": {
            "content_hash": content_hash(lab),
            "cases": lab.cases.height,
            "outputs": lab.outputs.height,
            "name": lab.info.get("name"),
        },
        "approval": {"by": approved_by, "note": note, "at": now} if approved_by else None,
        "metrics": metrics,
        "judges": kept_versions(lab),
    }
    cards = [v for k, v in lab.info.items() if k.startswith(JUDGE_CARD_KEY)]
    if cards:  # what the judges' reliability cards found, signed off with the thresholds
        bundle["judge_cards"] = cards
    used = [m["evaluator"] for m in metrics] + [j["evaluator"] for j in kept_versions(lab)]
    bundle["evaluators"] = evaluator_records(lab, used)
    bundle["reference"] = reference_sample(lab)
    validate_schema(bundle, "the bundle being written")
    return seal(bundle)


def _markdown(bundle: dict[str, Any]) -> str:
    lines = [
        f"# Calibration bundle — {bundle['lab'].get('name') or 'lab'}",
        "",
        f"Made {bundle['created_at']} with evalnb {bundle['evalnb_version']} on lab "
        f"`{bundle['lab']['content_hash'][:16]}` ({bundle['lab']['cases']} cases, "
        f"{bundle['lab']['outputs']} answers).",
        "",
    ]
    approval = bundle["approval"]
    lines += [
        f"Approved by **{approval['by']}** on {approval['at']}"
        + (f": {approval['note']}" if approval.get("note") else "")
        + "."
        if approval
        else "**Not approved.**",
        "",
    ]
    for j in bundle["judges"]:
        lines += [
            f"## Aligned judge: {j['evaluator']} / {j['metric']} (version {j['version_id']})",
            "",
            f"- Cohen's κ with the reviewers on held-out labels {j['kappa_before']:.3f} → "
            f"{j['kappa_after']:.3f}; {len(j['examples'])} graded examples"
            + ("; with grading rules" if j["guidance"] else ""),
            "",
        ]
    for m in bundle["metrics"]:
        ci = m["ci"]
        lines += [
            f"## {m['evaluator']} / {m['metric']}",
            "",
            f"- threshold **{m['threshold']:.4g}** (95 % CI {ci[0]:.4g}–{ci[1]:.4g}), "
            f"{'higher' if m['higher_is_better'] else 'lower'} is better",
            *(
                [f"- accepted pass rate in production: **{m['accepted']:.3f}**"]
                if m.get("accepted") is not None
                else []
            ),
            f"- {m['n_labels']} labels: "
            + ", ".join(f"{r} {n}" for r, n in m["labels_per_reviewer"].items()),
            f"- agreement {m['agreement']:.3f}; Cohen's κ {m['kappa_before']:.3f} before, "
            f"{m['kappa_after']:.3f} after",
        ]
        for r in m["corrected"]:
            if r.get("corrected") is not None:
                lines.append(
                    f"- {r['model']}: corrected pass rate {r['corrected']:.3f} "
                    f"(95 % CI {r['ci_low']:.3f}–{r['ci_high']:.3f}; the metric alone "
                    f"says {r['automatic']:.3f})"
                )
        lines.append("")
    return "\n".join(lines)


def export_calibration(
    lab: LabCore,
    path: str | Path,
    *,
    approved_by: str | None = None,
    note: str | None = None,
    accepted: float | Mapping[str, float] | None = None,
) -> Path:
    """Write the calibration bundle (JSON, schema-checked, and a Markdown summary beside it).

    Per calibrated metric: the threshold with its CI, agreement and κ before and after,
    labels per reviewer, the corrected pass rates and the pass rate accepted in
    production (``accepted``: one for all metrics or one per metric name; by default
    the lowest corrected pass rate among the models); the evaluators with their versions
    and parameters; a sample of the lab's questions (drift's reference); the approval
    (``approved_by``, ``note``), the lab's content hash and the evalnb version. Apply it
    to another lab with :func:`evalnb.load_calibration`, or to live traffic with
    :func:`evalnb.monitor`.
    """
    bundle = calibration_bundle(lab, approved_by=approved_by, note=note, accepted=accepted)
    if not bundle["metrics"] and not bundle["judges"]:
        msg = (
            "nothing calibrated in this lab: recalibrate a metric (lab.calibration.recalibrate) or align a "
            "judge (lab.judges.align) first"
        )
        raise ValueError(msg)
    out = Path(path)
    write_atomic(out, json.dumps(bundle, indent=2, ensure_ascii=False) + "\n")
    write_atomic(out.with_suffix(".md"), _markdown(bundle))
    return out


def read_calibration(path: str | Path) -> dict[str, Any]:
    """Read and check a bundle file, by schema then by value; an error names file and field."""
    bundle: Any = read_json(path, "a JSON calibration bundle")
    return check_calibration(bundle, str(path))


def _in_range(value: float, spec: dict[str, Any]) -> bool:
    low, high = spec.get("min"), spec.get("max")
    return (low is None or value >= low) and (high is None or value <= high)


def apply_calibration(lab: LabCore, bundle: dict[str, Any], source: str) -> LabCore:
    """Store the bundle's thresholds as ``calibrated`` versions in ``lab`` (refused on mismatch)."""
    scored = set(lab.metrics.select("evaluator", "metric").iter_rows())
    wanted = dict.fromkeys(
        (m["evaluator"], m["metric"]) for m in [*bundle["metrics"], *bundle["judges"]]
    )
    missing = [pair for pair in wanted if pair not in scored]
    if missing:
        msg = (
            f"{source}: this lab does not score {missing} that the calibration bundle sets "
            f"thresholds for; it scores {sorted(scored)}. Evaluate them first, or apply a "
            "bundle made for these evaluators"
        )
        raise ValueError(msg)
    specs = {(r["evaluator"], r["metric"]): r for r in lab.metrics.iter_rows(named=True)}
    flipped = [
        (m["evaluator"], m["metric"])
        for m in bundle["metrics"]
        if bool(specs[m["evaluator"], m["metric"]]["higher_is_better"]) != m["higher_is_better"]
    ]
    if flipped:
        msg = f"{source}: {flipped} point the other way in this lab (higher_is_better differs)"
        raise ValueError(msg)
    outside = [
        (m["evaluator"], m["metric"], m["threshold"])
        for m in bundle["metrics"]
        if not _in_range(m["threshold"], specs[m["evaluator"], m["metric"]])
    ]
    if outside:
        ev, metric, value = outside[0]
        spec = specs[ev, metric]
        raise InputError(
            source,
            None,
            "threshold",
            f"a threshold of {ev}/{metric} within [{spec['min']}, {spec['max']}]",
            repr(value),
            "the bundle was made for another metric range",
        )
    now = dt.datetime.now(dt.UTC)
    rows = pl.DataFrame(
        [
            {
                "evaluator": m["evaluator"],
                "metric": m["metric"],
                "threshold": m["threshold"],
                "source": "calibrated",
                "n_labels": m["n_labels"],
                "agreement": m.get("agreement"),
                "ci_low": (m.get("ci") or [None, None])[0],
                "ci_high": (m.get("ci") or [None, None])[1],
                "created_at": now,
            }
            for m in bundle["metrics"]
        ],
        schema=SCHEMAS["thresholds"],
    )
    if rows.height:
        lab.append_rows("thresholds", rows)
    if bundle["judges"]:  # aligned judge versions: ready for lab.judges.apply_version
        lab.replace_tables({"info": with_versions(lab, bundle["judges"])})
    return lab


def load_calibration(path: str | Path, lab: L) -> L:
    """Apply a calibration bundle (``lab.calibration.export``'s file) to ``lab``; return it.

    Its thresholds become the ``calibrated`` versions in force (in the lab's store too).
    Refused, naming them, when ``lab`` does not score the bundle's metrics or one points
    the other way; a file that is not a bundle is an ``InputError`` naming the field.
    """
    apply_calibration(lab, read_calibration(path), str(path))
    return lab
