"""LLM test generators against a real loopback chat server: every kind, strict parsing, resume.

The server plays a question-writing model: it reads the task and the sources out of each
prompt and answers in the kind's JSON format, quoting the sources. A fixed share of prompts
(chosen by a hash of the prompt) get a garbled reply of a known sort, so the report's
counts can be checked against what the server actually sent.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import duckdb
import polars as pl
import pytest

import evalnb
from evalnb.generation.judge_free import Chunk
from evalnb.generation.llm_generators import parse_reply, plan_calls
from evalnb.generation.llm_kinds import LLM_KINDS
from evalnb_testkit.corpus_docs import LICENSES
from evalnb_testkit.llm_server import LoopbackLLM

pytestmark = pytest.mark.skipif(not LICENSES.is_dir(), reason="needs Debian's base-files")
ROOT = Path(__file__).resolve().parents[2]
_SOURCE = re.compile(r"<<<\n(.*?)\n>>>", re.DOTALL)
_TASKS = {k.task.split("{")[0][:60]: name for name, k in LLM_KINDS.items()}


def _kind_of(prompt: str) -> str:
    task = prompt.split("\n", 1)[0].removeprefix("Task: ")
    return next(name for start, name in _TASKS.items() if task.startswith(start))


def _quote(source: str, words: int = 10) -> str:
    return " ".join(source.split()[:words])


class Writer:
    """A scripted question writer; ``garbled[kind][reason]`` counts the bad replies it sent."""

    def __init__(self) -> None:
        self.garbled: dict[str, Counter[str]] = {k: Counter() for k in LLM_KINDS}

    def __call__(self, prompt: str) -> str:
        kind = _kind_of(prompt)
        sources = _SOURCE.findall(prompt)
        spin = int(hashlib.sha256(prompt.encode()).hexdigest(), 16) % 9
        topic = " ".join(w for w in sources[0].split()[10:22] if w.isalpha())
        reply = self._reply(
            kind,
            sources,
            f"In the documents, {kind} question about {topic}?",
            yes="correct answer is Yes." in prompt,
        )
        if spin == 0:
            self.garbled[kind]["no JSON object"] += 1
            return "Sure! Here is a good question about the licence."
        if spin == 1:
            self.garbled[kind]["schema"] += 1
            return json.dumps({**reply, "confidence": 0.9})  # a key the schema does not have
        if spin == 2 and LLM_KINDS[kind].answerable:
            self.garbled[kind]["evidence not in the source"] += 1
            return json.dumps({**reply, "evidence": ["words that no source ever held"]})
        return "```json\n" + json.dumps(reply) + "\n```"

    @staticmethod
    def _reply(kind: str, sources: list[str], question: str, *, yes: bool) -> dict[str, object]:
        quotes = [_quote(s) for s in sources]
        base = {
            "question": question,
            "answer": f"An answer drawn from: {quotes[0]}",
            "evidence": quotes[:1],
        }
        if kind == "boolean":
            return {
                "question": question,
                "answer": "Yes" if yes else "No",
                "explanation": quotes[0],
                "evidence": quotes[:1],
            }
        if kind == "multiple_choice":
            return {
                "question": question,
                "options": ["one", "two", "three", "four"],
                "correct": "C",
                "evidence": quotes[:1],
            }
        if kind in ("multi_hop", "comparison"):
            return {**base, "evidence": quotes}
        if kind == "numerical":
            return {**base, "answer": "30 days"}
        if kind == "conditional":
            return {**base, "condition": "If the work is distributed"}
        if kind == "ambiguity":
            return {**base, "readings": ["the first reading", "the second reading"]}
        if kind == "unanswerable":
            return {"question": question, "missing": "what the licence costs"}
        return base


@pytest.fixture(scope="module")
def corpus_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The chunked corpus, made once for the module; each test gets a copy (`store`)."""
    folder = tmp_path_factory.mktemp("llm_corpus")
    path = folder / "lab.duckdb"
    evalnb.corpus([LICENSES / "Apache-2.0", LICENSES / "MPL-2.0"], store=path, max_tokens=160)
    return path


@pytest.fixture
def store(corpus_store: Path, tmp_path: Path) -> Path:
    """A copy of the corpus store: what one test writes there (topics, cases) is its own,
    so no test sees another's in whatever order they run."""
    folder = tmp_path / "store"
    folder.mkdir()
    wal = corpus_store.with_name(corpus_store.name + ".wal")  # committed, not checkpointed
    if wal.exists():
        shutil.copy(wal, folder / wal.name)
    return Path(shutil.copy(corpus_store, folder / corpus_store.name))


def _client(server: LoopbackLLM, cache: Path) -> evalnb.LLMClient:
    return evalnb.LLMClient(server.base_url, "writer", cache=cache, backoff_s=0.01)


