"""(candidate, reference) pairs of real English sentences, for the n-gram benchmarks.

The sentences come from a corpus that ships in the repository (``data/sentences``: the prose
of Python's standard-library docstrings, technical documentation with names, numbers,
quotes and abbreviations, under the PSF License; ``data/sentences/README.md`` says how it
was made), split by Punkt. A reference is one or two consecutive sentences; its candidate
is the reference edited at a per-pair rate with words of the same text, or now and then
another passage. About 4,400 distinct sentences give every pair a distinct candidate;
references repeat, as they do across the models of a lab.
"""

from __future__ import annotations

import functools
import random
from pathlib import Path

from evalnb.text.sentences import split_sentences
from evalnb.text.synthetic import edit

__all__ = ["SENTENCES", "real_pairs"]

SENTENCES = Path(__file__).resolve().parents[1] / "data" / "sentences"


@functools.cache
def _sentences() -> list[str]:
    files = sorted(SENTENCES.glob("*.txt"))
    files = [f for f in files if not f.name.startswith("LICENSE")]
    if not files:
        msg = (
            f"expected the sentence corpus in {SENTENCES}; found no .txt file there: "
            "restore it from git, or rebuild it with scripts/make_sentences.py"
        )
        raise FileNotFoundError(msg)
    paragraphs = [p for f in files for p in f.read_text(encoding="utf-8").split("\n\n")]
    sentences = [
        " ".join(s.split()) for s in split_sentences([p.strip() for p in paragraphs]) for s in s
    ]
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
