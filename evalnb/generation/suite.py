"""From chunks to a test suite: run the generators, balance topics, drop near-duplicates.

Candidates are taken round-robin over topics, and within a topic over generators, so a
suite of *n* cases spreads over the corpus instead of piling on its longest document. A
candidate whose prompt is too close to one already kept (cosine of the prompts' embeddings
at or above ``dedupe``) is dropped, so rephrasings of one question count once.
"""

from __future__ import annotations

import json
import random
from collections import defaultdict
from itertools import zip_longest
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from evalnb.generation.judge_free import JUDGE_FREE, Candidate, Chunk, Context, term_rarity
from evalnb.io.builder import content_id
from evalnb.models.encoder import get_encoder
from evalnb.text.sentences import split_sentences

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

__all__ = ["generate_cases"]

_NO_TOPIC = ""


def _round_robin(groups: Sequence[Sequence[Candidate]]) -> Iterator[Candidate]:
    for row in zip_longest(*groups):
        yield from (c for c in row if c is not None)


def _balanced(by_topic: dict[str, dict[str, list[Candidate]]]) -> list[Candidate]:
    """Topics in turn; within a topic, generators in turn."""
    per_topic = [list(_round_robin(list(gens.values()))) for _, gens in sorted(by_topic.items())]
    return list(_round_robin(per_topic))


def _dedupe(ordered: list[Candidate], n: int, threshold: float, model: str) -> list[Candidate]:
    """Keep candidates in order until ``n``, skipping those too close to one kept."""
    seen_text: set[str] = set()
    fresh = []
    for c in ordered:
        key = " ".join(c.prompt.lower().split())
        if key not in seen_text:
            seen_text.add(key)
            fresh.append(c)
    encoder = get_encoder(model)
    kept: list[Candidate] = []
    kept_vectors: np.ndarray | None = None  # rows filled up to len(kept)
    batch = max(4 * n, 64)  # embed ahead in batches: most candidates are never needed
    for start in range(0, len(fresh), batch):
        part = fresh[start : start + batch]
        emb = encoder.encode([c.prompt for c in part])
        emb = emb / np.maximum(np.linalg.norm(emb, axis=1, keepdims=True), 1e-12)
        if kept_vectors is None:
            kept_vectors = np.empty((n, emb.shape[1]), dtype=emb.dtype)
        for candidate, vector in zip(part, emb, strict=True):
            k = len(kept)
            if k and float(np.max(kept_vectors[:k] @ vector)) >= threshold:
                continue
            kept.append(candidate)
            kept_vectors[k] = vector
            if len(kept) == n:
                return kept
    return kept


def generate_cases(
    chunks: pl.DataFrame,
    *,
    n: int,
    generators: Sequence[str],
    topics: Sequence[str] | None = None,
    seed: int = 0,
    dedupe: float = 0.92,
    model: str = "all-MiniLM-L6-v2",
) -> pl.DataFrame:
    """Generate up to ``n`` test cases from ``chunks`` (a ``chunks`` table) without an LLM.

    Returns
    -------
    polars.DataFrame
        Rows for the ``cases`` table: ``case_id``, ``prompt``, ``expected`` (one answer),
        ``question_type`` (the generator), ``topic``, ``corpus`` (the source chunk's text)
        and ``extra`` (JSON: generator, chunk ids, document, evidence sentence).
    """
    unknown = sorted(set(generators) - set(JUDGE_FREE))
    if unknown:
        msg = f"unknown generators {unknown}; the judge-free ones are {sorted(JUDGE_FREE)}"
        raise ValueError(msg)
    if n < 1:
        msg = f"n must be at least 1, got {n}"
        raise ValueError(msg)
    if topics is not None:
        chunks = chunks.filter(pl.col("topic").is_in(list(topics)))
    if chunks.height == 0:
        msg = "no chunks to generate from (an empty corpus, or no chunk in the topics asked for)"
        raise ValueError(msg)
    texts = chunks["text"].to_list()
    rarity = term_rarity(texts)
    by_topic: dict[str, dict[str, list[Candidate]]] = defaultdict(lambda: defaultdict(list))
    topic_of: dict[str, str | None] = {}
    text_of: dict[str, str] = {}
    doc_of: dict[str, str] = {}
    rows = chunks.select("chunk_id", "doc", "heading", "text", "topic").iter_rows()
    for (chunk_id, doc, heading, text, topic), sentences in zip(
        rows, split_sentences(texts), strict=True
    ):
        chunk = Chunk(chunk_id, doc, heading or "", text, tuple(sentences))
        topic_of[chunk_id], text_of[chunk_id], doc_of[chunk_id] = topic, text, doc
        for name in generators:
            # Seeded per chunk and generator: a chunk's cases do not depend on the others.
            ctx = Context(rarity, random.Random(f"{seed}:{chunk_id}:{name}"))
            by_topic[topic or _NO_TOPIC][name].extend(JUDGE_FREE[name](chunk, ctx))
    for gens in by_topic.values():
        for name, found in gens.items():
            random.Random(f"{seed}:{name}").shuffle(found)
    chosen = _dedupe(_balanced(by_topic), n, dedupe, model)
    return pl.DataFrame(
        {
            # The id any import gives a case of this content (prompts are distinct here).
            "case_id": [content_id({"prompt": c.prompt, "expected": [c.expected]}) for c in chosen],
            "prompt": [c.prompt for c in chosen],
            "expected": [[c.expected] for c in chosen],
            "question_type": [c.generator for c in chosen],
            "topic": [topic_of[c.chunk_id] for c in chosen],
            "corpus": [[text_of[c.chunk_id]] for c in chosen],
            "extra": [json.dumps({"generator": c.generator, "chunk_ids": [c.chunk_id],
                                  "doc": doc_of[c.chunk_id], "evidence": c.evidence})
                      for c in chosen],
        },
        schema={"case_id": pl.String, "prompt": pl.String, "expected": pl.List(pl.String),
                "question_type": pl.String, "topic": pl.String, "corpus": pl.List(pl.String),
                "extra": pl.String},
    )  # fmt: skip
