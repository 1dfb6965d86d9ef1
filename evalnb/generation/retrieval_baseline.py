"""A reference system to evaluate: extractive answers from retrieved chunks, with no LLM.

For each case, the ``k`` chunks of the corpus closest to the prompt (cosine of the local
encoder's embeddings) are its retrieved context, and its answer is the sentence of those
chunks closest to the prompt. It is a real retrieval system, weak by design: a floor any
RAG should beat, and a way to run the whole evaluation workflow (evaluation, weakness,
robustness, adversarial inputs) offline. Answers and contexts are recorded as a model's
outputs, like :func:`evalnb.run_suite`'s.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
import polars as pl

from evalnb.lab.core import LabCore
from evalnb.lab.schema import SCHEMAS
from evalnb.models.encoder import get_encoder
from evalnb.text.sentences import split_sentences

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["retrieval_answers"]

L = TypeVar("L", bound=LabCore)


def _unit(vectors: np.ndarray) -> np.ndarray:
    return np.asarray(vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12))


def _answers(
    prompts: Sequence[str], chunks: Sequence[str], k: int, model: str
) -> tuple[list[str], list[list[str]], float]:
    encoder = get_encoder(model)
    start = time.perf_counter()
    chunk_vec = _unit(encoder.encode(list(chunks)))
    prompt_vec = _unit(encoder.encode(list(prompts)))
    k = min(k, len(chunks))
    sims = prompt_vec @ chunk_vec.T
    top = np.argsort(-sims, axis=1, kind="stable")[:, :k]
    sentences = split_sentences(list(chunks), min_chars=10)
    pool = sorted({s for row in top for c in row for s in sentences[c]})
    index = {s: i for i, s in enumerate(pool)}
    sent_vec = _unit(encoder.encode(pool)) if pool else np.zeros((0, prompt_vec.shape[1]))
    answers, contexts = [], []
    for i, row in enumerate(top):
        candidates = [s for c in row for s in sentences[c]]
        if candidates:
            scores = sent_vec[[index[s] for s in candidates]] @ prompt_vec[i]
            answers.append(candidates[int(np.argmax(scores))])
        else:  # retrieved chunks too short to hold a sentence: the best chunk itself
            answers.append(chunks[row[0]])
        contexts.append([chunks[c] for c in row])
    return answers, contexts, (time.perf_counter() - start) / max(len(prompts), 1)


def retrieval_answers(
    lab: L,
    chunks: pl.DataFrame,
    *,
    name: str = "retrieval-baseline",
    k: int = 3,
    model: str = "all-MiniLM-L6-v2",
    cases: Sequence[str] | None = None,
) -> L:
    """Answer every case of ``lab`` from ``chunks`` by retrieval; return the lab with them.

    Parameters
    ----------
    lab
        The lab whose cases to answer; cases already answered by ``name`` are left as they are.
    chunks
        A ``chunks`` table (:attr:`evalnb.Corpus.chunks`): the collection to retrieve from.
    name
        The model name the answers are recorded under.
    k
        Chunks retrieved per case (the outputs' ``context``).
    model
        The embedding model that ranks chunks and sentences.
    cases
        Answer only these case ids (default: every case).
    """
    if chunks.height == 0:
        msg = "the retrieval baseline needs a corpus with chunks; read documents with evalnb.corpus"
        raise ValueError(msg)
    have = set(lab.outputs.filter(pl.col("model") == name)["case_id"].to_list())
    todo = lab.cases.filter(~pl.col("case_id").is_in(list(have)) & pl.col("prompt").is_not_null())
    if cases is not None:
        todo = todo.filter(pl.col("case_id").is_in(list(cases)))
    if todo.is_empty():
        return lab
    answers, contexts, per_case = _answers(
        todo["prompt"].to_list(), chunks["text"].to_list(), k, model
    )
    meta = json.dumps({"system": "retrieval baseline", "k": k, "embedding_model": model})
    rows: list[dict[str, Any]] = [
        {
            "case_id": cid,
            "model": name,
            "sample": 0,
            "actual": a,
            "context": c,
            "duration_s": per_case,
            "extra": meta,
        }
        for cid, a, c in zip(todo["case_id"].to_list(), answers, contexts, strict=True)
    ]
    outputs = pl.concat([lab.outputs, pl.DataFrame(rows, schema=SCHEMAS["outputs"])])
    known = set(lab.model_table["model"].to_list())
    models = (
        lab.model_table
        if name in known
        else pl.concat(
            [
                lab.model_table,
                pl.DataFrame(
                    {"model": [name], "key": [name], "meta": [meta]}, schema=SCHEMAS["models"]
                ),
            ]
        )
    )
    return lab.with_tables({"outputs": outputs, "models": models})
