"""Import and store throughput: evalnb vs plain parsers, one process, printed as ratios.

Usage: .venv/bin/python bench/bench_io.py [--rows N]

evalnb validates every field (with located errors), derives ids and checks duplicates, so it
is expected to be slower than a bare parser; this shows by how much, and what a DuckDB save
and reopen cost.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd
import polars as pl

import evalnb

if TYPE_CHECKING:
    from collections.abc import Callable


def _corpus(path: Path, rows: int) -> None:
    rng = random.Random(0)
    words = ["the", "fee", "rate", "card", "loan", "account", "plan", "term", "cover"]
    with path.open("w", encoding="utf-8") as fh:
        for i in range(rows):
            text = " ".join(random.Random(i // 3).choices(words, k=12))  # one case, 3 models
            rec = {
                "id": f"q{i // 3}",
                "prompt": f"What is {text}?",
                "expected": text,
                "actual": " ".join(rng.choices(words, k=14)),
                "model": f"m{i % 3}",
                "context": [text, " ".join(rng.choices(words, k=20))],
                "duration_s": rng.random(),
                "cost": rng.random() / 100,
            }
            fh.write(json.dumps(rec) + "\n")


def _time(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=150_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "lab.jsonl"
        _corpus(src, args.rows)
        # The generic importer dedupes cases by id: three models share each case.
        ours = _time(lambda: evalnb.load(src))
        lab = evalnb.load(src)
        peers = {
            "polars.read_ndjson": _time(lambda: pl.read_ndjson(src)),
            "pandas.read_json(lines)": _time(lambda: pd.read_json(src, lines=True)),
        }
        save = _time(lambda: lab.save(Path(tmp) / "lab.duckdb"))
        reopen = _time(lambda: evalnb.open(Path(tmp) / "lab.duckdb"))
    print(f"rows: {args.rows:,} ({lab.cases.height:,} cases, {lab.outputs.height:,} outputs)")
    print(f"{'step':<28}{'seconds':>10}{'rows/s':>12}{'ours / peer':>13}")
    print(f"{'evalnb.load (validated)':<28}{ours:>10.3f}{args.rows / ours:>12,.0f}{'':>13}")
    for name, secs in peers.items():
        print(f"{name:<28}{secs:>10.3f}{args.rows / secs:>12,.0f}{ours / secs:>12.1f}x")
    print(f"{'Lab.save (DuckDB)':<28}{save:>10.3f}{args.rows / save:>12,.0f}")
    print(f"{'evalnb.open (DuckDB)':<28}{reopen:>10.3f}{args.rows / reopen:>12,.0f}")


if __name__ == "__main__":
    main()
