"""A million distinct (answer, expected answer) pairs, generated as arrays in seconds.

``evalnb.text.synthetic.pairs`` builds pairs word by word in Python (about 140 µs a pair);
at a million rows that is minutes. Here the same kind of text is drawn with NumPy: the
vocabulary of ``synthetic`` (English function words and seeded pseudo-words, Zipf-like
frequencies), 10-40 words a reference, numbers and commas sprinkled in, a final mark; the
answer keeps each reference word with probability 0.85, otherwise substitutes a random word,
and a fifth of answers get extra words appended. With at least ten words drawn from
thousands, a repeated text is vanishingly rare (the benchmark prints the distinct counts):
nothing a tool caches by text is reused, and the vocabulary stays that of a corpus.
"""

from __future__ import annotations

import random

import numpy as np
import polars as pl

from evalnb.text.synthetic import vocabulary

__all__ = ["CHUNK", "many_pairs"]


def _texts(ids: np.ndarray, lengths: np.ndarray, vocab: pl.Series) -> pl.Series:
    words = vocab.gather(ids)
    owner = np.repeat(np.arange(lengths.size), lengths)
    return (
        pl.DataFrame({"o": owner, "w": words})
        .group_by("o", maintain_order=True)
        .agg(pl.col("w").str.join(" "))["w"]
    )


def many_pairs(n: int, seed: int = 0) -> pl.DataFrame:
    """Return ``n`` distinct pairs as a frame of ``actual`` and ``expected`` texts.

    Drawn :data:`CHUNK` rows at a time: the words of a million rows drawn at once took
    2.5 GB, which a benchmark of the tool's own memory would then report as the tool's.
    """
    rng = np.random.default_rng(seed)
    words = vocabulary(random.Random(seed), 4000)
    numbers = [str(k) for k in rng.integers(1, 99_999, 2_000)] + [
        f"{x:.2f}" for x in rng.random(500)
    ]
    commas = [f"{w}," for w in words[:200]]
    vocab = pl.Series(words + numbers + commas)
    weights = np.concatenate(
        [1.0 / (np.arange(len(words)) + 2.7) ** 1.1, np.full(len(numbers) + len(commas), 0.0002)]
    )
    weights /= weights.sum()
    return pl.concat(
        [_chunk(min(CHUNK, n - start), rng, vocab, weights) for start in range(0, n, CHUNK)]
    )


CHUNK = 100_000
"""Rows drawn at a time (bounds the generator's memory)."""


def _chunk(n: int, rng: np.random.Generator, vocab: pl.Series, weights: np.ndarray) -> pl.DataFrame:
    lengths = rng.integers(10, 41, n)
    ref_ids = rng.choice(vocab.len(), size=int(lengths.sum()), p=weights)
    keep = rng.random(ref_ids.size) < 0.85
    ans_ids = np.where(keep, ref_ids, rng.choice(vocab.len(), size=ref_ids.size, p=weights))
    refs = _texts(ref_ids, lengths, vocab)
    answers = _texts(ans_ids, lengths, vocab)
    extra = np.flatnonzero(rng.random(n) < 0.2)
    tail_len = rng.integers(3, 9, extra.size)
    tails = _texts(rng.choice(vocab.len(), size=int(tail_len.sum()), p=weights), tail_len, vocab)
    tail = pl.Series([""] * n, dtype=pl.String).scatter(extra, " " + tails)
    parts = pl.DataFrame(
        {
            "answer": answers,
            "ref": refs,
            "tail": tail,
            "mark": rng.choice([".", "!", "?", ""], size=n),
        }
    )

    def capital(name: str) -> pl.Expr:
        return pl.col(name).str.slice(0, 1).str.to_uppercase() + pl.col(name).str.slice(1)

    return parts.select(
        actual=pl.format("{}{}{}", "answer", "tail", "mark"),
        expected=pl.format("{}{}", "ref", "mark"),
    ).select(capital("actual"), capital("expected"))
