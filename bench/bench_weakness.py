"""Weakness grid latency on a large lab (issue 7: interactive on a 1M-row lab).

Usage: .venv/bin/python bench/bench_weakness.py [--cases 250000] [--models 4]

Same synthetic lab as bench_eye.py (1M outputs by default, topics and question types drawn
at random). Times, in one process, opening the grid (index + every table + Arrow IPC) and
each interaction: selecting a cell (validated, then its rows for `selection()`), switching
the model filter (every table recomputed) and a threshold change (refresh). No peer tool
offers this grid; the figures are checked against the 200 ms interaction target.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench_eye import build, timed

import evalnb


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=250_000)
    parser.add_argument("--models", type=int, default=4)
    args = parser.parse_args()
    lab = build(args.cases, args.models)
    print(f"lab: {lab.outputs.height:,} outputs, {lab.scores.height:,} scores")
    start = time.perf_counter()
    w = evalnb.weakness(lab, "rouge", "rouge_l")
    print(
        f"grid opened (rows joined to topics, all tables, IPC) in {(time.perf_counter() - start) * 1000:.0f} ms"
    )
    steps = [
        (
            "select cell",
            lambda: setattr(w, "selected_cell", ["travel", "procedural"]),
            lambda: setattr(w, "selected_cell", []),
        ),
        ("selection()", lambda: w.selection(), lambda: None),
        ("one model", lambda: setattr(w, "models", ["model-1"]), lambda: setattr(w, "models", [])),
        ("all models", lambda: setattr(w, "models", []), lambda: setattr(w, "models", ["model-1"])),
        (
            "threshold",
            lambda: (lab.set_threshold("rouge", "rouge_l", 0.6), w.refresh()),
            lambda: None,
        ),
    ]
    print(f"{'interaction':<13} {'median ms':>10} {'worst ms':>9}  target < 200 ms")
    for name, step, reset in steps:
        med, worst = timed(step, reset)
        print(f"{name:<13} {med:>10.1f} {worst:>9.1f}  {'ok' if worst < 200 else 'MISSED'}")
    sent = sum(len(getattr(w, t)) for t in ("_cells", "_topics", "_qtypes", "_dots", "_weak"))
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2
    print(f"bytes sent per redraw {sent:,}; peak RSS {rss:.1f} GB")


if __name__ == "__main__":
    main()
