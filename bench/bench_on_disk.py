"""A lab kept on disk (Parquet parts) against the same lab kept as DuckDB rows.

Usage: .venv/bin/python bench/bench_on_disk.py [--cases 250000] [--models 4] [--rows 1000000]

Part 1, reading: the eye's lab of bench_eye.py (1M outputs, 10M scores) is saved twice,
as DuckDB rows and with ``on_disk=("outputs", "scores")``. A fresh process per form and
per task opens the store and runs the task (open, leaderboard, problems, the eye), so each
peak RSS is that task's alone, lab included. The on-disk runs have a memory budget of
zero: a table loaded whole would raise, so their figures are for reading from disk only.

Part 2, scoring: ``--rows`` distinct answers (bench_million.py's), ROUGE + BLEU through
``evalnb.evaluate``, on a store of each form, each in a fresh process.

There is no peer tool that keeps an evaluation lab on disk; the comparison is evalnb's two
forms, in ratios, in this one run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import evalnb
from bench.bench_eye import build
from bench.bench_million import million_frame
from bench.common import peak_rss_gb

ON_DISK = ("outputs", "scores")
TASKS = ("open", "leaderboard", "problems", "eye")


def child(task: str, store: str) -> dict[str, float]:
    """Run one task on the store in this (fresh) process; return seconds and peak RSS."""
    start = time.perf_counter()
    lab = evalnb.open(store)
    if task == "leaderboard":
        lab.leaderboard()
    elif task == "problems":
        lab.problems()
    elif task == "eye":
        lab.eye()
    elif task == "evaluate":
        evalnb.evaluate(lab, ["rouge", "bleu"], progress=False)
    return {"seconds": time.perf_counter() - start, "peak_gb": peak_rss_gb()}


def run_child(task: str, store: Path, *, on_disk: bool) -> dict[str, float]:
    env = {**os.environ}
    if on_disk:  # nothing may be loaded whole: the figures are the on-disk path's
        env["EVALNB_MEMORY_BUDGET_GB"] = "0"
    done = subprocess.run(
        [sys.executable, __file__, "--child", task, str(store)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def compare(tasks: tuple[str, ...], rows: Path, disk: Path) -> None:
    print(
        f"{'task':<12} {'rows s':>8} {'disk s':>8} {'ratio':>6} {'rows GB':>8} {'disk GB':>8} "
        f"{'ratio':>6}"
    )
    for task in tasks:
        a, b = run_child(task, rows, on_disk=False), run_child(task, disk, on_disk=True)
        print(
            f"{task:<12} {a['seconds']:>8.1f} {b['seconds']:>8.1f} "
            f"{b['seconds'] / a['seconds']:>5.2f}× {a['peak_gb']:>8.2f} {b['peak_gb']:>8.2f} "
            f"{b['peak_gb'] / a['peak_gb']:>5.2f}×"
        )


def folder_gb(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 2**30


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=250_000)
    parser.add_argument("--models", type=int, default=4)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--child", nargs=2, metavar=("TASK", "STORE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(*args.child)))
        return
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        lab = build(args.cases, args.models)
        n_out, n_scores = lab.outputs.height, lab.scores.height
        start = time.perf_counter()
        lab.save(folder / "rows.duckdb")
        as_rows = time.perf_counter() - start
        start = time.perf_counter()
        lab.save(folder / "disk.duckdb", on_disk=ON_DISK)
        as_parts = time.perf_counter() - start
        in_memory = (lab.scores.estimated_size() + lab.outputs.estimated_size()) / 2**30
        del lab
        print(f"reading: {n_out:,} outputs, {n_scores:,} scores ({in_memory:.2f} GB in memory)")
        print(
            f"  saved as DuckDB rows in {as_rows:.1f} s "
            f"({(folder / 'rows.duckdb').stat().st_size / 2**30:.2f} GB); as parts in "
            f"{as_parts:.1f} s ({folder_gb(folder / 'disk.duckdb.parts'):.2f} GB of Parquet)"
        )
        compare(TASKS, folder / "rows.duckdb", folder / "disk.duckdb")

        scored = evalnb.load(million_frame(args.rows))
        scored.save(folder / "s_rows.duckdb")
        scored.save(folder / "s_disk.duckdb", on_disk=ON_DISK)
        del scored
        print(f"scoring: {args.rows:,} distinct answers, ROUGE + BLEU, written to the store")
        compare(("evaluate",), folder / "s_rows.duckdb", folder / "s_disk.duckdb")


if __name__ == "__main__":
    main()
