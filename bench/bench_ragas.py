"""ragas' judge-free metrics: evalnb's vectorised namesakes against ragas itself.

Usage: .venv/bin/python bench/bench_ragas.py [--pairs 20000] [--runs 3] [--only ids]

Real sentences of ``data/sentences`` (:mod:`bench.real_pairs`), each pair with retrieved
and reference contexts and context ids. Both sides warm, in one process, through their
public APIs and the fastest way a user would call them: ragas' collections metrics through
``abatch_score`` (all pairs in one call), its legacy context metrics through
``single_turn_ascore`` gathered concurrently (what ``ragas.evaluate`` runs, without its
executor's overhead); evalnb through ``evalnb.evaluate(lab, [id]).scores`` on a fresh lab
per run (the lab's loading timed apart and also counted in a second ratio). Every value is
checked equal (1e-9) before a ratio is printed. Then a cold figure: each side in a fresh
process, from a JSONL file to all the scores.

ragas and its dependencies live in ``.venv-peers`` (their pins clash with our dev tools):
the script appends that environment's site-packages to its path when ragas is not importable.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.common import ratios, warm_median, with_peers  # noqa: E402

if not with_peers():  # ragas lives in the peers' environment (scripts/test builds it)
    sys.exit("ragas is not importable and .venv-peers is missing: run scripts/test once")

from ragas import SingleTurnSample  # noqa: E402
from ragas.metrics import (  # noqa: E402
    IDBasedContextPrecision,
    IDBasedContextRecall,
    NonLLMContextPrecisionWithReference,
    NonLLMContextRecall,
)
from ragas.metrics.collections import (  # noqa: E402
    BleuScore,
    CHRFScore,
    ExactMatch,
    NonLLMStringSimilarity,
    RougeScore,
    StringPresence,
)

import evalnb  # noqa: E402
from evalnb_testkit.real_pairs import real_pairs  # noqa: E402

PAIRWISE = [
    ("ragas_bleu", BleuScore),
    ("ragas_chrf", CHRFScore),
    ("ragas_rouge", RougeScore),
    ("ragas_exact_match", ExactMatch),
    ("ragas_string_presence", StringPresence),
    ("ragas_string_similarity", NonLLMStringSimilarity),
]
CONTEXT = [
    ("ragas_context_precision", NonLLMContextPrecisionWithReference),
    ("ragas_context_recall", NonLLMContextRecall),
    ("ragas_id_context_precision", IDBasedContextPrecision),
    ("ragas_id_context_recall", IDBasedContextRecall),
]


def records(n: int) -> list[dict[str, object]]:
    """The pairs as ragas single-turn records (contexts from the same sentences)."""
    rng = random.Random(7)
    cands, refs = real_pairs(n, seed=1)
    pool = [*refs, *cands]
    return [
        {
            "user_input": f"q{i}",
            "response": cands[i],
            "reference": refs[i],
            "retrieved_contexts": [
                rng.choice([refs[i], cands[i], rng.choice(pool)]) for _ in range(3)
            ],
            "reference_contexts": [refs[i], rng.choice(pool)],
            "retrieved_context_ids": [rng.choice("abcdef") for _ in range(3)],
            "reference_context_ids": [rng.choice("abcdef") for _ in range(2)],
        }
        for i in range(n)
    ]


def ragas_values(metric_cls: type, recs: list[dict[str, object]]) -> list[float]:
    metric = metric_cls()
    if hasattr(metric, "abatch_score") and metric_cls in {c for _, c in PAIRWISE}:
        inputs = [{"reference": r["reference"], "response": r["response"]} for r in recs]
        return [m.value for m in asyncio.run(metric.abatch_score(inputs))]
    samples = [SingleTurnSample(**r) for r in recs]

    async def all_rows() -> list[float]:
        return list(await asyncio.gather(*(metric.single_turn_ascore(s) for s in samples)))

    return asyncio.run(all_rows())


def ours(path: Path, evaluator: str) -> tuple[float, float, list[float | None]]:
    loads, runs = [], []
    values: list[float | None] = []
    for _ in range(ARGS.runs):
        start = time.perf_counter()
        lab = evalnb.load(path, model="rag")
        loads.append(time.perf_counter() - start)
        start = time.perf_counter()
        scores = evalnb.evaluate(lab, [evaluator], progress=False).scores
        runs.append(time.perf_counter() - start)
        got = scores.join(lab.cases.select("case_id", "prompt"), on="case_id")
        by = dict(zip(got["prompt"], got["value"], strict=True))
        values = [by[f"q{i}"] for i in range(ARGS.pairs)]
    return statistics.median(runs), statistics.median(loads), values


def same(a: list[float | None], b: list[float]) -> bool:
    for x, y in zip(a, b, strict=True):
        y_nan = y is None or (isinstance(y, float) and math.isnan(y))
        if (x is None) != y_nan or (x is not None and abs(x - y) > 1e-9):
            return False
    return True


COLD_OURS = """
import sys, time, evalnb
start = time.perf_counter()
lab = evalnb.load(sys.argv[1], model="rag")
evalnb.evaluate(lab, sys.argv[2].split(","), progress=False).scores
print(time.perf_counter() - start)
"""
COLD_RAGAS = """
import sys, time, json, asyncio
start = time.perf_counter()
sys.path.append(sys.argv[3])
from bench.bench_ragas import ragas_values, PAIRWISE, CONTEXT
recs = [json.loads(line) for line in open(sys.argv[1])]
for _, cls in PAIRWISE + CONTEXT:
    ragas_values(cls, recs)