def test_every_llm_kind_makes_traced_cases_and_failures_are_counted(
    store: Path, tmp_path: Path
) -> None:
    corpus = evalnb.Corpus(evalnb.open(store))
    writer = Writer()
    # Without topics (their plan is what the counts below follow): the cases carry none.
    with LoopbackLLM(writer) as server:
        with pytest.warns(evalnb.NoTopicsWarning, match="no topics"):
            lab = evalnb.generate_tests(
                corpus, n=60, llm=_client(server, tmp_path / "c.duckdb"), auto_topics=False
            )
        sent = server.total_calls
    cases = lab.cases
    text_of = dict(corpus.chunks.select("chunk_id", "text").iter_rows())
    assert set(cases["question_type"]) == set(LLM_KINDS)
    for row in cases.iter_rows(named=True):
        extra = json.loads(row["extra"])
        kind = LLM_KINDS[row["question_type"]]
        assert len(extra["chunk_ids"]) == kind.sources == len(row["corpus"])
        assert row["corpus"] == [text_of[c] for c in extra["chunk_ids"]]
        assert extra["answerable"] is kind.answerable
        norm = [" ".join(text_of[c].split()) for c in extra["chunk_ids"]]
        for i, quote in enumerate(extra["evidence"]):
            assert quote in (norm[i] if kind.evidence_per_source else " ".join(norm))
    choice = cases.filter(pl.col("question_type") == "multiple_choice").row(0, named=True)
    assert "\nA) one\nB) two\nC) three\nD) four\n" in choice["prompt"]
    assert choice["expected"] == ["C) three"]
    refusal = cases.filter(pl.col("question_type") == "unanswerable")["expected"][0][0]
    assert refusal.startswith("The documents do not answer this question")
    assert (
        cases.filter(pl.col("question_type") == "boolean")["expected"]
        .list.first()
        .str.extract(r"^(Yes|No)\.")
        .drop_nulls()
        .len()
        == cases.filter(pl.col("question_type") == "boolean").height
    )

    report = evalnb.generation_report(lab)
    assert report["calls"].sum() == sent == 75  # ceil(60 × 1.25): a quarter more than asked
    for row in report.iter_rows(named=True):
        reasons = json.loads(row["failure_reasons"])
        assert reasons == {k: v for k, v in writer.garbled[row["generator"]].items() if v}
        assert row["parse_failures"] == sum(reasons.values())
        assert row["parsed"] == row["calls"] - row["parse_failures"] - row["failed_calls"]
        assert row["used"] == cases.filter(pl.col("question_type") == row["generator"]).height
    assert report["parse_failures"].sum() > 0
    # kept in the store with the suite
    assert evalnb.generation_report(evalnb.open(store)).equals(report)

    with pytest.warns(evalnb.NothingScoredWarning, match="nli_entailment"):
        v = evalnb.validate_tests(lab)
    scored = set(v.scores()["case_id"])
    unanswerable = set(cases.filter(pl.col("question_type") == "unanswerable")["case_id"])
    assert unanswerable and not scored & unanswerable  # a refusal has no source to agree with


RUNNER = """
import sys, evalnb
corpus = evalnb.Corpus(evalnb.open(sys.argv[1]))
llm = evalnb.LLMClient(sys.argv[2], "writer", cache=sys.argv[3], concurrency=2, backoff_s=0.01)
evalnb.generate_tests(corpus, n=40, llm=llm)
"""


