"""End-to-end scale check: BLEU + ROUGE + PII + text matching through `evalnb.evaluate`.

Usage: .venv/bin/python bench/bench_million.py [--rows 1000000]

Target (issue 3): 1M rows on a 2-core machine in ≤ 30 s and ≤ 2 GB, with distinct texts
(every answer and every expected answer different). Prints seconds for the
load and per evaluator, the total, and the peak resident memory of this process after each.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import evalnb
from bench.common import peak_rss_gb
from bench.many_pairs import many_pairs


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    args = parser.parse_args()
    n = args.rows
    frame = million_frame(n)
    # Warm-up on 2,000 rows: library imports (NLTK for stemming) and compiled kernels load
    # once per process; they are timed apart from the run.
    start = time.perf_counter()
    evalnb.evaluate(evalnb.load(frame.head(2_000)), list(_EVALUATORS), progress=False)
    print(f"rows: {n:,}; warm-up (imports, kernels) {time.perf_counter() - start:.1f} s")
    start = time.perf_counter()
    lab = evalnb.load(frame)
    del frame
    total = time.perf_counter() - start
    print(f"{'load':<16}{total:>8.1f} s   peak RSS {peak_rss_gb():.2f} GB")
    for evaluator in _EVALUATORS:
        start = time.perf_counter()
        lab = evalnb.evaluate(lab, [evaluator], progress=False)
        secs = time.perf_counter() - start
        total += secs
        print(f"{evaluator:<16}{secs:>8.1f} s   peak RSS {peak_rss_gb():.2f} GB")
    print(
        f"{'total':<16}{total:>8.1f} s   peak RSS {peak_rss_gb():.2f} GB   "
        f"score rows {lab.scores.height:,}"
    )


_EVALUATORS = ("text_matching", "pii_leakage", "bleu", "rouge")


def million_frame(n: int) -> pl.DataFrame:
    """``n`` rows of distinct answers and expected answers, each with a text-matching condition.

    Every answer and every expected answer differs (bench/many_pairs.py): nothing can be
    scored once and reused. Built in Polars, so the process's memory is the tool's.
    """
    return (
        many_pairs(n, seed=3)
        .with_row_index("i")
        .select(
            pl.format("c{}", "i").alias("case_id"),
            pl.format("question {}", "i").alias("prompt"),
            pl.concat_list("expected").alias("expected"),
            pl.format('"{}"', pl.col("expected").str.split(" ").list.first()).alias("condition"),
            "actual",
            pl.lit("m").alias("model"),
        )
    )


if __name__ == "__main__":
    main()
