"""Leakage detectors on hostile 1 MB texts (issue 16: linear time, measured).

Usage: .venv/bin/python bench/bench_hostile.py [--size 1000000] [--peer-size 20000]

For every text of ``evalnb_testkit/hostile.py`` and both leakage evaluators, times
``evalnb.evaluate`` on a one-row lab holding the text as the answer, through the public API.
The peer is the H2O patterns that evalnb rescans (e-mail, SSN, PEM; the others are linear
as they are), run as H2O runs them (``finditer`` on the whole text). Being
quadratic on most of these texts, it runs at ``--peer-size`` and twice that only; the time
at full size is extrapolated with the growth exponent measured between the two (between 1
and 2), and labelled as an estimate. Prints the worst time per evaluator.
"""

from __future__ import annotations

import argparse
import math
import re
import sys
import time
from pathlib import Path

import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import evalnb
from evalnb.evaluation.families.text.leak_scan import EMAIL, PEM, SSN
from evalnb_testkit.hostile import adversarial_texts

_H2O = {"pii_leakage": (EMAIL, SSN), "sensitive_data_leakage": (PEM,)}


def _ours(evaluator: str, text: str) -> float:
    lab = evalnb.load(pl.DataFrame({"prompt": ["p"], "actual": [text]}))
    start = time.perf_counter()
    evalnb.evaluate(lab, [evaluator], progress=False)
    return time.perf_counter() - start


def _peer(evaluator: str, text: str) -> float:
    start = time.perf_counter()
    for pattern in _H2O[evaluator]:
        sum(1 for _ in re.finditer(pattern, text))
    return time.perf_counter() - start


def main() -> None:
    """Print per-text times and the worst case per evaluator."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--peer-size", type=int, default=20_000)
    args = parser.parse_args()
    _ours("pii_leakage", "warm-up a@b.com")
    big = adversarial_texts(args.size)
    small, double = adversarial_texts(args.peer_size), adversarial_texts(2 * args.peer_size)
    worst: dict[str, tuple[float, str, float]] = {}
    print(f"{'evaluator':24} {'text':36} {'evalnb s':>9} {'H2O est. s':>11}")
    for evaluator in _H2O:
        for name, text in big.items():
            ours = _ours(evaluator, text)
            t1, t2 = _peer(evaluator, small[name]), _peer(evaluator, double[name])
            growth = min(max(math.log2(max(t2, 1e-9) / max(t1, 1e-9)), 1.0), 2.0)
            peer = t2 * (len(text) / len(double[name])) ** growth
            print(f"{evaluator:24} {name:36} {ours:9.3f} {peer:11.1f}")
            if ours > worst.get(evaluator, (0.0, "", 0.0))[0]:
                worst[evaluator] = (ours, name, peer)
    print()
    for evaluator, (ours, name, peer) in worst.items():
        print(
            f"worst {evaluator}: {ours:.3f} s on {name!r} "
            f"({args.size:,} chars; H2O's finditer, extrapolated: {peer:,.0f} s)"
        )


if __name__ == "__main__":
    main()
