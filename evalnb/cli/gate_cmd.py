"""``evalnb gate LAB --baseline A --candidate B``: a CI step that allows, rejects or waits.

Exit status: 0 allow (the candidate is better, or with ``--margin`` not worse by more than
the margin on every metric), 1 reject (a metric or guardrail is worse), 2 inconclusive (the
run cannot tell: more cases are needed, and the explanation says how small a difference it
could see), 3 the lab could not be read or compared, or the command line is mistyped (the
message says why; never 2, which a CI step reads as "wait"). The
explanation, one screen, goes to standard output. See :mod:`evalnb.analysis.decide`.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from evalnb.analysis.decide import decide
from evalnb.api.lab import open_lab
from evalnb.lab.errors import EvalnbError

if TYPE_CHECKING:
    import argparse

__all__ = ["EXIT", "add_gate_parser", "run_gate"]

EXIT = {"better": 0, "non-inferior": 0, "worse": 1, "inconclusive": 2}


def add_gate_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``gate``: allow (0), reject (1) or inconclusive (2) for a candidate against a baseline."""
    gate = sub.add_parser(
        "gate",
        help="decide a candidate against a baseline on a lab: exit 0 allow, 1 reject, 2 inconclusive",
    )
    gate.add_argument("store", type=Path, help="the LAB.duckdb store (or any file evalnb loads)")
    gate.add_argument("--baseline", required=True, help="the model in production")
    gate.add_argument("--candidate", required=True, help="the model proposed")
    gate.add_argument(
        "--metric",
        action="append",
        help="evaluator.metric to decide on (repeatable; default: every primary metric)",
    )
    gate.add_argument(
        "--margin", type=float, help="a difference that does not matter (metric units)"
    )
    gate.add_argument(
        "--guardrail", action="append", default=[], help="a metric that must not get worse"
    )
    gate.add_argument(
        "--cluster", help="a case column whose cases are not independent ('' for none)"
    )
    gate.add_argument("--alpha", type=float, default=0.05, help="error rate across the comparisons")


def run_gate(args: argparse.Namespace) -> int:
    """Decide and print the explanation; return the exit status (see the module docstring)."""
    try:
        lab = open_lab(args.store)
        decision = decide(
            lab,
            args.baseline,
            args.candidate,
            metrics=args.metric,
            margin=args.margin,
            alpha=args.alpha,
            cluster=args.cluster,
            guardrails=args.guardrail,
        )
    except (EvalnbError, ValueError, KeyError, OSError) as exc:
        print(f"evalnb gate: cannot decide: {exc}", file=sys.stderr)
        return 3
    print(decision.explain())
    return EXIT[decision.verdict]
