"""From chunks to a test suite: run the generators, balance topics, drop near-duplicates.

Candidates are taken round-robin over topics, and within a topic over generators, so a
suite of *n* cases spreads over the corpus instead of piling on its longest document. A
candidate whose prompt is too close to one already kept (cosine of the prompts' embeddings
at or above ``dedupe``) is dropped, so rephrasings of one question count once.
"""

from __future__ import annotations

import json
import math
import random
from collections import Counter, defaultdict
from itertools import zip_longest
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from evalnb.generation.judge_free import JUDGE_FREE, Candidate, Chunk, Context, term_rarity
from evalnb.generation.llm_generators import GenerationReport, llm_candidates, plan_calls
from evalnb.generation.llm_kinds import LLM_KINDS
from evalnb.io.builder import content_id
from evalnb.models.encoder import get_encoder
from evalnb.text.sentences import split_sentences

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from evalnb.llm.client import LLMClient

__all__ = ["check_request", "generate_cases"]

_NO_TOPIC = ""
_OVERDRAW = 1.25  # LLM calls per case wanted: some replies fail to parse or duplicate others


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


def _judge_free(
    chunks: list[Chunk], names: Sequence[str], rarity: dict[str, float], seed: int
) -> dict[str, list[Candidate]]:
    found: dict[str, list[Candidate]] = defaultdict(list)
    for chunk in chunks:
        for name in names:
            # Seeded per chunk and generator: a chunk's cases do not depend on the others.
            ctx = Context(rarity, random.Random(f"{seed}:{chunk.chunk_id}:{name}"))
            found[name].extend(JUDGE_FREE[name](chunk, ctx))
    return found


def check_request(generators: Sequence[str], n: int, llm: LLMClient | None) -> None:
    """Refuse unknown generators, LLM ones without a client, and ``n`` below 1, saying why.

    Called before any work (topic modeling included), so a forgotten ``llm=`` costs nothing.
    """
    unknown = sorted(set(generators) - set(JUDGE_FREE) - set(LLM_KINDS))
    if unknown:
        msg = (
            f"unknown generators {unknown}; the judge-free ones are {sorted(JUDGE_FREE)}, the "
            f"LLM ones {sorted(LLM_KINDS)}"
        )
        raise ValueError(msg)
    needs_llm = sorted(set(generators) & set(LLM_KINDS))
    if needs_llm and llm is None:
        msg = (
            f"generators {needs_llm} are written by an LLM: pass llm=evalnb.LLMClient(base_url=..., "
            f"model=...), or use only the judge-free ones {sorted(JUDGE_FREE)}"
        )
        raise ValueError(msg)
    if n < 1:
        msg = f"n must be at least 1, got {n}"
        raise ValueError(msg)


def generate_cases(
    chunks: pl.DataFrame,
    *,
    n: int,
    generators: Sequence[str],
    topics: Sequence[str] | None = None,
    seed: int = 0,
    dedupe: float = 0.92,
    model: str = "all-MiniLM-L6-v2",
    llm: LLMClient | None = None,
    json_mode: bool = True,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Generate up to ``n`` test cases from ``chunks`` (a ``chunks`` table).

    Judge-free generators read every chunk; LLM generators (with ``llm``) get their share
    of ``n`` in calls, a quarter more to cover replies that fail or duplicate others.

    Returns
    -------
    tuple of polars.DataFrame
        Rows for the ``cases`` table: ``case_id``, ``prompt``, ``expected`` (one answer),
        ``question_type`` (the generator), ``topic``, ``corpus`` (the source chunks'
        texts) and ``extra`` (JSON: generator, chunk ids, documents, evidence passages,
        whether the corpus answers it); and the LLM generators' report
        (:meth:`GenerationReport.frame`, empty without LLM generators).
    """
    check_request(generators, n, llm)
    if topics is not None:
        chunks = chunks.filter(pl.col("topic").is_in(list(topics)))
    if chunks.height == 0:
        msg = "no chunks to generate from (an empty corpus, or no chunk in the topics asked for)"
        raise ValueError(msg)
    free = [g for g in generators if g in JUDGE_FREE]
    written = [g for g in generators if g in LLM_KINDS]
    texts = chunks["text"].to_list()
    sentences = split_sentences(texts) if free else [[] for _ in texts]
    rows = chunks.select("chunk_id", "doc", "heading", "text", "topic").iter_rows()
    items = [
        (Chunk(cid, doc, heading or "", text, tuple(sents)), topic)
        for (cid, doc, heading, text, topic), sents in zip(rows, sentences, strict=True)
    ]
    topic_of = {c.chunk_id: t for c, t in items}
    by_id = {c.chunk_id: c for c, _ in items}
    found = _judge_free([c for c, _ in items], free, term_rarity(texts), seed)
    report = GenerationReport()
    if written and llm is not None:
        by_topic: dict[str, list[Chunk]] = defaultdict(list)
        for chunk, topic in items:
            by_topic[topic or _NO_TOPIC].append(chunk)
        n_calls = math.ceil(n * len(written) / len(generators) * _OVERDRAW)
        calls = plan_calls(by_topic, written, n_calls, seed)
        for c in llm_candidates(calls, llm, json_mode=json_mode, report=report):
            found[c.generator].append(c)
    grouped: dict[str, dict[str, list[Candidate]]] = defaultdict(lambda: defaultdict(list))
    for name, candidates in found.items():
        random.Random(f"{seed}:{name}").shuffle(candidates)
        for c in candidates:
            grouped[topic_of[c.chunk_ids[0]] or _NO_TOPIC][name].append(c)
    chosen = _dedupe(_balanced(grouped), n, dedupe, model)
    return _case_rows(chosen, by_id, topic_of), report.frame(Counter(c.generator for c in chosen))


def _case_rows(
    chosen: list[Candidate], by_id: dict[str, Chunk], topic_of: dict[str, str | None]
) -> pl.DataFrame:
    def extra(c: Candidate) -> str:
        docs = list(dict.fromkeys(by_id[i].doc for i in c.chunk_ids))
        return json.dumps(
            {
                "generator": c.generator,
                "chunk_ids": list(c.chunk_ids),
                "docs": docs,
                "evidence": list(c.evidence),
                "answerable": c.answerable,
            },
            ensure_ascii=False,
        )

    return pl.DataFrame(
        {
            # The id any import gives a case of this content (prompts are distinct here).
            "case_id": [content_id({"prompt": c.prompt, "expected": [c.expected]}) for c in chosen],
            "prompt": [c.prompt for c in chosen],
            "expected": [[c.expected] for c in chosen],
            "question_type": [c.generator for c in chosen],
            "topic": [topic_of[c.chunk_ids[0]] for c in chosen],
            "corpus": [[by_id[i].text for i in c.chunk_ids] for c in chosen],
            "extra": [extra(c) for c in chosen],
        },
        schema={
            "case_id": pl.String,
            "prompt": pl.String,
            "expected": pl.List(pl.String),
            "question_type": pl.String,
            "topic": pl.String,
            "corpus": pl.List(pl.String),
            "extra": pl.String,
        },
    )
