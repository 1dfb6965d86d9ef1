"""The monitoring plan: what ongoing monitoring applies, written for the risk owner's file.

The MRM workflow hands it over beside the calibration bundle (``Workflow.artifacts``): the
bundle's hash, each metric with its threshold and the pass rate accepted at sign-off, the
evaluators at their versions, and the commands that run the monitor.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from evalnb.calibration.bundle_check import bundle_hash

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["monitoring_plan"]


def monitoring_plan(bundle: Mapping[str, Any], bundle_path: str = "calibration.json") -> str:
    """Return the plan (Markdown) of monitoring production with ``bundle``."""
    digest = bundle_hash(bundle)
    lines = [
        "# Ongoing monitoring plan",
        "",
        f"Calibration bundle `{bundle_path}`, hash `{digest[:16]}`, made "
        f"{bundle.get('created_at', '?')} with evalnb {bundle.get('evalnb_version', '?')}.",
        "",
        "## What is applied to live traffic",
        "",
        "| evaluator | metric | threshold | direction | accepted pass rate |",
        "|---|---|---|---|---|",
    ]
    for m in bundle.get("metrics", []):
        accepted = m.get("accepted")
        lines.append(
            f"| {m['evaluator']} | {m['metric']} | {m['threshold']:.4g} | "
            f"{'higher' if m['higher_is_better'] else 'lower'} is better | "
            f"{'—' if accepted is None else f'{accepted:.3f}'} |"
        )
    lines += [
        "",
        "Evaluators, at the versions and parameters the thresholds were calibrated on:",
        "",
    ]
    lines += [
        f"- `{e['id']}` version {e['version']}, parameters `{e['params']}`"
        for e in bundle.get("evaluators", [])
    ]
    lines += [
        "",
        "## How it runs",
        "",
        "```",
        f"evalnb monitor ingest TRACES_FOLDER --bundle {bundle_path} --store monitor.duckdb "
        "--webhook URL",
        f"evalnb monitor status --bundle {bundle_path} --store monitor.duckdb --every 1d",
        "```",
        "",
        "Each window, reviewers label a random sample (`mon.sample_for_review(per_window=50)`).",
        "An alert is raised when the confidence sequence's upper bound over the latest windows",
        "falls below the accepted pass rate, or when the questions drift from the calibration",
        "lab's (Bonferroni-corrected over the windows); see the evalnb docs, 'Monitor live",
        "traffic', for the guarantees. A bundle whose evaluator version is no longer installed",
        "is refused: recalibrate, then replace this plan.",
        "",
    ]
    return "\n".join(lines)