def test_a_killed_generation_resumes_without_repeating_a_completed_call(
    store: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache.duckdb"
    with LoopbackLLM(Writer(), latency_s=0.05) as server:
        proc = subprocess.Popen(
            [sys.executable, "-c", RUNNER, str(store), server.base_url, str(cache)],
            cwd=ROOT,
            env={**os.environ},
        )
        deadline = time.monotonic() + 120
        while server.total_calls < 15 and time.monotonic() < deadline:
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        with duckdb.connect(str(cache), read_only=True) as con:
            done = {
                json.loads(r)["messages"][-1]["content"]
                for (r,) in con.execute("SELECT request FROM llm_cache").fetchall()
            }
        assert 0 < len(done) < 50, "kill the run mid-way"
        before = Counter(server.calls)
        llm = _client(server, cache)
        lab = evalnb.generate_tests(evalnb.Corpus(evalnb.open(store)), n=40, llm=llm)
        assert [p for p in done if server.calls[p] > before[p]] == []
        assert llm.stats.cache_hits == len(done)
        after = server.total_calls
        again = evalnb.generate_tests(
            evalnb.Corpus(evalnb.open(store)), n=40, llm=_client(server, cache)
        )
        assert server.total_calls == after  # everything answered from the cache
        assert again.cases.sort("case_id").equals(lab.cases.sort("case_id"))


SOURCES = [
    "The Licensor grants a licence to use the Work for thirty days.",
    "Each Contributor may charge a fee for warranty support.",
]


@pytest.mark.parametrize(
    ("kind", "reply", "reason"),
    [
        ("factual", "no json here", "no JSON object"),
        ("factual", '{"question": "What is granted?", "answer": "a licence"', "no JSON object"),
        ("factual", '{"question": "What is granted here?", "answer": "x"}', "schema"),
        (
            "factual",
            json.dumps(
                {
                    "question": "What is granted here?",
                    "answer": "a licence",
                    "evidence": ["grants a licence"],
                    "extra": 1,
                }
            ),
            "schema",
        ),
        (
            "boolean",
            json.dumps(
                {
                    "question": "Is a licence granted?",
                    "answer": "Maybe",
                    "explanation": "x",
                    "evidence": ["grants a licence"],
                }
            ),
            "schema",
        ),
        (
            "numerical",
            json.dumps(
                {
                    "question": "How long is the licence?",
                    "answer": "thirty",
                    "evidence": ["thirty days"],
                }
            ),
            "schema",
        ),
        (
            "multiple_choice",
            json.dumps(
                {
                    "question": "Which is granted?",
                    "options": ["a", "a", "b", "c"],
                    "correct": "A",
                    "evidence": ["grants"],
                }
            ),
            "schema",
        ),
        (
            "factual",
            json.dumps(
                {
                    "question": "What is granted here?",
                    "answer": "a licence",
                    "evidence": ["grants a permanent licence"],
                }
            ),
            "evidence not in the source",
        ),
        (
            "multi_hop",
            json.dumps(
                {
                    "question": "Who grants and who charges?",
                    "answer": "x",
                    "evidence": ["may charge a fee", "The Licensor grants"],
                }
            ),
            "evidence not in the source",
        ),
    ],
)
def test_replies_are_read_strictly(kind: str, reply: str, reason: str) -> None:
    parsed = parse_reply(kind, reply, SOURCES)
    assert not parsed.ok and parsed.value is None and parsed.note.startswith(reason)
    assert parsed.raw == reply


def test_a_good_reply_passes_whatever_its_wrapping() -> None:
    reply = {
        "question": "Who grants and who charges?",
        "answer": "The Licensor; a Contributor.",
        "evidence": ["“The Licensor grants a licence”", "may  CHARGE a fee…"],
    }
    parsed = parse_reply("multi_hop", f"Here you are:\n```json\n{json.dumps(reply)}\n```", SOURCES)
    assert parsed.ok and parsed.value == reply


def _chunk(i: int) -> Chunk:
    return Chunk(f"c{i}", "doc", "", f"text {i}", ())


def test_the_plan_spreads_kinds_over_topics_and_pairs_within_a_topic() -> None:
    by_topic = {"a": [_chunk(i) for i in range(6)], "b": [_chunk(i) for i in range(6, 9)]}
    kinds = list(LLM_KINDS)
    calls = plan_calls(by_topic, kinds, 40, seed=0)
    assert calls == plan_calls(by_topic, kinds, 40, seed=0)  # a pure function of its inputs
    topic = {c.chunk_id: t for t, cs in by_topic.items() for c in cs}
    per_topic = Counter(topic[c.chunks[0].chunk_id] for c in calls)
    assert per_topic == {"a": 20, "b": 20}
    assert Counter(c.kind for c in calls) == dict.fromkeys(kinds, 4)
    for c in calls:
        assert len(c.chunks) == LLM_KINDS[c.kind].sources
        assert len({topic[x.chunk_id] for x in c.chunks}) == 1
        assert len({x.chunk_id for x in c.chunks}) == len(c.chunks)
    in_a = [(c.kind, c.chunks[0].chunk_id) for c in calls if topic[c.chunks[0].chunk_id] == "a"]
    assert len(set(in_a)) == len(in_a)  # no chunk asked the same kind twice
    assert set(Counter(chunk for _, chunk in in_a).values()) <= {3, 4}  # 20 calls, 6 chunks
    assert {c.choices["answer"] for c in calls if c.kind == "boolean"} <= {"Yes", "No"}


def test_llm_kinds_without_a_client_say_what_to_pass(tmp_path: Path) -> None:
    # One short document: the check comes before any chunk is read (the module's corpus
    # cost this fast-tier test 20 s).
    doc = tmp_path / "cards.txt"
    doc.write_text("The Classic card has an annual fee of $439.\n", encoding="utf-8")
    corpus = evalnb.corpus([doc], store=tmp_path / "lab.duckdb")
    with pytest.raises(ValueError, match=r"llm=evalnb\.LLMClient"):
        evalnb.generate_tests(corpus, generators=["multi_hop", "cloze"])
