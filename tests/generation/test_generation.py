"""From documents to a suite offline: judge-free generators on a real corpus."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import evalnb
from evalnb.generation.judge_free import negate
from evalnb.models.encoder import get_encoder
from evalnb_testkit.corpus_docs import LICENSES, readme_markdown

# Suites generated from a real corpus with the embedding model, end to end: the slow tier.
pytestmark = [
    pytest.mark.skipif(not LICENSES.is_dir(), reason="needs Debian's base-files"),
    pytest.mark.slow,
    pytest.mark.xdist_group("generation"),  # its module fixture is built once: on one worker
]


def _clean(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, evalnb.Lab]:
    folder = tmp_path_factory.mktemp("corpus")
    (folder / "README.md").write_text(readme_markdown(), encoding="utf-8")
    docs = [LICENSES / n for n in ("Apache-2.0", "GPL-3", "MPL-2.0")] + [folder / "README.md"]
    store = folder / "lab.duckdb"
    corpus = evalnb.corpus(docs, store=store, max_tokens=160)
    corpus.set_topics(corpus.topics(min_topic_size=5, seed=0))
    return store, evalnb.generate_tests(corpus, n=45, seed=0)


def test_a_real_corpus_gives_a_suite_of_supported_distinct_cases(
    suite: tuple[Path, evalnb.Lab],
) -> None:
    _, lab = suite
    cases = lab.cases
    assert cases.height >= 30
    assert set(cases["question_type"]) == {"cloze", "definition", "section", "numeric", "yes_no"}
    chunks = lab.table("chunks")
    text_of = dict(chunks.select("chunk_id", "text").iter_rows())
    for row in cases.iter_rows(named=True):
        extra = json.loads(row["extra"])
        (chunk_id,) = extra["chunk_ids"]
        (evidence,), expected = extra["evidence"], row["expected"][0]
        assert evidence in text_of[chunk_id]  # the answer rests on a sentence of its chunk
        assert row["corpus"] == [text_of[chunk_id]]
        kind = row["question_type"]
        assert "\n" not in expected, (kind, expected)
        if kind in ("cloze", "numeric"):
            prompt = row["prompt"]
            blanked = prompt[prompt.index(": ", prompt.index("blank")) + 2 :]
            assert blanked.replace("_____", expected, 1) == _clean(evidence)
        elif kind == "definition":
            assert expected in _clean(evidence)
        elif kind == "section":
            assert expected == _clean(evidence)
        else:
            verdict, _, said = expected.partition(". ")
            assert verdict in ("Yes", "No") and said == _clean(evidence)
            statement = row["prompt"].split('is this true: "', 1)[1][:-1]
            assert (statement == said) == (verdict == "Yes")
    # no duplicates, not even near ones
    assert cases["prompt"].n_unique() == cases.height
    emb = get_encoder("all-MiniLM-L6-v2").encode(cases["prompt"].to_list())
    emb /= np.linalg.norm(emb, axis=1, keepdims=True)
    sim = emb @ emb.T
    np.fill_diagonal(sim, 0)
    assert sim.max() < 0.92
    # every case has its chunk's topic, and the topics are spread
    topic_of = dict(chunks.select("chunk_id", "topic").iter_rows())
    for row in cases.iter_rows(named=True):
        assert row["topic"] == topic_of[json.loads(row["extra"])["chunk_ids"][0]]
    assert cases["topic"].drop_nulls().n_unique() == chunks["topic"].drop_nulls().n_unique()


def test_the_suite_is_in_the_store_and_a_seed_repeats_it(suite: tuple[Path, evalnb.Lab]) -> None:
    store, lab = suite
    kept = evalnb.open(store)
    assert kept.cases.sort("case_id").equals(lab.cases.sort("case_id"))
    corpus = evalnb.Corpus(kept)
    again = evalnb.generate_tests(corpus, n=45, seed=0)
    assert again.cases.sort("case_id").equals(lab.cases.sort("case_id"))  # nothing added twice
    other = evalnb.generate_tests(
        evalnb.Corpus(evalnb.Lab({"chunks": kept.table("chunks")})), n=45, seed=1
    )
    assert set(other.cases["prompt"]) != set(lab.cases["prompt"])


def test_generators_and_topics_can_be_chosen(suite: tuple[Path, evalnb.Lab]) -> None:
    _, lab = suite
    corpus = evalnb.Corpus(evalnb.Lab({"chunks": lab.table("chunks")}))
    topic = lab.table("chunks")["topic"].drop_nulls()[0]
    only = evalnb.generate_tests(corpus, n=10, generators=["definition"], topics=[topic]).cases
    assert set(only["question_type"]) == {"definition"} and set(only["topic"]) == {topic}
    with pytest.raises(ValueError, match=r"unknown generators \['riddle'\]"):
        evalnb.generate_tests(corpus, generators=["riddle"])
    with pytest.raises(ValueError, match="no chunks to generate from"):
        evalnb.generate_tests(corpus, topics=["no such topic"])
    assert pl.Series(only["prompt"]).str.contains("what does").all()


def test_a_generated_suite_exports_for_h2o(suite: tuple[Path, evalnb.Lab], tmp_path: Path) -> None:
    _, lab = suite
    path = lab.export(tmp_path / "suite.json", format="h2o_suite")
    tests = json.loads(path.read_text(encoding="utf-8"))["tests"]
    docs = {tuple(json.loads(e)["docs"]) for e in lab.cases["extra"]}
    assert {tuple(t["documents"]) for t in tests} == docs  # one test per source document
    back = evalnb.load(path).cases.sort("case_id")
    cases = lab.cases.sort("case_id")
    for column in ("case_id", "prompt", "expected"):
        assert back[column].equals(cases[column])
    assert all(json.loads(e)["question_type"] for e in back["extra"])  # kept for a round trip
    # and as a test lab (cases with no categories used to break that export)
    as_lab = evalnb.load(lab.export(tmp_path / "lab.json")).cases.sort("case_id")
    assert as_lab["prompt"].equals(cases["prompt"])


def test_a_corpus_without_topics_gets_them_first_or_a_warning(
    suite: tuple[Path, evalnb.Lab],
) -> None:
    _, lab = suite
    chunks = lab.table("chunks").with_columns(topic=pl.lit(None, pl.String))
    corpus = evalnb.Corpus(evalnb.Lab({"chunks": chunks}))
    made = evalnb.generate_tests(corpus, n=12, seed=0)  # topic modeling runs first, as in MRM
    assert corpus.chunks["topic"].null_count() < corpus.chunks.height
    assert made.cases["topic"].null_count() < made.cases.height
    small = evalnb.Corpus(evalnb.Lab({"chunks": chunks.head(4)}))
    with pytest.warns(evalnb.NoTopicsWarning, match=r"topic modeling could not run.*set_topics"):
        few = evalnb.generate_tests(small, n=3, seed=0)
    assert few.cases["topic"].is_null().all()


@pytest.mark.parametrize(
    ("sentence", "negated"),
    [
        ("The Work is provided as is.", "The Work is not provided as is."),
        ("The Work is not provided as is.", "The Work is provided as is."),
        (
            "You need not include anything that users can regenerate.",
            "You must include anything that users can regenerate.",
        ),
        ("Need not apply to you.", "Must apply to you."),
        ("The Licensor cannot revoke it, but you may.", "The Licensor can revoke it, but you may."),
        (
            "Users can regenerate it; they do not need it.",
            "Users can regenerate it; they do need it.",
        ),
        ("Copies DO NOT expire.", "Copies DO expire."),
        ("Nothing here says anything.", None),
    ],
)
def test_negate_flips_the_first_polarity_marker_and_nothing_else(
    sentence: str, negated: str | None
) -> None:
    assert negate(sentence) == negated
    if negated is not None and "need" not in sentence.lower():  # twice: the same meaning
        twice = negate(negated) or ""
        assert twice.lower() == sentence.lower().replace("cannot", "can not")
