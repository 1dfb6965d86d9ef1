"""The judge reliability card on the real local judge: time and calls for 100 answers of the demo lab.

Run: ``python bench/bench_judge_card.py [N]`` after ``EVALNB_LOCAL_JUDGE=1 bash scripts/install``.
SmolLM2-135M (llama.cpp's server, on this machine's CPU) judges the demo lab's answers with
the seed's binary judge; the card asks it about 12 calls per answer (the answer itself, two
fresh repeats, two paddings, five adversarial answers, and the answer beside another model's
in both orders). Prints the card, its calls and its time.
"""

from __future__ import annotations

import sys
import time

import evalnb


def main(n: int = 100) -> None:
    lab = evalnb.load("data/demo_lab.json")
    judge = evalnb.local_judge()
    started = time.monotonic()
    card = lab.judges.card("binary_judge", judge=judge, n=n, seed=0)
    elapsed = time.monotonic() - started
    print(card)
    print(
        f"judge card on {n} answers: {card.calls} calls in {elapsed:.0f} s ({judge.model}, this machine's CPU)"
    )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100)
