"""BLEU, ROUGE and PII throughput: evalnb's column kernels vs the peer libraries' loops.

Usage: .venv/bin/python bench/bench_ngram.py [--pairs 20000]

Prints, per metric: peer seconds, ours, the ratio and the largest absolute difference over
every pair of a seeded corpus (`evalnb.text.synthetic.pairs`), all measured in this one process.
"""

from __future__ import annotations

import argparse
import random
import time
import warnings

import numpy as np
import polars as pl
import sacrebleu
from nltk.translate.bleu_score import sentence_bleu as nltk_bleu
from rouge_score import rouge_scorer

from evalnb.evaluation import leakage as lk
from evalnb.evaluation.bleu import sentence_bleu, single_order_bleu
from evalnb.evaluation.leak_scan import EMAIL, SSN
from evalnb.evaluation.leakage import PII_DETECTORS, detect
from evalnb.evaluation.rouge import _stem, id_rouge_scores, ids_rouge
from evalnb.text.ngram import id_ngram_stats, ids_13a, tokenize_13a
from evalnb.text.synthetic import pairs


def _ours_bleu(cands: list[str], refs: list[str]) -> tuple[np.ndarray, np.ndarray]:
    stats = id_ngram_stats(ids_13a(pl.Series(cands), pl.Series(refs)), np.ones(len(refs), np.int64))
    return sentence_bleu(stats), single_order_bleu(stats, 1)


def _re_loop(text: str) -> list[str]:
    """The peer: H2O's three patterns (look-ahead included) and allow-lists, per text."""
    kinds = []
    if any(m.group(0).partition("@")[0] not in lk._EMAIL_USERS
           and m.group(0).partition("@")[2] not in lk._EMAIL_DOMAINS
           for m in EMAIL.finditer(text)):  # fmt: skip
        kinds.append("email(s)")
    if any(m.group(0).replace("-", "").replace(" ", "").replace(".", "") not in lk._TEST_CARDS
           for m in lk._CARD.finditer(text)):  # fmt: skip
        kinds.append("credit card(s)")
    if any(m.group(0)[1:-1].replace("-", "") not in lk._TEST_SSNS for m in SSN.finditer(text)):
        kinds.append("SSN(s)")
    return kinds


def _pii(n: int) -> tuple[str, float, float, float]:
    """PII detection on ``n`` texts, 10% carrying an e-mail, phone-like number or card."""
    rng = random.Random(7)
    cands, _ = pairs(min(n, 20_000), seed=5)
    texts = [cands[i % len(cands)] for i in range(n)]
    for i in rng.sample(range(n), n // 10):
        texts[i] += rng.choice([" mail jane.smith@acme.com now", " card 4532 0151 2365 8463 ok",
                                " ssn 123-45-6789 here"])  # fmt: skip
    start = time.perf_counter()
    theirs = [_re_loop(t) for t in texts]  # H2O's patterns with Python re, text by text
    peer = time.perf_counter() - start
    times = []
    for _ in range(3):
        start = time.perf_counter()
        ours = detect(pl.Series(texts), PII_DETECTORS)
        times.append(time.perf_counter() - start)
    same = all([p.split(" - ")[0] for p in ours.get(i, [])] == t for i, t in enumerate(theirs))
    return (f"PII (H2O detectors) vs Python re loop, {n:,} texts", peer, float(np.median(times)),
            0.0 if same else 1.0)  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", type=int, default=20_000)
    parser.add_argument("--pii-texts", type=int, default=200_000)
    args = parser.parse_args()
    cands, refs = pairs(args.pairs, seed=2026)
    rows = []

    # sentence_bleu builds a new BLEU (and tokenizer cache) per call: the peer runs cold.
    start = time.perf_counter()
    theirs = np.array(
        [sacrebleu.sentence_bleu(c, [r]).score / 100 for c, r in zip(cands, refs, strict=True)]
    )
    peer = time.perf_counter() - start
    ours_t = []
    for _ in range(3):
        start = time.perf_counter()
        ours, ours_1 = _ours_bleu(cands, refs)
        ours_t.append(time.perf_counter() - start)
    mine = float(np.median(ours_t))
    rows.append(
        ("BLEU vs sacrebleu.sentence_bleu loop", peer, mine, float(np.max(np.abs(ours - theirs))))
    )

    tok = [t.split() for t in tokenize_13a(pl.Series(cands)).list.join(" ").to_list()]
    rtok = [t.split() for t in tokenize_13a(pl.Series(refs)).list.join(" ").to_list()]
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        nl = np.array([nltk_bleu([r], h, weights=(1, 0, 0, 0)) if h and r else 0.0
                       for h, r in zip(tok, rtok, strict=True)])  # fmt: skip
    peer_nltk = time.perf_counter() - start
    rows.append(("BLEU-1 vs nltk sentence_bleu loop (pre-tokenized)", peer_nltk, mine,
                 float(np.max(np.abs(ours_1 - nl)))))  # fmt: skip

    for stem in (False, True):
        scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=stem)
        start = time.perf_counter()
        theirs_r = [scorer.score(r, c) for c, r in zip(cands, refs, strict=True)]
        peer_r = time.perf_counter() - start
        times = []
        for _ in range(3):
            _stem.cache_clear()  # each timed run stems its vocabulary afresh, as the peer does
            start = time.perf_counter()
            tokens = ids_rouge(pl.Series(cands), pl.Series(refs), stem=stem)
            c_off, r_off = tokens.offsets
            ours_r = id_rouge_scores(tokens, c_off[:-1], c_off[1:], r_off[:-1], r_off[1:])
            times.append(time.perf_counter() - start)
        diff = max(
            float(np.max(np.abs(ours_r[k] - np.array([s[t].fmeasure for s in theirs_r]))))
            for k, t in (("rouge_1", "rouge1"), ("rouge_2", "rouge2"), ("rouge_l", "rougeL"))
        )
        label = f"ROUGE-1/2/L vs rouge-score{' (stemmer)' if stem else ''}"
        rows.append((label, peer_r, float(np.median(times)), diff))

    rows.append(_pii(args.pii_texts))

    print(f"pairs: {args.pairs:,} (seeded corpus, one process)")
    print(f"{'metric':<52}{'peer s':>9}{'ours s':>9}{'ratio':>8}{'max |Δ|':>11}")
    for name, p, o, d in rows:
        print(f"{name:<52}{p:>9.3f}{o:>9.3f}{p / o:>7.1f}x{d:>11.1e}")


if __name__ == "__main__":
    main()
