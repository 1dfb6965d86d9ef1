"""The Ray Data engine against the local engine, and a scaling model from measured costs.

Usage: .venv/bin/python bench/bench_ray.py [--rows 1000000] [--cpus 2] [--cold-rows 200000]

Both engines score the same lab of distinct texts (bench/many_pairs.py: every answer and
every expected answer different) with BLEU + ROUGE + PII + text matching, through
``evalnb.evaluate`` in one process, each warm: the local engine's kernels compiled, the Ray
cluster (``ray.init(num_cpus=CPUS)``) started and its workers warmed on 2,000 rows. Issue 21's
target on one machine: Ray ≤ 1.5× the local time.

Then, from the costs measured here (the shard write, one worker's scoring rate, the merge
on the driver and the store write), the model of rows/s against workers for 10M and 100M
rows, and where the driver becomes the bottleneck. Last, a cold whole-process figure: the
``evalnb evaluate`` command on a store of ``--cold-rows`` rows, with each engine.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import ray

import evalnb
from bench.bench_million import million_frame
from bench.common import peak_rss_gb
from evalnb.evaluation.base import BLOCK_ROWS
from evalnb.evaluation.catalog import get_evaluator
from evalnb.evaluation.ray_engine import local_order, score_batch
from evalnb.lab.shards import write_shards

EVALUATORS = ["bleu", "rouge", "pii_leakage", "text_matching"]


def timed(fn: object) -> tuple[float, object]:
    start = time.perf_counter()
    out = fn()  # type: ignore[operator]
    return time.perf_counter() - start, out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--cpus", type=int, default=2)
    parser.add_argument("--cold-rows", type=int, default=200_000)
    args = parser.parse_args()
    frame = million_frame(args.rows)
    print(
        f"rows: {args.rows:,} distinct answers ({frame['actual'].n_unique():,} distinct), "
        f"evaluators: {', '.join(EVALUATORS)}"
    )

    ray.init(num_cpus=args.cpus, include_dashboard=False, log_to_driver=False)
    warm = evalnb.load(frame.head(2_000))
    for engine in ("local", "ray"):  # kernels compiled, imports done, Ray workers up
        evalnb.evaluate(warm, EVALUATORS, progress=False, engine=engine)
    # The fixed cost of a Ray run: the same 2,000 rows again, warm.
    fixed_s, _ = timed(lambda: evalnb.evaluate(warm, EVALUATORS, progress=False, engine="ray"))

    lab = evalnb.load(frame)
    local_s, local = timed(lambda: evalnb.evaluate(lab, EVALUATORS, progress=False))
    ray_s, on_ray = timed(lambda: evalnb.evaluate(lab, EVALUATORS, progress=False, engine="ray"))
    same = on_ray.scores.equals(local.scores)  # type: ignore[attr-defined]
    scores = local.scores.height  # type: ignore[attr-defined]
    print("\nlab in memory:")
    print(f"local engine  {local_s:7.1f} s  {args.rows / local_s:>10,.0f} rows/s")
    print(
        f"ray engine    {ray_s:7.1f} s  {args.rows / ray_s:>10,.0f} rows/s   "
        f"ray/local {ray_s / local_s:.2f}x (target ≤ 1.5x)   scores equal: {same}"
    )
    print(f"peak RSS of this process {peak_rss_gb():.1f} GB (both engines and both results)")

    # What the engine spends outside the workers, measured piece by piece.
    rows = lab.rows()
    folder = Path(tempfile.mkdtemp(prefix="evalnb-bench-")) / "shards"
    write_s, _ = timed(lambda: write_shards(rows.with_row_index("_pos"), folder))
    shutil.rmtree(folder.parent)
    # Putting results in order: timed on each evaluator's results reversed, which forces
    # the full sort (Ray's batches rarely align with the local blocks): the worst case.
    keys = rows.select("case_id", "model", "sample")
    classes = [get_evaluator(n) for n in EVALUATORS]
    merge_s = 0.0
    for cls in classes:
        mine = (
            local.scores.filter(pl.col("evaluator") == cls.id)  # type: ignore[attr-defined]
            .join(
                keys.with_row_index("_pos"),
                on=list(keys.columns),
                how="left",
                maintain_order="left",
            )
            .select("_pos", "metric", "value", "detail")
            .reverse()
        )
        merge_s += timed(lambda m=mine, c=cls: local_order(m, c, keys))[0]
    store = Path(tempfile.mkdtemp(prefix="evalnb-bench-")) / "lab.duckdb"
    store_s, _ = timed(lambda: local.save(store))  # type: ignore[attr-defined]
    shutil.rmtree(store.parent)
    # One worker's rate: a batch of the engine's size scored inside a Ray worker, timed
    # there (second call: warm), so the figure is a worker's, threads and all.
    batch = rows.head(BLOCK_ROWS).with_row_index("_pos").to_arrow()
    jobs = [(c, c.resolve({})) for c in classes]
    batch_s = min(ray.get([_timed_batch.remote(batch, jobs) for _ in range(2)]))
    n = args.rows
    score = batch_s / batch.num_rows
    # What is left is per row: results crossing to the driver and becoming frames there.
    transfer = max(ray_s - fixed_s - write_s - merge_s - n * score / args.cpus, 0.0) / n
    print(
        f"\nmeasured costs per million rows ({len(EVALUATORS)} evaluators, "
        f"{scores / n:.0f} scores a row), {fixed_s:.1f} s fixed per run"
    )
    for what, secs in (
        ("row shards written (driver)", write_s / n),
        ("scoring in one Ray worker", score),
        ("results received (driver)", transfer),
        ("results into order (driver)", merge_s / n),
        ("store write, if any (driver)", store_s / n),
    ):
        print(f"  {what:<30} {secs * 1e6:6.1f} s")
    _model(fixed_s, write_s / n + transfer + merge_s / n, score, store_s / n)
    _on_disk(lab, local, fixed_s, score, args.cpus)  # type: ignore[arg-type]
    ray.shutdown()
    _cold(frame.head(args.cold_rows))


@ray.remote
def _timed_batch(batch: object, jobs: object) -> float:
    start = time.perf_counter()
    score_batch(batch, jobs)
    return time.perf_counter() - start


def _model(fixed: float, driver: float, score: float, store: float) -> None:
    """Rows/s against workers: the workers' share shrinks with their number, the driver's does not.

    The driver's work is serial: writing the row shards, receiving the results, putting
    them in order and, for a lab with a store, the DuckDB write of the scores.
    """
    print("\nscaling model: T = fixed + N·driver [+ N·store] + N·score / workers")
    print(
        f"  {'rows':>12} {'workers':>8} {'in memory':>10} {'rows/s':>9} {'with store':>11} "
        f"{'rows/s':>9}  bound by"
    )
    for n in (10_000_000, 100_000_000):
        for workers in (2, 16, 64, 256):
            driver_s, workers_s = n * driver, n * score / workers
            total = fixed + driver_s + workers_s
            stored = total + n * store
            bound = "workers" if workers_s > driver_s else "the driver"
            print(
                f"  {n:>12,} {workers:>8} {total:>9.0f}s {n / total:>9,.0f} {stored:>10.0f}s "
                f"{n / stored:>9,.0f}  {bound}"
            )
    print(
        f"  workers stop paying past {score / driver:.0f}: the driver's serial share caps a "
        f"cluster at {1 / driver:,.0f} rows/s in memory, {1 / (driver + store):,.0f} rows/s "
        "into one DuckDB store"
    )


def _on_disk(lab: evalnb.Lab, local: evalnb.Lab, fixed: float, score: float, cpus: int) -> None:
    """Run the same on a lab kept on disk, where the workers write the scores.

    The driver only reads the answers and writes them as row shards: its serial share, and
    with it the model's cap, is what is left of the run.
    """
    print("\nlab kept on disk (the workers write the scores):")
    folder = Path(tempfile.mkdtemp(prefix="evalnb-bench-"))
    seconds = {}
    for engine in ("local", "ray"):
        store = folder / f"{engine}.duckdb"
        lab.save(store, on_disk=("outputs", "scores"))
        seconds[engine], done = timed(
            lambda s=store, e=engine: evalnb.evaluate(
                evalnb.open(s), EVALUATORS, progress=False, engine=e
            )
        )
        key = ["case_id", "model", "sample", "evaluator", "metric"]
        written = done.scan("scores").collect().sort(key)  # type: ignore[attr-defined]
        same = written.equals(local.scores.sort(key))
        print(f"  lab on disk, {engine:<5} engine {seconds[engine]:7.1f} s   scores equal: {same}")
    shutil.rmtree(folder)
    n = lab.height("outputs")
    driver = max(seconds["ray"] - fixed - n * score / cpus, 0.0) / n
    print(
        f"  on disk the driver's serial share is {driver * 1e6:.1f} s per million rows (the "
        f"rows read and written as shards; the workers write the scores): a cap of "
        f"{1 / driver:,.0f} rows/s"
    )
    for rows, workers in ((10_000_000, 16), (100_000_000, 256)):
        total = fixed + rows * driver + rows * score / workers
        print(
            f"  {rows:>12,} rows on {workers:>3} workers: {total:6.0f} s, {rows / total:,.0f} rows/s"
        )


def _cold(frame: pl.DataFrame) -> None:
    """``evalnb evaluate`` in a fresh process per engine (imports, cluster start included)."""
    folder = Path(tempfile.mkdtemp(prefix="evalnb-bench-"))
    print(f"\ncold whole process: evalnb evaluate on a store of {frame.height:,} rows")
    for engine in ("local", "ray"):
        store = folder / f"{engine}.duckdb"
        evalnb.load(frame).save(store)
        command = [
            sys.executable,
            "-m",
            "evalnb.cli",
            "evaluate",
            str(store),
            *[a for e in EVALUATORS for a in ("-e", e)],
            "--engine",
            engine,
        ]
        seconds, _ = timed(lambda c=command: subprocess.run(c, check=True, capture_output=True))
        print(f"  {engine:<6} {seconds:6.1f} s")
    shutil.rmtree(folder)


if __name__ == "__main__":
    main()
