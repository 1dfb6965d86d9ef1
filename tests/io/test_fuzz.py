"""Mutation fuzzing of every importer on real (and spec-example) files.

Each example mutates a seed document (structure or bytes; the agent and ragas seeds are in
evalnb_testkit/fuzz_agent_seeds.py) and imports it into an existing DuckDB store the way `evalnb import` does. Any failure must be an `EvalnbError` (never a raw
KeyError/TypeError/...), and a failed import must leave the store byte-for-byte unchanged.
In CI (`CI` set) each importer gets 1,000 examples; locally 100.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import evalnb
from evalnb_testkit.budget import examples
from evalnb_testkit.fuzz_agent_seeds import AGENT_SEEDS, AGENT_TEXT_SEEDS, FORMAT_OF
from evalnb_testkit.mutations import mutate_tree
from evalnb_testkit.paths import SHARED

settings.register_profile(
    "ci", max_examples=examples(1000), deadline=None, suppress_health_check=list(HealthCheck)
)
settings.register_profile(
    "dev", max_examples=examples(100), deadline=None, suppress_health_check=list(HealthCheck)
)
settings.load_profile("ci" if os.environ.get("CI") else "dev")

_SPEC_SEEDS: dict[str, tuple[str, object]] = {
    "harpia": (
        "harpia.json",
        {
            "instances": [
                {
                    "id": "1",
                    "input": "Bom dia",
                    "actual-output": "Good morning",
                    "expected-output": ["Good morning", "Morning"],
                },
                {
                    "id": "2",
                    "input": "Obrigado",
                    "actual-output": "Thanks",
                    "expected-output": ["Thank you"],
                },
            ],
            "metrics": [
                {"id": "bleu", "enable": True, "parameters": {"weights": [0.25, 0.25, 0.25, 0.25]}},
                {"id": "bertscore", "enable": False, "parameters": {"lang": "en"}},
            ],
        },
    ),
    "tencent": (
        "tencent.jsonl",
        [
            {
                "messages": [
                    {"role": "system", "content": "Be brief."},
                    {"role": "user", "content": "Hello!"},
                    {"role": "assistant", "content": "Hi"},
                    {"role": "user", "content": "16+16?"},
                ],
                "ref_answer": "32",
                "id": "141234314",
                "max_tokens": 1024,
                "model_outputs": [
                    {
                        "model_name": "llama3",
                        "responses": [{"content": "32"}, {"content": "It is 32."}],
                    },
                    {
                        "model_name": "qwen3",
                        "responses": [{"content": "32", "reasoning_content": "16*2"}],
                    },
                ],
            },
            {
                "messages": [
                    {"role": "user", "content": "1+1?"},
                    {"role": "assistant", "content": "2"},
                ],
                "ref_answer": "The answer is 2",
                "extra_content": "x",
            },
        ],
    ),
    "tencent_manual": (
        "manual.jsonl",
        [
            {
                "system": "You are helpful.",
                "conversation": [{"prompt": "712+165+223+711=", "response": "1811"}],
            },
            {
                "conversation": [
                    {"prompt": "hi", "response": "hello"},
                    {"prompt": "2+2=", "response": "4"},
                ]
            },
        ],
    ),
    "harbor": ("rewards.jsonl", [{"reward": 1}, None, {"reward": 0.25}, {"reward": 0}]),
    "jsonl": (
        "generic.jsonl",
        [
            {
                "id": "a",
                "question": "q1",
                "answer": "a1",
                "model": "m",
                "contexts": ["c1", "c2"],
                "cost": 0.1,
            },
            {
                "id": "b",
                "question": "q2",
                "answer": "a2",
                "model": "m",
                "contexts": [],
                "latency": 2,
            },
        ],
    ),
}
_RECORDS = [
    {
        "case_id": "a",
        "prompt": "q1",
        "expected": ["r1", "r1b"],
        "actual": "a1",
        "model": "m",
        "context": ["c1"],
        "cost": 0.1,
        "topic": "t",
    },
    {
        "case_id": "b",
        "prompt": "q2",
        "expected": ["r2"],
        "actual": "a2",
        "model": "m",
        "context": [],
        "cost": None,
        "topic": None,
    },
]
_SPEC_SEEDS["json"] = ("records.json", _RECORDS)
_SPEC_SEEDS["parquet"] = ("table.parquet", _RECORDS)
_TEXT_SEEDS = {
    "tencent_csv": (
        "manual.csv",
        'system,prompt,response\n,"712+165+223+711=",1811\nBe terse.,"2, 3?",5\n',
    ),
    "csv": ("generic.csv", 'question,answer,model,cost\n"What, exactly?",yes,m1,0.5\nq2,no,m2,\n'),
}
_SPEC_SEEDS.update(AGENT_SEEDS)
_TEXT_SEEDS.update(AGENT_TEXT_SEEDS)
_H2O_SEEDS = {
    "h2o_suite": "sr1107_test_suite_small.json",
    "h2o_suite_keys": "ci_rag_test_suite-no-OR-constraints.json",
    "h2o_lab": "dummy_translation_test_lab_small.json",
    "h2o_lab_multi": "dummy_summarization_test_lab_small.json",
}


def _seed_text(kind: str) -> tuple[str, str]:
    if kind in _H2O_SEEDS:
        path = SHARED / _H2O_SEEDS[kind]
        if not path.is_file():
            pytest.skip(f"H2O reference data not found at {SHARED} (../shared absent)")
        return path.name, path.read_text(encoding="utf-8")
    if kind in _TEXT_SEEDS:
        return _TEXT_SEEDS[kind]
    name, doc = _SPEC_SEEDS[kind]
    if name.endswith(".jsonl"):
        assert isinstance(doc, list)
        return name, "".join(json.dumps(r) + "\n" for r in doc)
    return name, json.dumps(doc, indent=2)


def _parquet(records: object) -> bytes:
    buf = io.BytesIO()
    pl.DataFrame(records).write_parquet(buf)
    return buf.getvalue()


def _mutate(data: st.DataObject, name: str, text: str) -> bytes:
    mode = data.draw(st.sampled_from(["tree", "tree", "tree", "bytes", "truncate"]))
    raw = text.encode("utf-8")
    if name.endswith(".parquet"):
        # Mutate the records, then let Polars write what it can type (mixed types it
        # cannot are skipped: they cannot exist in a Parquet file anyway).
        records = mutate_tree(data, json.loads(text)) if mode == "tree" else json.loads(text)
        try:
            raw = _parquet(records)
        except Exception:  # any frame Polars refuses to build
            assume(False)
        if mode == "tree":
            return raw
    if mode == "truncate":
        return raw[: data.draw(st.integers(0, len(raw)))]
    if mode == "bytes":
        out = bytearray(raw)
        for _ in range(data.draw(st.integers(1, 4))):
            pos = data.draw(st.integers(0, len(out)))
            out[pos:pos] = data.draw(st.binary(min_size=1, max_size=4))
        return bytes(out)
    if name.endswith(".csv"):
        lines = text.splitlines()
        i = data.draw(st.integers(0, len(lines) - 1))
        lines[i] = data.draw(
            st.sampled_from(["", ",", '"', "a,b,c,d,e", lines[i] * 2, lines[i][:3]])
        )
        return "\n".join(lines).encode()
    if name.endswith(".jsonl"):
        records = mutate_tree(data, [json.loads(line) for line in text.splitlines()])
        if not isinstance(records, list):  # the root itself was replaced: one odd line
            return (json.dumps(records) + "\n").encode()
        return "".join(json.dumps(r) + "\n" for r in records).encode()
    return json.dumps(mutate_tree(data, json.loads(text))).encode()


def _digest(path: Path) -> str:
    wal = path.with_name(path.name + ".wal")
    extra = wal.read_bytes() if wal.exists() else b""
    return hashlib.sha256(path.read_bytes() + extra).hexdigest()


KINDS = sorted([*_SPEC_SEEDS, *_TEXT_SEEDS, *_H2O_SEEDS])
_FORMAT = {
    "tencent_manual": "tencent",
    "h2o_suite_keys": "h2o_suite",
    "h2o_lab_multi": "h2o_lab",
    **FORMAT_OF,
}


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
def test_mutated_inputs_fail_cleanly(kind: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    name, text = _seed_text(kind)
    workdir = tmp_path_factory.mktemp(kind)
    store = workdir / "lab.duckdb"
    # A small store keeps each example fast; what matters is that it has content to lose.
    base = {"prompt": ["existing?"], "expected": [["yes"]], "actual": ["yes"], "model": ["m0"]}
    evalnb.load(pl.DataFrame(base)).save(store)
    fmt = _FORMAT.get(kind, kind)
    counts = {"ok": 0, "rejected": 0}
    current = [evalnb.open(store)]

    @given(data=st.data(), detect=st.booleans())
    def check(data: st.DataObject, detect: bool) -> None:
        source = workdir / name
        source.write_bytes(_mutate(data, name, text))
        before = _digest(store)
        try:
            # What `evalnb import` does: parse and validate, merge with the store, save.
            merged = current[0].merge(evalnb.load(source, format=None if detect else fmt))
        except evalnb.EvalnbError:
            counts["rejected"] += 1
            assert _digest(store) == before, "a failed import changed the store"
            return
        counts["ok"] += 1
        # Every few accepted inputs go through DuckDB and back: fuzzed text (odd unicode,
        # huge numbers, nested extras) must survive the store unchanged. Not every one, to
        # keep 1,000 examples per importer within CI's time.
        if counts["ok"] % 8 == 1:
            merged.save(store)
            assert evalnb.open(store).equals(merged)
            current[0] = merged

    check()
    assert counts["rejected"] > 0  # the mutations do reach the validation paths
