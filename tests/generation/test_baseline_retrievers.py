"""The baseline retrievers: BM25 scores are Lucene's formula, dense ranks are the encoder's cosine order."""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from nltk.stem.porter import PorterStemmer

import evalnb
from evalnb.lab.documents import documents_of
from evalnb.models.encoder import get_encoder

DOCS = {
    "d1": "graphite pencils smudge paper",
    "d2": "violin strings snap violin bows",
    "d3": "pencils sharpen graphite graphite cores",
    "d4": "orchestras tune violin strings",
}


def _lab(prompts: dict[str, str]) -> evalnb.Lab:
    return evalnb.load(pl.DataFrame({"case_id": list(prompts), "prompt": list(prompts.values())}))


def _lucene(query: str, docs: dict[str, str], k1: float = 1.5, b: float = 0.75) -> dict[str, float]:
    """Lucene's BM25 by hand: idf ln(1 + (N - df + 0.5) / (df + 0.5)), tf saturated by k1 and b.

    Lucene 8 and later leave out Robertson's constant factor (k1 + 1), which changes no
    ranking; bm25s's ``lucene`` method follows it.
    """
    tokens = {d: t.split() for d, t in docs.items()}
    avgdl = sum(map(len, tokens.values())) / len(tokens)
    scores = {}
    for doc, words in tokens.items():
        total = 0.0
        for term in set(query.split()):
            df = sum(term in w for w in tokens.values())
            if df == 0:
                continue
            tf = words.count(term)
            idf = math.log(1 + (len(docs) - df + 0.5) / (df + 0.5))
            total += idf * tf / (tf + k1 * (1 - b + b * len(words) / avgdl))
        scores[doc] = total
    return scores


def test_bm25_scores_are_lucenes_formula_and_only_matching_documents_rank() -> None:
    lab = _lab({"q1": "graphite pencils", "q2": "violin strings", "q3": "submarine"})
    lab = lab.retrieval.baseline("bm25", documents=DOCS, stem=False, k=10)
    ranked = lab.table("retrievals").sort("case_id", "rank")
    for query_id, query in (("q1", "graphite pencils"), ("q2", "violin strings")):
        expected = {d: s for d, s in _lucene(query, DOCS).items() if s > 0}
        got = ranked.filter(pl.col("case_id") == query_id)
        assert dict(zip(got["doc_id"], got["score"], strict=True)) == pytest.approx(
            expected, rel=1e-5
        )
        assert got["score"].to_list() == sorted(got["score"].to_list(), reverse=True)
    errors = dict(lab.outputs.select("case_id", "error").rows())
    assert errors["q1"] is None
    assert "shares a term" in errors["q3"]
    assert ranked.filter(pl.col("case_id") == "q3").is_empty()


def test_bm25_stems_with_nltks_porter_and_keeps_words_outside_ascii() -> None:
    # "sharpening" finds "sharpen" only through the stemmer; "café" is kept as it is.
    docs = {"a": "she was sharpening knives", "b": "café au lait", "c": "nothing here matches"}
    lab = _lab({"q": "sharpened", "r": "café"}).retrieval.baseline("bm25", documents=docs)
    top = dict(
        lab.table("retrievals").filter(pl.col("rank") == 1).select("case_id", "doc_id").rows()
    )
    assert top == {"q": "a", "r": "b"}
    assert PorterStemmer().stem("sharpened") == PorterStemmer().stem("sharpening")
    unstemmed = _lab({"q": "sharpened"}).retrieval.baseline("bm25", documents=docs, stem=False)
    assert unstemmed.table("retrievals").is_empty()


def test_the_dense_baseline_ranks_by_the_encoders_cosine() -> None:
    prompts = {"q1": "writing tools made of graphite", "q2": "string instruments"}
    lab = _lab(prompts).retrieval.baseline("dense", documents=DOCS, k=3)
    encoder = get_encoder("all-MiniLM-L6-v2")
    doc_vec = encoder.encode(list(DOCS.values()))
    doc_vec /= np.linalg.norm(doc_vec, axis=1, keepdims=True)
    for query_id, query in prompts.items():
        q = encoder.encode([query])[0]
        sims = doc_vec @ (q / np.linalg.norm(q))
        best = [list(DOCS)[i] for i in np.argsort(-sims)[:3]]
        got = lab.table("retrievals").filter(pl.col("case_id") == query_id).sort("rank")
        assert got["doc_id"].to_list() == best
        assert got["score"].to_numpy() == pytest.approx(np.sort(sims)[::-1][:3], abs=1e-5)
    assert set(lab.table("retrievals")["model"]) == {"baseline-dense-all-MiniLM-L6-v2"}


def test_baselines_over_a_beir_folder_compare_through_the_evaluator_and_decide(
    tmp_path: Path,
) -> None:
    (tmp_path / "qrels").mkdir()
    topics = ["violin", "pencil", "harbour", "glacier", "orchard", "comet"]
    docs = [
        {"_id": f"{t}-{i}", "title": t, "text": f"notes about the {t}, part {i}"}
        for t in topics
        for i in range(3)
    ]
    (tmp_path / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs), "utf-8")
    queries = [{"_id": t, "text": f"tell me about the {t}"} for t in topics]
    (tmp_path / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries), "utf-8")
    rows = "".join(f"{t}\t{t}-{i}\t{3 - i}\n" for t in topics for i in range(3))
    (tmp_path / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + rows, "utf-8")
    lab = evalnb.load(tmp_path)
    lab = lab.retrieval.baseline("bm25", k=5).retrieval.baseline("dense", k=5, name="dense")
    assert set(lab.table("retrievals")["model"]) == {"baseline-bm25", "dense"}
    again = lab.retrieval.baseline("bm25", k=5)  # asked again: replaced, never doubled
    assert again.table("retrievals").height == lab.table("retrievals").height
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", evalnb.NothingScoredWarning)
        scored = evalnb.evaluate(lab, "retrieval", progress=False)
    recall = scored.scores.filter(pl.col("metric") == "recall_5")
    assert recall.height == 2 * len(topics)
    assert recall["value"].min() == 1.0  # every topic's three documents are in both top 5s
    decision = scored.decisions.decide("baseline-bm25", "dense", metrics=["retrieval.ndcg_cut_10"])
    assert decision.frame["metric"].to_list() == ["ndcg_cut_10"]


def test_documents_are_checked_before_anything_is_ranked() -> None:
    lab = _lab({"q": "anything"})
    with pytest.raises(ValueError, match="no documents to rank"):
        lab.retrieval.baseline("bm25")
    with pytest.raises(ValueError, match="'x' names two documents"):
        documents_of(lab, pl.DataFrame({"doc_id": ["x", "x"], "text": ["a", "b"]}))
    with pytest.raises(ValueError, match="row 1 has no doc_id or no text"):
        documents_of(lab, {"a": "text", "b": None})
    with pytest.raises(TypeError, match="expected None"):
        documents_of(lab, ["a list"])
    with pytest.raises(ValueError, match="method"):
        lab.retrieval.baseline("tfidf", documents=DOCS)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="k1 >= 0"):
        lab.retrieval.baseline("bm25", documents=DOCS, b=2.0)
