"""Soak test of a review queue on PostgreSQL (issue 44): many reviewers, kills and a crash.

Usage: .venv/bin/python bench/bench_review_soak.py [--reviewers 50] [--items 10000]
       [--per-item 3] [--kills 10] [--lease-s 10]

Starts a private server (initdb + pg_ctl: evalnb.team.local_server), publishes ``--items`` rows
with ``per_item`` reviewers each, and runs ``--reviewers`` reviewer processes that take,
label and submit items as fast as they can. Meanwhile it SIGKILLs random reviewers
(``--kills``; each comes back under its name, as a person reopening a notebook would) and
restarts the server once with ``pg_ctl restart -m immediate`` (a crash, to its clients).
Reviewers retry what the server did not answer, with the same idempotency key.

Each reviewer logs a label as acknowledged only after ``submit`` returned. At the end it
checks that every item has exactly ``per_item`` labels from distinct reviewers, that no
acknowledged label is missing and none is doubled, and prints ``next()``'s p50/p95/p99.
Exit status 1 when a guarantee fails.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import random
import signal
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def reviewer(dsn: str, name: str, who: str, log_path: str, seed: int) -> None:
    """Review until the queue is complete; log every ``next`` time and acknowledged label."""
    from evalnb.team.connection import ReviewError, ReviewUnavailable  # noqa: PLC0415
    from evalnb.team.queue import ReviewQueue  # noqa: PLC0415 - in the child process

    rng = random.Random(seed)
    while True:
        try:
            queue = ReviewQueue.open(dsn, name, timeout_s=5)
            break
        except ReviewUnavailable:
            time.sleep(0.3)
    with Path(log_path).open("a", encoding="utf-8") as log:
        while True:
            start = time.perf_counter()
            try:
                item = queue.next(who, wait=2.0)
                log.write(f"N {time.perf_counter() - start:.6f}\n")
                if item is None:
                    if queue.remaining(who).finished:
                        break
                    continue  # items held by others (or by the dead, until expiry)
            except ReviewUnavailable:
                time.sleep(0.3)
                continue
            key = f"{who}:{item.item_id}"
            label = rng.choice(["pass", "fail"])
            while True:
                try:
                    queue.submit(item, label, reviewer=who, key=key)
                    log.write(f"A {key}\n")
                    break
                except ReviewUnavailable:
                    time.sleep(0.3)
                except ReviewError:  # the lease ended and others took the item
                    log.write(f"L {key}\n")
                    break
            log.flush()
    queue.close()


def _publish(dsn: str, items: int, per_item: int, lease_s: float) -> str:
    import polars as pl  # noqa: PLC0415

    import evalnb  # noqa: PLC0415

    frame = pl.DataFrame(
        {
            "prompt": [f"question {i}?" for i in range(items)],
            "expected": [f"the answer {i}" for i in range(items)],
            "actual": [f"the answer {i}" if i % 3 else f"an answer {i}" for i in range(items)],
        }
    )
    lab = evalnb.evaluate(evalnb.load(frame), ["ragas_string_similarity"], progress=False)
    name = f"soak-{os.getpid()}"
    queue = evalnb.review(
        lab,
        dsn,
        name,
        evaluator="ragas_string_similarity",
        metric="ragas_string_similarity",
        per_item=per_item,
        strategy="random",
        lease_s=lease_s,
    )
    queue.close()
    return name


def soak(
    reviewers: int,
    items: int,
    per_item: int,
    kills: int,
    lease_s: float,
    *,
    chaos_s: float = 30.0,
    restart: bool = True,
) -> dict[str, object]:
    """Run the soak on a fresh server; return what was checked and measured."""
    from evalnb.team.local_server import LocalServer  # noqa: PLC0415

    server = LocalServer.start()
    logs = Path(tempfile.mkdtemp(prefix="evalnb-soak-"))
    try:
        dsn = server.dsn()
        name = _publish(dsn, items, per_item, lease_s)
        ctx = mp.get_context("spawn")
        procs: dict[str, mp.process.BaseProcess] = {}

        def launch(who: str, seed: int) -> None:
            procs[who] = ctx.Process(
                target=reviewer, args=(dsn, name, who, str(logs / f"{who}.log"), seed)
            )
            procs[who].start()

        started = time.perf_counter()
        for k in range(reviewers):
            launch(f"r{k:02d}", k)
        rng = random.Random(0)
        # kills spread over the first chaos_s seconds; the crash half-way through them
        kill_at = sorted(rng.uniform(chaos_s / 6, chaos_s) for _ in range(kills))
        restart_at = chaos_s / 2 if restart else None
        killed = 0
        while any(p.is_alive() for p in procs.values()):
            now = time.perf_counter() - started
            if kill_at and now >= kill_at[0]:
                kill_at.pop(0)
                who = rng.choice(sorted(procs))
                if procs[who].is_alive() and procs[who].pid:
                    os.kill(procs[who].pid, signal.SIGKILL)
                    procs[who].join()
                    killed += 1
                    launch(who, 1000 + killed)  # the reviewer reopens their notebook
            if restart_at is not None and now >= restart_at:
                server.restart_immediately()
                restart_at = None
            time.sleep(0.2)
        wall = time.perf_counter() - started
        return _check(dsn, name, logs, per_item, items) | {
            "reviewers": reviewers,
            "killed": killed,
            "server_restarts": 1 if restart else 0,
            "wall_s": round(wall, 1),
        }
    finally:
        server.stop(remove=True)


def _check(dsn: str, name: str, logs: Path, per_item: int, items: int) -> dict[str, object]:
    import numpy as np  # noqa: PLC0415
    import polars as pl  # noqa: PLC0415

    from evalnb.team.queue import ReviewQueue  # noqa: PLC0415

    acked: set[str] = set()
    times: list[float] = []
    for log in logs.glob("*.log"):
        for line in log.read_text(encoding="utf-8").splitlines():
            kind, _, value = line.partition(" ")
            if kind == "A":
                acked.add(value)
            elif kind == "N":
                times.append(float(value))
    with ReviewQueue.open(dsn, name) as queue:
        history = queue.history()
    keys = history.select(pl.format("{}:{}", "reviewer", "item_id").alias("k"))["k"]
    per = history.group_by("item_id").agg(n=pl.len(), distinct=pl.col("reviewer").n_unique())
    ms = np.array(times) * 1000
    return {
        "items": items,
        "items_labelled": per.height,
        "items_exactly_n": int(((per["n"] == per_item) & (per["distinct"] == per_item)).sum()),
        "labels": history.height,
        "acknowledged": len(acked),
        "acknowledged_lost": len(acked - set(keys)),
        "duplicates": history.height - keys.n_unique(),
        "next_calls": len(times),
        "next_ms_p50": round(float(np.percentile(ms, 50)), 2),
        "next_ms_p95": round(float(np.percentile(ms, 95)), 2),
        "next_ms_p99": round(float(np.percentile(ms, 99)), 2),
    }


def main() -> None:
    """Run the soak and print its figures; exit 1 when a guarantee fails."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--reviewers", type=int, default=50)
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--per-item", type=int, default=3)
    parser.add_argument("--kills", type=int, default=10)
    parser.add_argument("--lease-s", type=float, default=10.0)
    parser.add_argument("--chaos-s", type=float, default=30.0, help="kills within these seconds")
    args = parser.parse_args()
    result = soak(
        args.reviewers, args.items, args.per_item, args.kills, args.lease_s, chaos_s=args.chaos_s
    )
    print(json.dumps(result, indent=2))
    ok = (
        result["items_exactly_n"] == args.items
        and result["acknowledged_lost"] == 0
        and result["duplicates"] == 0
    )
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
