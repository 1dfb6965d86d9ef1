"""Seeded synthetic (candidate, reference) corpora for tests and benchmarks.

References are 10–40 words from a Zipf-like vocabulary of English and pseudo-words, with
commas, numbers and final punctuation; candidates are the reference edited at a per-pair
rate (substitute, delete, insert, swap), sometimes with an appended clause or unrelated.
"""

from __future__ import annotations

import random

__all__ = ["ADVERSARIAL", "edit", "pairs", "vocabulary"]

_WORDS = [
    "the",
    "of",
    "and",
    "to",
    "in",
    "is",
    "was",
    "for",
    "on",
    "that",
    "with",
    "as",
    "by",
    "at",
    "from",
    "it",
    "be",
    "are",
    "this",
    "an",
    "which",
    "or",
    "have",
    "has",
    "not",
    "but",
    "were",
    "been",
    "their",
    "more",
    "all",
    "can",
    "its",
    "also",
    "one",
    "new",
    "two",
    "would",
    "other",
    "than",
    "may",
    "some",
    "model",
    "risk",
    "bank",
    "loan",
    "rate",
    "fee",
    "card",
    "account",
    "plan",
    "term",
    "cover",
    "limit",
    "month",
    "year",
    "data",
    "answer",
    "question",
    "report",
    "revenue",
    "million",
    "percent",
    "growth",
    "market",
    "customer",
    "policy",
    "system",
]

ADVERSARIAL = (
    "",
    " ",
    "\t\n",
    "a",
    ".",
    "...",
    "U.S.A. 3.5-4 e.g. $1,000.50",
    "&amp;quot; &lt;tag&gt;",
    "<skipped> word-\nbreak",
    "x\x1cy\x1dz",
    "naïve café Ünïcödé",
    "日本語のテキスト。",
    "🙂 emoji 🙂",
    "tab\tseparated\u00a0nbsp",
    "--- ,,, ...",
    "1,2,3.4.5-6-7",
    "A-B C--D",
    "end with space   ",
    "CAPS and lower",
    'it\'s a "quote" (paren) [bracket] {brace}',
)


def vocabulary(rng: random.Random, n_pseudo: int) -> list[str]:
    """English function and domain words, then ``n_pseudo`` seeded pseudo-words."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    pseudo = ["".join(rng.choices(letters, k=rng.randint(3, 9))) for _ in range(n_pseudo)]
    return list(_WORDS) + pseudo


def _reference(rng: random.Random, vocab: list[str], weights: list[float]) -> list[str]:
    words = rng.choices(vocab, weights=weights, k=rng.randint(10, 40))
    for _ in range(rng.randint(0, 3)):
        i = rng.randrange(len(words))
        words[i] = rng.choice([f"{words[i]},", str(rng.randint(1, 99999)), f"{rng.random():.2f}"])
    words[-1] += rng.choice([".", "!", "?", ""])
    words[0] = words[0].capitalize()
    return words


def edit(rng: random.Random, words: list[str], vocab: list[str]) -> list[str]:
    """Edit ``words`` at a random rate: substitute, delete, insert (from ``vocab``), swap."""
    out = list(words)
    rate = rng.uniform(0.05, 0.6)
    for _ in range(max(1, int(len(out) * rate))):
        op = rng.random()
        i = rng.randrange(len(out)) if out else 0
        if op < 0.4 and out:
            out[i] = rng.choice(vocab)
        elif op < 0.6 and len(out) > 1:
            del out[i]
        elif op < 0.8:
            out.insert(i, rng.choice(vocab))
        elif len(out) > 1:
            j = min(i + 1, len(out) - 1)
            out[i], out[j] = out[j], out[i]
    return out


def pairs(n: int, seed: int = 0) -> tuple[list[str], list[str]]:
    """Return ``n`` (candidates, references), deterministic for ``seed``."""
    rng = random.Random(seed)
    vocab = vocabulary(rng, 4000)
    weights = [1.0 / (rank + 2.7) ** 1.1 for rank in range(len(vocab))]
    cands, refs = [], []
    for _ in range(n):
        ref = _reference(rng, vocab, weights)
        roll = rng.random()
        if roll < 0.05:
            cand = _reference(rng, vocab, weights)
        else:
            cand = edit(rng, ref, vocab)
            if roll < 0.25:
                cand += _reference(rng, vocab, weights)[: rng.randint(3, 8)]
        cands.append(" ".join(cand))
        refs.append(" ".join(ref))
    return cands, refs
