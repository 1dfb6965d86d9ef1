"""Baseline retrievers over a lab's documents: BM25 (bm25s) and dense (the local encoder).

A team changing its chunking, embedding model or reranker wants a fixed point to compare
against: :func:`baseline_rankings` ranks every case's question against the documents as
BEIR's two reference systems do — lexical BM25 and a bi-encoder's cosine — and keeps the
rankings as retriever ``name`` (a ``model`` in the lab), so the ``retrieval`` evaluator,
leaderboards and ``decide`` compare it with the retrievers under test.

Why these libraries. BM25 is `bm25s <https://github.com/xhluca/bm25s>`_: a well-kept,
sparse-matrix implementation of Lucene's and Robertson's variants (what BEIR's
Elasticsearch baseline computes), scoring all queries as matrix products, hundreds of
times faster than a Python loop over postings. Its tokens are stemmed by evalnb's compiled
NLTK Porter stemmer (:mod:`evalnb.text.porter`), each distinct word once. Dense retrieval
embeds with :func:`evalnb.models.encoder.get_encoder` (the cached, batched engine every
embedding evaluator uses) and ranks by cosine in blocks of queries, so memory stays at one
block's scores, never queries × documents at once.

The documents are the lab's ``chunks`` (a corpus read by :func:`evalnb.corpus`, or a BEIR
folder's ``corpus.jsonl``), or those given: a title, where there is one, is read with its
text, as BEIR's baselines do. Ties in score keep trec_eval's order, since the evaluator
ranks by score and then document id.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Literal, TypeVar

import numpy as np
import polars as pl
import pyarrow as pa

from evalnb.lab.documents import documents_of
from evalnb.llm.retrievers import keep_rankings
from evalnb.models.encoder import cosine, get_encoder
from evalnb.text.porter import stem_words

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from evalnb.lab.core import LabCore

__all__ = ["BM25_METHODS", "METHODS", "baseline_rankings"]

L = TypeVar("L", bound="LabCore")

METHODS = ("bm25", "dense")
"""The baselines: lexical BM25 and a bi-encoder's cosine."""
BM25_METHODS = ("lucene", "robertson", "atire", "bm25l", "bm25+")
"""bm25s's BM25 variants (Lucene's is its default and Elasticsearch's)."""
_BLOCK = 1024  # queries whose cosines are held at once by the dense baseline


def _stemmer(words: Sequence[str]) -> list[str]:
    """Porter-stem the ASCII words (NLTK's rules); other words stay as they are."""
    arr = pa.array(list(words), type=pa.large_string())
    ascii_ = pa.compute.string_is_ascii(arr).to_numpy(zero_copy_only=False)
    out = list(words)
    at = np.flatnonzero(ascii_)
    if at.size:
        stems = stem_words(arr.take(pa.array(at)), min_len=3).to_pylist()
        for i, stem in zip(at.tolist(), stems, strict=True):
            out[i] = stem
    return out


def _bm25(
    queries: list[str], docs: list[str], k: int, method: str, k1: float, b: float, stem: bool
) -> tuple[np.ndarray, np.ndarray]:
    import bm25s  # noqa: PLC0415 - 0.3 s at import, only for this baseline

    stemmer = _stemmer if stem else None
    corpus = bm25s.tokenize(docs, stopwords="en", stemmer=stemmer, show_progress=False)
    model = bm25s.BM25(method=method, k1=k1, b=b)
    model.index(corpus, show_progress=False)
    asked = bm25s.tokenize(queries, stopwords="en", stemmer=stemmer, show_progress=False)
    ids, scores = model.retrieve(asked, k=min(k, len(docs)), show_progress=False, n_threads=1)
    return np.asarray(ids), np.asarray(scores, dtype=np.float64)


def _dense(
    queries: list[str], docs: list[str], k: int, model: str
) -> tuple[np.ndarray, np.ndarray]:
    encoder = get_encoder(model)
    doc_vec = encoder.encode(docs)
    query_vec = encoder.encode(queries)
    k = min(k, len(docs))
    ids = np.empty((len(queries), k), dtype=np.int64)
    scores = np.empty((len(queries), k), dtype=np.float64)
    for start in range(0, len(queries), _BLOCK):
        sims = cosine(query_vec[start : start + _BLOCK], doc_vec)
        top = np.argpartition(-sims, k - 1, axis=1)[:, :k] if k < sims.shape[1] else None
        if top is None:
            top = np.broadcast_to(np.arange(sims.shape[1]), sims.shape).copy()
        block = np.take_along_axis(sims, top, axis=1)
        order = np.argsort(-block, axis=1, kind="stable")
        ids[start : start + len(block)] = np.take_along_axis(top, order, axis=1)
        scores[start : start + len(block)] = np.take_along_axis(block, order, axis=1)
    return ids, scores


