"""End-to-end scale check: BLEU + ROUGE + PII + text matching through `evalnb.evaluate`.

Usage: .venv/bin/python bench/bench_million.py [--rows 1000000]

Target (issue 3): 1M rows on a 2-core machine in ≤ 30 s and ≤ 2 GB. Prints seconds per
evaluator, the total, and the peak resident memory of this process.
"""

from __future__ import annotations

import argparse
import resource
import time

import polars as pl

import evalnb
from evalnb._synthetic import pairs


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    args = parser.parse_args()
    base_c, base_r = pairs(50_000, seed=3)
    n = args.rows
    cands = [base_c[i % len(base_c)] for i in range(n)]
    refs = [base_r[i % len(base_r)] for i in range(n)]
    frame = pl.DataFrame({
        "case_id": [f"c{i}" for i in range(n)],
        "prompt": [f"question {i}" for i in range(n)],
        "expected": [[r] for r in refs],
        "condition": ['"' + r.split()[0] + '"' for r in refs],
        "actual": cands,
        "model": ["m"] * n,
    })  # fmt: skip
    start = time.perf_counter()
    lab = evalnb.load(frame)
    load_s = time.perf_counter() - start
    print(f"rows: {n:,}; load {load_s:.1f} s")
    total = 0.0
    for evaluator in ("text_matching", "pii_leakage", "bleu", "rouge"):
        start = time.perf_counter()
        lab = evalnb.evaluate(lab, [evaluator], progress=False)
        secs = time.perf_counter() - start
        total += secs
        print(f"{evaluator:<16}{secs:>8.1f} s")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 / 1024
    print(
        f"{'total':<16}{total:>8.1f} s   peak RSS {peak:.2f} GB   score rows {lab.scores.height:,}"
    )


if __name__ == "__main__":
    main()
