"""The speed check of CI: the ratios the project promises, in about a minute, failing on a 2× loss.

Usage: .venv/bin/python bench/smoke.py [--runs 5] [--plant 1]

Each check times both sides warm, in this process, through their public APIs, with the
full benches' own functions (``bench_ngram``, ``bench_pipeline``, ``bench_ragas``'s way of
calling ragas), at reduced sizes, ``--runs`` times; the ratio is of the medians. A check
fails when its ratio falls below half the figure it guards (:data:`GUARDED`: measured at
these sizes on the 2-core development machine, listed in ``docs/limits.md``). Ratios, not
seconds: a slow or busy machine slows both sides and passes; a change that halves evalnb's
speed fails. ``scripts/test`` runs it. ``--plant 2`` makes every ``evalnb.evaluate`` call take
twice as long — a planted 2× slowdown, to see the check fail. The ragas comparison runs
where ``.venv-peers`` exists (``scripts/test`` builds it), and says it was skipped otherwise.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import evalnb  # noqa: E402
from bench.bench_bleu_h2o import bleu_frame, nltk_bleu  # noqa: E402
from bench.bench_ngram import bleu_row, rouge_row  # noqa: E402
from bench.common import evalnb_warm, warm_median, with_peers  # noqa: E402
from evalnb_testkit.real_pairs import real_pairs  # noqa: E402

BLEU = "BLEU (the sacrebleu metric) vs a reused sacrebleu.metrics.BLEU"
H2O_BLEU = "H2O's BLEU-1..4 vs NLTK's word_tokenize and sentence_bleu (H2O's loop)"
ROUGE = "ROUGE-1/2/L with stemmer vs a reused rouge_score.RougeScorer"
PIPELINE = "answer_similarity's pipeline vs the Rust tokenizer alone"
RAGAS = "ragas_rouge vs ragas' own RougeScore.abatch_score"
GUARDED = {BLEU: 22.0, H2O_BLEU: 27.0, ROUGE: 68.0, PIPELINE: 0.87, RAGAS: 66.0}
"""Each check's figure at the smoke's sizes; below half of it, the check fails."""

PAIRS = 4_000
H2O_PAIRS = 1_000  # NLTK's side takes about a millisecond a pair


def _plant(times: float) -> None:
    """Make every ``evalnb.evaluate`` call take ``times`` as long: a planted slowdown.

    The call runs once and then waits as long again per extra turn (running it twice would
    not double the time: the second call finds the first's caches warm).
    """
    if times <= 1:
        return
    real = evalnb.evaluate

    @functools.wraps(real)
    def slower(*args: object, **kwargs: object) -> object:
        start = time.perf_counter()
        out = real(*args, **kwargs)  # type: ignore[arg-type]
        time.sleep((time.perf_counter() - start) * (times - 1))
        return out

    evalnb.evaluate = slower  # type: ignore[assignment]


def _ngrams(runs: int) -> dict[str, float]:
    cands, refs = real_pairs(PAIRS)
    bleu_row(cands[:50], refs[:50], 1)  # imports and compiled kernels
    rouge_row(cands[:50], refs[:50], 1)
    _, peer_s, ours_s, _, _ = bleu_row(cands, refs, runs)
    out = {BLEU: peer_s / ours_s}
    _, peer_s, ours_s, _, _ = rouge_row(cands, refs, runs)
    return out | {ROUGE: peer_s / ours_s}


def _h2o_bleu(runs: int) -> dict[str, float]:
    """H2O's BLEU: the compiled Treebank rules against NLTK's own tokenizer in H2O's loop."""
    cands, refs = real_pairs(H2O_PAIRS, seed=7)
    frame = bleu_frame(cands, refs)
    evalnb_warm(frame.head(50), "bleu", 1)
    nltk_bleu(cands[:50], refs[:50])
    peer_s, _ = warm_median(lambda: nltk_bleu(cands, refs), runs)
    ours_s, _, _ = evalnb_warm(frame, "bleu", runs)
    return {H2O_BLEU: peer_s / ours_s}


def _pipeline(runs: int) -> dict[str, float]:
    from bench.bench_pipeline import evaluate_seconds, fast_tokenizer, free_model, lab_of  # noqa: PLC0415 - torch

    cands, refs = real_pairs(PAIRS, seed=5)
    with tempfile.TemporaryDirectory() as work:
        free = free_model(Path(work), 8)  # no layers: the pipeline, not the arithmetic
        evaluate_seconds(lab_of(cands[:20], refs[:20]), free)
        tok = fast_tokenizer(free)
        tok.encode_batch(cands[:500])
        peer, ours = [], []
        for run in range(runs):  # fresh texts each run: the engine caches what it has seen
            mark = f" (run {run})"
            c, r = [x + mark for x in cands], [x + mark for x in refs]
            start = time.perf_counter()
            tok.encode_batch(list(dict.fromkeys(c + r)))
            peer.append(time.perf_counter() - start)
            ours.append(evaluate_seconds(lab_of(c, r), free))
    return {PIPELINE: statistics.median(peer) / statistics.median(ours)}


def _ragas(runs: int) -> dict[str, float]:
    if not with_peers():
        print("ragas: skipped (no .venv-peers here; scripts/test builds it)")
        return {}
    import polars as pl  # noqa: PLC0415
    from ragas.metrics.collections import RougeScore  # noqa: PLC0415 - from .venv-peers

    cands, refs = real_pairs(PAIRS, seed=1)
    inputs = [{"reference": r, "response": c} for c, r in zip(cands, refs, strict=True)]
    metric = RougeScore()
    asyncio.run(metric.abatch_score(inputs[:50]))
    peer_s, _ = warm_median(lambda: asyncio.run(metric.abatch_score(inputs)), runs)
    frame = pl.DataFrame(
        {"prompt": [f"q{i}" for i in range(PAIRS)], "actual": cands, "expected": refs}
    )
    evalnb_warm(frame.head(50), "ragas_rouge", 1)
    ours_s, _, _ = evalnb_warm(frame, "ragas_rouge", runs)
    return {RAGAS: peer_s / ours_s}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--plant", type=int, default=1, help="evalnb.evaluate works this many times"
    )
    args = parser.parse_args()
    _plant(args.plant)
    started = time.perf_counter()
    found = _ngrams(args.runs) | _h2o_bleu(args.runs) | _pipeline(args.runs) | _ragas(args.runs)
    failed = 0
    for name, ratio in found.items():
        floor = GUARDED[name] / 2
        below = ratio < floor
        failed += below
        verdict = "BELOW THE FLOOR" if below else "ok"
        print(f"{name:<72}{ratio:>8.2f}×   figure {GUARDED[name]:g}×, floor {floor:g}×   {verdict}")
    seconds = time.perf_counter() - started
    print(f"speed check: {len(found)} ratios, {failed} below their floor, {seconds:.0f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