def baseline_rankings(
    lab: L,
    method: Literal["bm25", "dense"] = "bm25",
    *,
    k: int = 100,
    name: str | None = None,
    documents: pl.DataFrame | Mapping[str, str] | object | None = None,
    model: str = "all-MiniLM-L6-v2",
    bm25: str = "lucene",
    k1: float = 1.5,
    b: float = 0.75,
    stem: bool = True,
    cases: Sequence[str] | None = None,
) -> L:
    """Rank the documents for every case's question with a baseline; keep it as a retriever.

    Parameters
    ----------
    lab
        The lab whose cases' prompts are the questions.
    method
        ``"bm25"`` (bm25s, stop words of English removed, Porter-stemmed tokens) or
        ``"dense"`` (the encoder ``model``'s cosine).
    k
        Documents kept per case.
    name
        The retriever's ``model`` in the lab (default ``"baseline-bm25"`` or
        ``"baseline-dense-<model>"``); rankings it held for the cases asked are replaced.
    documents
        What to rank (default: the lab's chunks); see :func:`documents_of`.
    model
        The dense baseline's encoder (a sentence-transformers name or a local folder).
    bm25, k1, b, stem
        The BM25 variant (:data:`BM25_METHODS`), its parameters, and whether tokens are
        stemmed.
    cases
        Only these case ids (all by default).

    Returns
    -------
    LabCore
        A new lab with the rankings in ``retrievals`` (replacing this baseline's earlier
        ones for the cases asked) and an output row per case. A case whose question is
        empty, or shares no term with any document under BM25, has no ranking and says so.
    """
    if method not in METHODS:
        msg = f"method: expected one of {METHODS}; got {method!r}"
        raise ValueError(msg)
    if bm25 not in BM25_METHODS:
        msg = f"bm25: expected one of {BM25_METHODS}; got {bm25!r}"
        raise ValueError(msg)
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        msg = f"k: expected a positive whole number of documents; got {k!r}"
        raise ValueError(msg)
    if not (math.isfinite(k1) and k1 >= 0 and math.isfinite(b) and 0 <= b <= 1):
        msg = f"k1 >= 0 and 0 <= b <= 1 (BM25's saturation and length normalisation); got k1={k1}, b={b}"
        raise ValueError(msg)
    docs = documents_of(lab, documents)
    asked = lab.cases.select("case_id", pl.col("prompt").fill_null(""))
    if cases is not None:
        asked = asked.filter(
            pl.col("case_id").is_in(pl.Series(list(cases), dtype=pl.String).implode())
        )
    # Named apart from a run's own tags ("bm25" is a common one): a baseline asked again
    # replaces its own rankings, never a retriever the user loaded.
    name = name or (
        "baseline-bm25" if method == "bm25" else f"baseline-dense-{model.rsplit('/', 1)[-1]}"
    )
    questions = asked["prompt"].to_list()
    texts = docs["text"].to_list()
    if method == "bm25":
        ids, scores = _bm25(questions, texts, k, bm25, k1, b, stem)
    else:
        ids, scores = _dense(questions, texts, k, model)
    n, depth = ids.shape if ids.ndim == 2 else (len(questions), 0)
    doc_ids = docs["doc_id"].to_numpy()
    ranked = pl.DataFrame(
        {
            "case_id": np.repeat(asked["case_id"].to_numpy(), depth),
            "rank": np.tile(np.arange(1, depth + 1), n),
            "doc_id": doc_ids[ids.reshape(-1)] if depth else np.array([], dtype=object),
            "score": scores.reshape(-1),
        },
        schema={"case_id": pl.String, "rank": pl.Int64, "doc_id": pl.String, "score": pl.Float64},
    )
    blank = asked.filter(pl.col("prompt").str.strip_chars() == "")["case_id"]
    # BM25 gives 0 to a document sharing no term with the question: it was not retrieved.
    # An empty question embeds to some vector, but what it ranks answers nothing.
    kept = pl.col("score") > 0 if method == "bm25" else pl.lit(value=True)
    ranked = ranked.filter(kept & ~pl.col("case_id").is_in(blank.implode()))
    found = set(ranked["case_id"].unique().to_list())
    empty = set(blank.to_list())
    reasons = [
        None
        if c in found
        else "the question is empty"
        if c in empty
        else "no document shares a term with the question (stop words aside)"
        for c in asked["case_id"].to_list()
    ]
    return keep_rankings(lab, name, ranked, asked["case_id"].to_list(), reasons)
