"""The retrieval evaluator against ranx and pytrec_eval: judgments per second, warm, one process.

Usage: .venv/bin/python bench/bench_retrieval.py [--queries 10000] [--depth 100] [--runs 3]

A run of ``--queries`` queries with ``--depth`` retrieved documents each (continuous scores:
no ties, so the three tools rank alike) and qrels of 10 graded documents per query. Each
side gets its input ready-made outside the timing (evalnb a loaded lab, ranx its ``Qrels``
and ``Run``, pytrec_eval its ``RelevanceEvaluator`` and run dict) and computes the same five
measures: nDCG@10, MAP, MRR, P@10 and recall@100, each warm (ranx's numba kernels compiled
by a first call), median of ``--runs``. Printed: each side's seconds, judgments (retrieved
query–document pairs) per second, the ratios, and the largest difference of the per-query
values between evalnb and each peer.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import evalnb  # noqa: E402
from bench.common import warm_median  # noqa: E402

OURS = ["ndcg_cut_10", "map", "recip_rank", "P_10", "recall_100"]
RANX = ["ndcg@10", "map", "mrr", "precision@10", "recall@100"]
PYTREC = {"ndcg_cut.10", "map", "recip_rank", "P.10", "recall.100"}


def _data(queries: int, depth: int, seed: int) -> tuple[dict, dict]:
    rng = np.random.default_rng(seed)
    run: dict[str, dict[str, float]] = {}
    qrels: dict[str, dict[str, int]] = {}
    for q in range(queries):
        docs = rng.choice(depth * 5, size=depth, replace=False)
        scores = rng.random(depth)
        run[f"q{q}"] = {f"d{d}": float(s) for d, s in zip(docs, scores, strict=True)}
        judged = rng.choice(depth * 5, size=10, replace=False)
        qrels[f"q{q}"] = {
            f"d{d}": int(g) for d, g in zip(judged, rng.integers(0, 4, 10), strict=True)
        }
    return qrels, run


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    import pytrec_eval  # noqa: PLC0415 - peers load only for the bench
    from ranx import Qrels, Run, evaluate  # noqa: PLC0415

    qrels, run = _data(args.queries, args.depth, 0)
    judgments = args.queries * args.depth
    lab = evalnb.load({"system": run}, qrels=qrels)
    params = {"metrics": {"retrieval": OURS}, "progress": False}
    evalnb.evaluate(
        evalnb.load({"system": dict(list(run.items())[:50])}, qrels=qrels), "retrieval", **params
    )  # type: ignore[arg-type]
    ours_s, scored = warm_median(
        lambda: evalnb.evaluate(lab, "retrieval", **params).scores, args.runs
    )  # type: ignore[arg-type]

    ranx_qrels, ranx_run = Qrels(qrels), Run(run)
    evaluate(ranx_qrels, ranx_run, RANX, make_comparable=True)  # numba compiles here
    ranx_s, _ = warm_median(lambda: evaluate(ranx_qrels, ranx_run, RANX), args.runs)
    per_query = {}
    evaluate(ranx_qrels, ranx_run, RANX, return_mean=False)
    for name in RANX:
        per_query[name] = ranx_run.scores[name]

    judge = pytrec_eval.RelevanceEvaluator(qrels, PYTREC)
    pytrec_s, theirs = warm_median(lambda: judge.evaluate(run), args.runs)

    wide = scored.pivot(on="metric", index="case_id", values="value").sort("case_id")
    ids = wide["case_id"].to_list()
    diff_ranx = max(
        float(np.max(np.abs(wide[o].to_numpy() - np.array([per_query[r][q] for q in ids]))))
        for o, r in zip(OURS, RANX, strict=True)
    )
    diff_pytrec = max(
        float(np.max(np.abs(wide[o].to_numpy() - np.array([theirs[q][o] for q in ids]))))
        for o in OURS
    )
    print(f"{args.queries} queries × {args.depth} retrieved = {judgments:,} judgments, 5 measures")
    for name, seconds in (("evalnb", ours_s), ("ranx", ranx_s), ("pytrec_eval", pytrec_s)):
        print(f"  {name:<12} {seconds:7.3f} s   {judgments / seconds / 1e6:6.2f} M judgments/s")
    print(f"  evalnb vs ranx {ranx_s / ours_s:.2f}×, vs pytrec_eval {pytrec_s / ours_s:.2f}×")
    print(f"  max |evalnb − ranx| {diff_ranx:.1e}, max |evalnb − pytrec_eval| {diff_pytrec:.1e}")
    return 0


if __name__ == "__main__":
    t = time.perf_counter()
    code = main()
    print(f"({time.perf_counter() - t:.0f} s in all)")
    sys.exit(code)
