"""Deciding between two systems in one door: ``from evalnb.decisions import decide, plan``.

The same objects as in :mod:`evalnb.analysis` (nothing is wrapped): :func:`decide` (paired,
clustered, corrected for many metrics, with a margin), :func:`plan` (the cases a comparison
needs, from a pilot), the sequential rule that stops a run once it is settled, and the
paired test and interval they rest on.
"""

from __future__ import annotations

from evalnb.analysis.decide import VERDICTS, Decision, decide
from evalnb.analysis.paired_tests import PairedTest, paired_test, tango_interval
from evalnb.analysis.planning import Plan, plan
from evalnb.analysis.sequential import Sequential, sequential, stream_verdict

__all__ = [
    "VERDICTS",
    "Decision",
    "PairedTest",
    "Plan",
    "Sequential",
    "decide",
    "paired_test",
    "plan",
    "sequential",
    "stream_verdict",
    "tango_interval",
]
