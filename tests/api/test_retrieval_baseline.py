"""The retrieval baseline: a real extractive system, answered offline from a corpus."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest

import evalnb
from evalnb.models.encoder import get_encoder
from evalnb_testkit.corpus_docs import LICENSES

# Suites generated from a real corpus with the embedding model, end to end: the slow tier.
pytestmark = [
    pytest.mark.skipif(not LICENSES.is_dir(), reason="needs Debian's base-files"),
    pytest.mark.slow,
]


def test_answers_come_from_the_top_chunks_and_find_the_source_of_most_cases() -> None:
    corpus = evalnb.corpus([LICENSES / "Apache-2.0", LICENSES / "MPL-2.0"], max_tokens=160)
    lab = evalnb.generate_tests(corpus, n=30, seed=0)
    lab = evalnb.retrieval_baseline(lab, corpus, k=3)
    out = lab.outputs.join(lab.cases.select("case_id", "prompt", case_extra="extra"), on="case_id")
    assert out.height == lab.cases.height and set(out["model"]) == {"retrieval-baseline"}
    texts = corpus.chunks["text"].to_list()
    enc = get_encoder("all-MiniLM-L6-v2")
    chunk_vec = enc.encode(texts)
    chunk_vec /= np.linalg.norm(chunk_vec, axis=1, keepdims=True)
    found = 0
    for row in out.iter_rows(named=True):
        q = enc.encode([row["prompt"]])[0]
        best = np.argsort(-(chunk_vec @ (q / np.linalg.norm(q))), kind="stable")[:3]
        assert row["context"] == [texts[i] for i in best]  # the three closest chunks, in order
        assert any(row["actual"] in c for c in row["context"])  # a sentence of them, verbatim
        source = {
            t
            for t, i in zip(texts, corpus.chunks["chunk_id"], strict=True)
            if i in json.loads(row["case_extra"])["chunk_ids"]
        }
        found += bool(source & set(row["context"]))
    assert found / out.height > 0.6  # retrieval finds the case's own chunk for most cases
    again = evalnb.retrieval_baseline(lab, corpus)
    assert again.outputs.height == lab.outputs.height  # answered cases are not asked again
    with pytest.raises(ValueError, match="needs a corpus with chunks"):
        evalnb.retrieval_baseline(lab, evalnb.Corpus(evalnb.Lab({"cases": lab.cases})))
    assert lab.model_table.filter(pl.col("model") == "retrieval-baseline").height == 1