print(time.perf_counter() - start)
"""


def main() -> None:
    recs = records(ARGS.pairs)
    path = Path(tempfile.mkdtemp(prefix="evalnb-bench-")) / "ragas.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    warm = recs[:300]
    print(f"{ARGS.pairs:,} real pairs; warm medians of {ARGS.runs} runs; 2 cores")
    print(f"{'metric':30} {'ragas s':>9} {'evalnb s':>9} {'load s':>8}  ratio")
    for evaluator, cls in PAIRWISE + CONTEXT:
        if ARGS.only and evaluator not in ARGS.only.split(","):
            continue
        ragas_values(cls, warm)  # warm both sides
        ours(path, evaluator)
        peer_s, theirs = warm_median(lambda cls=cls: ragas_values(cls, recs), max(1, ARGS.runs - 1))
        ours_s, load_s, values = ours(path, evaluator)
        assert same(values, theirs), f"{evaluator}: values differ from ragas'"  # type: ignore[arg-type]
        print(
            f"{evaluator:30} {peer_s:9.3f} {ours_s:9.3f} {load_s:8.3f}  "
            f"{ratios(peer_s, ours_s, load_s)}"
        )
    if ARGS.only:
        return  # the cold figure is for all of them
    names = ",".join(e for e, _ in PAIRWISE + CONTEXT)
    site = str(next(iter(p for p in sys.path if p.endswith("site-packages") and "peers" in p), ""))
    cold_ours = float(
        subprocess.run(
            [sys.executable, "-c", COLD_OURS, str(path), names],
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
        ).stdout.split()[-1]
    )
    cold_ragas = float(
        subprocess.run(
            [sys.executable, "-c", COLD_RAGAS, str(path), names, site],
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
        ).stdout.split()[-1]
    )
    print(
        f"cold, a fresh process from the JSONL to all {len(PAIRWISE + CONTEXT)} metrics' scores: ragas {cold_ragas:.1f} s, "
        f"evalnb {cold_ours:.1f} s ({cold_ragas / cold_ours:.1f}x)"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--only", default="", help="comma-separated evaluator ids (no cold run)")
    ARGS = parser.parse_args()
    main()
