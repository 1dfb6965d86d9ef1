"""(candidate, reference) pairs of real English sentences, for the n-gram benchmarks.

The sentences come from the source documents beside the repository (``../shared/seeds``:
H2O Eval Studio's documentation and papers, OCR text with its bullets, abbreviations,
quotes and numbers), split by Punkt. A reference is one or two consecutive sentences; its
candidate is the reference edited at a per-pair rate with words of the same documents, or
now and then another passage. About 2,500 sentences give every pair a distinct candidate;
references repeat, as they do across the models of a lab.
"""

from __future__ import annotations

import random
from pathlib import Path

from evalnb.text.sentences import split_sentences
from evalnb.text.synthetic import edit

__all__ = ["SEEDS", "real_pairs"]

SEEDS = Path(__file__).resolve().parents[2] / "shared" / "seeds"


def _sentences() -> list[str]:
    files = sorted(SEEDS.glob("*.txt"))
    if not files:
        msg = f"expected the source documents in {SEEDS}; found none: clone ../shared beside"
        raise FileNotFoundError(msg)
    paragraphs = [p for f in files for p in f.read_text(errors="replace").split("\n\n")]
    sentences = [" ".join(s.split()) for s in split_sentences([p.strip() for p in paragraphs])
                 for s in s]  # fmt: skip
    return [s for s in sentences if 6 <= len(s.split()) <= 60]


def real_pairs(n: int, seed: int = 0) -> tuple[list[str], list[str]]:
    """Return ``n`` (candidates, references) of real sentences, deterministic for ``seed``."""
    rng = random.Random(seed)
    sentences = _sentences()
    vocab = sorted({w for s in sentences for w in s.split()})
    cands, refs = [], []
    for _ in range(n):
        i = rng.randrange(len(sentences) - 1)
        ref = sentences[i] if rng.random() < 0.7 else f"{sentences[i]} {sentences[i + 1]}"
        roll = rng.random()
        if roll < 0.05:
            cand = rng.choice(sentences)
        else:
            cand = " ".join(edit(rng, ref.split(), vocab))
            if roll < 0.25:
                cand += " " + rng.choice(sentences)
        cands.append(cand)
        refs.append(ref)
    return cands, refs
