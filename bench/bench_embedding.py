"""Answer semantic similarity: evalnb's evaluator vs ragas ``SemanticSimilarity`` and raw encode.

Usage: .venv/bin/python bench/bench_embedding.py [--pairs 5000] [--model all-MiniLM-L6-v2]

All three use the same sentence-transformers model, loaded before timing. Measured:
- ragas 0.4 ``SemanticSimilarity`` (embeddings only, no LLM) over every pair with
  ``batch_score`` — the peer;
- ``SentenceTransformer.encode`` of every distinct text in one call plus the cosines — the
  floor any embedding metric has to pay;
- ``evalnb.evaluate(lab, ["answer_similarity"])`` with a cold embedding cache (a fresh
  cache folder), end to end: unique texts, length-sorted batches, per-row cosine.
Prints seconds, the ratios and the largest |Δ| between ragas' and our scores (with
``--precision int8``, also the mean |Δ| from the fp32 scores: the accuracy given up). On a
GPU machine the encoder runs bf16 (sentences/s is printed).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import evalnb
from bench.common import ragas_similarity
from evalnb.models.encoder import get_encoder
from evalnb.models.resolve import resolve_model
from evalnb.text.synthetic import pairs


def main() -> None:
    """Run the comparison and print one line per contender."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=5000)
    parser.add_argument("--model", default="all-MiniLM-L6-v2")
    parser.add_argument(
        "--models",
        type=int,
        default=1,
        help="answers per case (a lab comparing models shares its references)",
    )
    parser.add_argument("--skip-ragas", action="store_true", help="no ragas installed here")
    parser.add_argument(
        "--precision",
        choices=("fp32", "int8"),
        default="fp32",
        help="evalnb's precision (int8: ONNX Runtime on the CPU; raw and ragas stay fp32)",
    )
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    per_model = max(1, args.pairs // args.models)
    cases, refs_once = pairs(per_model, seed=11)
    cands, refs, prompts, models = [], [], [], []
    for k in range(args.models):
        answers = cases if k == 0 else pairs(per_model, seed=11 + k)[0]
        cands += answers
        refs += refs_once
        prompts += [f"q{i}" for i in range(per_model)]
        models += [f"m{k}"] * per_model
    target, _ = resolve_model(args.model)
    texts = list(dict.fromkeys(cands + refs))
    print(
        f"{len(cands)} pairs ({args.models} model(s) per case), {len(texts)} distinct texts, "
        f"model {args.model}"
    )

    from sentence_transformers import SentenceTransformer  # noqa: PLC0415

    raw = SentenceTransformer(target)
    raw.encode(["warm up"])
    start = time.perf_counter()
    vec = raw.encode(texts, batch_size=16, convert_to_numpy=True, normalize_embeddings=True)
    where = {t: i for i, t in enumerate(texts)}
    raw_scores = np.einsum(
        "ij,ij->i", vec[[where[c] for c in cands]], vec[[where[r] for r in refs]]
    )
    t_raw = time.perf_counter() - start

    with tempfile.TemporaryDirectory() as cache:
        os.environ["EVALNB_CACHE_DIR"] = cache
        # Loads the model (and builds the int8 copy, once per model) before the timing.
        get_encoder(args.model, precision=args.precision).encode(["warm up"])
        lab = evalnb.load(
            pl.DataFrame({"prompt": prompts, "model": models, "expected": refs, "actual": cands})
        )
        start = time.perf_counter()
        lab = evalnb.evaluate(
            lab, ["answer_similarity"], model=args.model, precision=args.precision, progress=False
        )
        t_ours = time.perf_counter() - start
    ours_scores = (
        lab.scores.join(lab.cases.select("case_id", "prompt"), on="case_id")
        .with_columns(pl.col("prompt").str.slice(1).cast(pl.Int64).alias("i"))
        .sort("model", "i")["value"]
        .to_numpy()
    )
    print(f"raw encode + cosine       {t_raw:8.2f} s  ({len(texts) / t_raw:,.0f} texts/s)")
    print(
        f"evalnb ({args.precision}) similarity {t_ours:6.2f} s  ({len(texts) / t_ours:,.0f} texts/s)"
        f"  vs raw: {t_ours / t_raw:.2f}×   max |Δ| vs raw {np.abs(ours_scores - raw_scores).max():.2e}"
    )
    if args.precision == "int8":
        loss = np.abs(ours_scores - raw_scores)
        print(
            f"int8 accuracy: |Δ| from fp32 mean {loss.mean():.4f}, "
            f"95th percentile {np.quantile(loss, 0.95):.4f}, max {loss.max():.4f}"
        )
    if args.skip_ragas:
        return
    t_ragas, scores = ragas_similarity(cands, refs, target)
    theirs = np.array(scores, dtype=np.float64)
    print(
        f"ragas SemanticSimilarity  {t_ragas:8.2f} s   ratio ragas/evalnb {t_ragas / t_ours:.1f}×"
        f"   max |Δ| {np.abs(theirs - ours_scores).max():.2e} over {len(theirs)} rows"
    )


if __name__ == "__main__":
    main()
