"""Hostile agent, trace and cache inputs (issue 43): right results, bounded time and memory.

Times are measured in ``bench/bench_hostile_agents.py``; here each case checks the result
(and that it ends), never a duration.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import evalnb
from evalnb.io import ragas_data
from evalnb.models.vector_cache import VectorCache, text_keys


def _conversation(calls: list[str], results: list[tuple[str | None, str]]) -> dict[str, object]:
    """One assistant message calling ``calls`` (ids), then tool messages ``(id, content)``."""
    return {
        "messages": [
            {"role": "user", "content": "do it"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": c, "type": "function", "function": {"name": f"t{k}", "arguments": "{}"}}
                    for k, c in enumerate(calls)
                ],
            },
            *(
                {"role": "tool", "content": text, **({"tool_call_id": i} if i else {})}
                for i, text in results
            ),
            {"role": "assistant", "content": "done"},
        ]
    }


def _call_results(tmp_path: Path, record: dict[str, object]) -> pl.DataFrame:
    path = tmp_path / "run.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    steps = evalnb.load(path, format="agent_chat").steps
    return steps.filter(pl.col("role") == "assistant", pl.col("tool_name").is_not_null())


def test_results_answered_in_reverse_order_reach_their_calls(tmp_path: Path) -> None:
    n = 4_000  # quadratic before: 1.8 s at 4k, 63 s at 32k (bench_hostile_agents: 32k)
    ids = [f"c{k}" for k in range(n)]
    record = _conversation(ids, [(i, f"result of {i}") for i in reversed(ids)])
    calls = _call_results(tmp_path, record)
    assert calls["tool_result"].to_list() == [f"result of {i}" for i in ids]


def test_calls_sharing_an_id_are_answered_in_order_and_every_result_is_kept(
    tmp_path: Path,
) -> None:
    record = _conversation(
        ["x", "x", "y", "x"], [("x", "r1"), ("y", "ry"), ("x", "r2"), ("x", "r3"), ("x", "late")]
    )
    calls = _call_results(tmp_path, record)
    assert calls["tool_result"].to_list() == ["r1", "r2", "ry", "r3"]
    tools = evalnb.load(tmp_path / "run.jsonl", format="agent_chat").steps.filter(
        pl.col("role") == "tool"
    )
    # The late fifth result keeps its own row, named after the last call with its id.
    assert tools["content"].to_list() == ["r1", "ry", "r2", "r3", "late"]
    assert tools["tool_name"].to_list() == ["t0", "t2", "t1", "t3", "t3"]


def test_results_without_ids_answer_the_earliest_open_call(tmp_path: Path) -> None:
    record = _conversation(["a", "b", "c"], [("b", "rb"), (None, "first open"), (None, "next")])
    calls = _call_results(tmp_path, record)
    assert calls["tool_result"].to_list() == ["first open", "rb", "next"]


# --- the embedding cache ---------------------------------------------------------------------


def _cache_with_part(tmp_path: Path, dim: int | None = None) -> tuple[VectorCache, Path]:
    cache = VectorCache(tmp_path, "model-x", dim)
    cache.put(text_keys(pl.Series(["a", "b", "c"])), np.eye(3, 4, dtype=np.float32))
    cache.flush()
    (part,) = cache.parts()
    return cache, part


def _fresh_process_lookup(folder: Path, dim: int) -> list[str]:
    """Look the three keys up in a new process (no part checked there yet); its warnings."""
    code = (
        "import sys, warnings, polars as pl\n"
        "from pathlib import Path\n"
        "from evalnb.models.vector_cache import VectorCache, text_keys\n"
        "with warnings.catch_warnings(record=True) as seen:\n"
        "    warnings.simplefilter('always')\n"
        f"    c = VectorCache(Path(sys.argv[1]), 'model-x', {dim})\n"
        "    found, got = c.get(text_keys(pl.Series(['a', 'b', 'c'])))\n"
        "print(found.size)\n"
        "for w in seen: print(w.message)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(folder)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return out.stdout.splitlines()


def test_a_part_with_flipped_bytes_is_set_aside_never_read(tmp_path: Path) -> None:
    _, part = _cache_with_part(tmp_path)
    data = bytearray(part.read_bytes())
    data[-3] ^= 0x40  # one vector byte flipped: the size is unchanged
    part.write_bytes(bytes(data))
    found, *warned = _fresh_process_lookup(tmp_path, 4)
    assert found == "0" and any("checksum" in w for w in warned)
    assert part.with_name(part.name + ".broken").is_file()


def test_a_part_of_another_width_is_set_aside(tmp_path: Path) -> None:
    _cache_with_part(tmp_path)
    found, *warned = _fresh_process_lookup(tmp_path, 8)
    assert found == "0" and any("4 wide, the model's are 8" in w for w in warned)


def test_a_fifo_in_a_parts_place_is_refused_without_waiting(tmp_path: Path) -> None:
    _, part = _cache_with_part(tmp_path)
    part.unlink()
    os.mkfifo(part)  # nobody ever writes to it: opening it for reading would wait forever
    found, *warned = _fresh_process_lookup(tmp_path, 4)
    assert found == "0" and any("not a regular file" in w for w in warned)


def test_nan_vectors_are_not_cached(tmp_path: Path) -> None:
    cache = VectorCache(tmp_path, "model-x", 2)
    vectors = np.array([[1.0, 0.0], [np.nan, 1.0]], dtype=np.float32)
    cache.put(text_keys(pl.Series(["ok", "nan"])), vectors)
    cache.flush()
    found, got = cache.get(text_keys(pl.Series(["ok", "nan"])))
    assert found.tolist() == [0] and got.tolist() == [[1.0, 0.0]]


def test_a_killed_writers_temporary_file_is_swept(tmp_path: Path) -> None:
    cache, part = _cache_with_part(tmp_path)
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    debris = part.parent / f".{part.stem}x.vec.{dead}.0123abcd.tmp"
    debris.write_bytes(b"half a part")
    cache.put(text_keys(pl.Series(["d"])), np.ones((1, 4), dtype=np.float32))
    cache.flush()
    assert not debris.exists()


# --- texts longer than a model reads -----------------------------------------------------------


def test_a_huge_answer_is_cut_before_it_is_tokenized_and_embeds_as_the_whole() -> None:
    from sentence_transformers import SentenceTransformer

    from evalnb.models.encoder import TextEncoder
    from evalnb.models.engine import CLIP_CHARS_PER_TOKEN
    from evalnb.models.resolve import resolve_model
    from evalnb_testkit.precision import EMBEDDING_TOL

    words = [f"word{k % 997} alpha,beta" for k in range(60_000)]  # 1.2 MB
    huge = " ".join(words)
    encoder = TextEncoder("all-MiniLM-L6-v2", cache_dir=None)
    engine = encoder.engine
    (cut,) = engine.clip([huge])
    assert len(cut) <= engine.max_length * CLIP_CHARS_PER_TOKEN < len(huge) // 50
    # The first max_length tokens are the whole text's, so the vector is the same.
    first = engine.max_length
    assert engine.token_ids([cut])[0][:first] == engine.token_ids([huge])[0][:first]
    assert (
        engine.token_ids([huge], max_tokens=first, from_end=True)[0][-first:]
        == (engine.token_ids([huge])[0][-first:])
    )
    reference = SentenceTransformer(resolve_model("all-MiniLM-L6-v2")[0], device="cpu")
    want = reference.encode([huge])
    assert np.abs(encoder.encode([huge]) - want).max() <= EMBEDDING_TOL


def test_text_a_normaliser_deletes_is_not_cut_short() -> None:
    """Characters the tokenizer drops give no token: the bound grows until enough remain."""
    from evalnb.models.encoder import TextEncoder

    engine = TextEncoder("all-MiniLM-L6-v2", cache_dir=None).engine
    text = "\u200b" * 20_000 + " " + " ".join(["real words"] * 2_000)
    (cut,) = engine.clip([text])
    first = engine.max_length
    assert engine.token_ids([cut])[0][:first] == engine.token_ids([text])[0][:first]


# --- Inspect logs -------------------------------------------------------------------------------


def _inspect_log(references: int, text: str) -> dict[str, object]:
    return {
        "version": 2,
        "status": "success",
        "eval": {"model": "m", "task": "t"},
        "samples": [
            {
                "id": 1,
                "epoch": 1,
                "messages": [
                    {"role": "user", "content": "attachment://big"},
                    *(
                        {"role": "assistant", "content": "attachment://big"}
                        for _ in range(references)
                    ),
                ],
                "attachments": {"big": text},
            }
        ],
    }


def test_an_attachment_referred_to_many_times_is_bounded_in_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalnb.io import inspect_log

    path = tmp_path / "log.json"
    path.write_text(json.dumps(_inspect_log(300, "x" * 10_000)), encoding="utf-8")
    # The file is 10 kB; resolved, it would be 3 MB: over a bound of 1 MB it is refused,
    # naming the reference that crossed it and the way to raise the bound.
    monkeypatch.setattr(inspect_log, "MAX_RESOLVED_CHARS", 1_000_000)
    with pytest.raises(evalnb.InputError, match=r"EVALNB_MAX_RESOLVED_CHARS") as caught:
        evalnb.load(path, format="inspect_log")
    assert "samples[0].messages[100]" in str(caught.value).replace("/", ".")
    monkeypatch.setattr(inspect_log, "MAX_RESOLVED_CHARS", 4_000_000)
    lab = evalnb.load(path, format="inspect_log")
    assert lab.steps.height == 301


def test_step_alignment_aligns_the_first_lists_of_a_text_with_thousands() -> None:
    from evalnb.evaluation.families.agents.step_alignment import MAX_LISTS

    lists = "\n\n".join(
        f"Procedure {k}:\n1. open item {k}\n2. close item {k}" for k in range(2_000)
    )  # 2,000 lists each side: 4M pairs of lists before the bound
    lab = evalnb.load(pl.DataFrame({"prompt": ["q"], "actual": [lists], "context": [[lists]]}))
    scored = evalnb.evaluate(lab, ["step_alignment"], progress=False)
    values = dict(zip(scored.scores["metric"], scored.scores["value"], strict=True))
    assert values["edits"] == 0 and values["context_steps"] == 2
    aligned = json.loads(scored.scores["detail"][0])["aligned"]
    assert aligned["matched"] == 2
    assert int(aligned["context_steps"][0].split()[-1]) < MAX_LISTS


# --- live agents: what tools and models send back ------------------------------------------------


class _Unprintable:
    def __str__(self) -> str:
        raise RuntimeError("no text")

    __repr__ = __str__


def _hostile_agent(messages: list[dict[str, object]]) -> str | list[dict[str, object]]:
    """Ask each hostile tool once, with arguments holding an escaped surrogate and the key."""
    if any(m["role"] == "tool" for m in messages):
        return "done"
    args = '{"q": "\\ud800 sk-test-0000"}'
    return [
        {"name": n, "arguments": args}
        for n in ("tuple_keys", "circular", "unprintable", "surrogate", "sleeps")
    ]


def test_hostile_tools_and_replies_end_as_errors_of_their_steps(tmp_path: Path) -> None:
    import threading

    from evalnb_testkit.llm_server import LoopbackLLM

    circular: list[object] = []
    circular.append(circular)
    never = threading.Event()
    tools = {
        "tuple_keys": lambda q: {(1, 2): 3},
        "circular": lambda q: circular,
        "unprintable": lambda q: _Unprintable(),
        "surrogate": lambda q: "a\ud800",
        "sleeps": lambda q: never.wait(),
    }
    lab = evalnb.load(pl.DataFrame({"prompt": ["go"]}))
    with LoopbackLLM(agent=_hostile_agent) as server:
        client = evalnb.LLMClient(server.base_url, "m", api_key="sk-test-0000", max_retries=0)
        ran = evalnb.run_suite(
            lab, client, ["agent"], tools=tools, tool_timeout_s=0.5, progress=False
        )
    never.set()
    assert ran.outputs["actual"].to_list() == ["done"]
    calls = ran.steps.filter(pl.col("role") == "assistant", pl.col("tool_name").is_not_null())
    by_tool = {r["tool_name"]: r for r in calls.to_dicts()}
    assert by_tool["tuple_keys"]["tool_result"] == "{(1, 2): 3}"
    assert by_tool["circular"]["tool_result"] == "[[...]]"
    assert "cannot be written as text" in by_tool["unprintable"]["tool_result"]
    assert by_tool["surrogate"]["tool_result"] == "a\\ud800"
    assert "did not return within tool_timeout_s=0.5" in by_tool["sleeps"]["error"]
    # The key the model echoed in its arguments is masked before anything is stored.
    assert not any("sk-test-0000" in (a or "") for a in calls["tool_args"].to_list())
    saved = ran.save(tmp_path / "lab.duckdb")
    assert b"sk-test-0000" not in saved.read_bytes()
    # The escaped surrogate in the arguments stays valid JSON.
    assert all(json.loads(a)["q"].startswith("\ud800") for a in calls["tool_args"].to_list())


def test_a_reply_of_a_hundred_thousand_brackets_is_an_error_not_a_crash() -> None:
    from evalnb_testkit.llm_server import LoopbackLLM

    lab = evalnb.load(pl.DataFrame({"prompt": ["go"]}))
    with LoopbackLLM(raw=lambda _: (200, b"[" * 100_000)) as server:
        client = evalnb.LLMClient(server.base_url, "m", max_retries=0)
        ran = evalnb.run_suite(lab, client, ["m"], progress=False)
    assert "malformed reply body" in str(ran.outputs["error"][0])


# --- comparisons over long runs ------------------------------------------------------------------


def _python_weighted_lcs(scores: np.ndarray) -> float:
    """DeepEval's loop as it is written, on a score table (0 where names differ)."""
    m, n = scores.shape
    dp = [[0.0] * (n + 1) for _ in range(m + 1)]
    for i in range(1, m + 1):
        for j in range(1, n + 1):
            s = float(scores[i - 1, j - 1])
            dp[i][j] = max(dp[i - 1][j], dp[i][j - 1], dp[i - 1][j - 1] + s if s > 0 else 0)
    i, j, total = m, n, 0.0
    while i > 0 and j > 0:
        if dp[i][j] == dp[i - 1][j]:
            i -= 1
        elif dp[i][j] == dp[i][j - 1]:
            j -= 1
        else:
            total += dp[i][j] - dp[i - 1][j - 1]
            i, j = i - 1, j - 1
    return total


def test_the_compiled_weighted_lcs_is_deepevals_loop() -> None:
    from evalnb.evaluation.families.agents.lcs_kernel import weighted_lcs

    rng = np.random.default_rng(3)
    for shape in ((1, 1), (7, 3), (60, 80), (150, 120)):
        names = rng.integers(0, 4, size=shape)
        table = np.where(names == 0, rng.choice([0.0, 0.25, 0.5, 1.0], size=shape), 0.0)
        assert weighted_lcs(table) == _python_weighted_lcs(table)


def test_ordered_tool_correctness_is_bounded_and_says_so_past_the_bound() -> None:
    from evalnb.evaluation.families.agents.tool_calls import (
        MAX_CALL_PAIRS,
        CallsOverBound,
        deepeval_tool_correctness,
    )

    calls = [(f"t{k % 7}", {"x": k % 3}, None) for k in range(1_500)]
    options = {"exact": False, "ordering": True, "arguments": True}
    assert deepeval_tool_correctness(calls, calls, **options) == 1.0  # 2.25M pairs, compiled
    many = [("t", {}, None)] * 12_000
    assert len(many) ** 2 > MAX_CALL_PAIRS
    with pytest.raises(CallsOverBound, match="MAX_CALL_PAIRS"):
        deepeval_tool_correctness(many, many, **options)


def test_a_list_item_with_a_hundred_thousand_continuation_lines_is_read_in_linear_time() -> None:
    from evalnb.text.enumerations import MAX_STEP_CHARS, enumerations

    text = "1. a\n" + "  cont\n" * 100_000 + "2. b"
    (steps,) = enumerations(text)
    assert len(steps) == 2 and len(steps[0]) == MAX_STEP_CHARS and steps[1] == "b"
    assert steps[0].startswith("a cont cont")


def test_a_judge_verdict_of_nan_is_not_understood() -> None:
    from evalnb.llm.parsed import parse_json

    for reply in ('{"score": NaN}', '{"score": Infinity}', '{"verdict": -Infinity}'):
        parsed = parse_json(reply)
        assert not parsed.ok and "not a number JSON allows" in parsed.note


# --- numbers in agent records ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("sample", 1e300),
        ("sample", 2**70),
        ("sample", -1),
        ("tokens", 1e300),
        ("tokens", -5),
        ("tokens", 2.5),
    ],
)
def test_an_out_of_range_count_is_a_located_error(tmp_path: Path, field: str, value: float) -> None:
    record: dict[str, object] = {
        "messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]
    }
    if field == "sample":
        record["sample"] = value
    else:
        record["messages"][1]["tokens"] = value  # type: ignore[index]
    path = tmp_path / "run.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    with pytest.raises(evalnb.InputError, match=rf"{field}.*whole number from 0 to 2\*\*53"):
        evalnb.load(path, format="agent_chat")


def test_span_attributes_of_odd_shapes_are_read_or_refused_with_their_place(tmp_path: Path) -> None:
    from evalnb.io.span_messages import llm_messages

    # "²" passes str.isdigit but not int(): not a message index, so not a message.
    attrs = {
        "llm.input_messages.².message.role": "user",
        "llm.input_messages.0.message.role": "user",
        "llm.input_messages.0.message.content": "hi",
        "llm.input_messages." + "9" * 5000 + ".message.role": "user",
    }
    assert [m["content"] for m in llm_messages(attrs, "input")] == ["hi"]
    span = {
        "resourceSpans": [
            {
                "scopeSpans": [
                    {
                        "spans": [
                            {
                                "traceId": "t",
                                "spanId": "s",
                                "name": "agent",
                                "startTimeUnixNano": "9" * 4000,
                                "endTimeUnixNano": "1",
                                "attributes": [],
                            }
                        ]
                    }
                ]
            }
        ]
    }
    path = tmp_path / "spans.json"
    path.write_text(json.dumps(span), encoding="utf-8")
    with pytest.raises(evalnb.InputError, match="startTimeUnixNano"):
        evalnb.load(path, format="agent_spans")


# --- round trips --------------------------------------------------------------------------------


def test_a_jsonl_whose_first_run_made_no_tool_call_reads_as_agents_and_round_trips(
    tmp_path: Path,
) -> None:
    plain = {
        "id": "a",
        "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": None}],
    }
    tooled = _conversation(["c1"], [("c1", "42")])
    path = tmp_path / "runs.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in (plain, tooled)) + "\n", encoding="utf-8")
    assert evalnb.detect_format(path) == "agent_chat"
    lab = evalnb.load(path)
    assert lab.outputs.height == 2 and lab.steps.filter(pl.col("role") == "tool").height == 1
    back = evalnb.load(lab.export(tmp_path / "back.jsonl", format="agent_chat"))
    for table in ("cases", "outputs", "steps", "reference_calls"):
        assert back.table(table).equals(lab.table(table)), table


def test_the_case_panel_cuts_a_huge_tool_name_like_every_field(tmp_path: Path) -> None:
    from evalnb.transforms.cases import MAX_STEP_CHARS, run_steps

    huge = "t" * 10_000_000
    record = _conversation(["c1"], [("c1", "ok")])
    record["messages"][1]["tool_calls"][0]["function"]["name"] = huge  # type: ignore[index]
    path = tmp_path / "run.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    lab = evalnb.load(path, format="agent_chat")
    row = lab.outputs.row(0, named=True)
    steps = run_steps(lab, row["case_id"], row["model"], row["sample"])
    named = [s["tool_name"] for s in steps if s["tool_name"]]
    assert named and all(len(n) < MAX_STEP_CHARS + 100 for n in named)


def test_fact_check_search_over_passages_without_a_word_finds_nothing() -> None:
    from evalnb.evaluation.families.judges.fact_check import ContextSearch

    assert ContextSearch(["!!!", "..."])("anything") == "no passages found"


def test_inspect_scores_that_are_not_finite_or_collide_are_said_so(tmp_path: Path) -> None:
    def log(scores: dict[str, object]) -> Path:
        doc = _inspect_log(0, "x")
        doc["samples"][0]["scores"] = scores  # type: ignore[index]
        path = tmp_path / "log.json"
        # Python writes NaN and Infinity, as Inspect's own JSON can hold them.
        path.write_text(json.dumps(doc), encoding="utf-8")
        return path

    lab = evalnb.load(
        log(
            {
                "big": {"value": 10**400},
                "nan": {"value": float("nan")},
                "inf": {"value": float("inf")},
                "ok": {"value": 0.5},
            }
        )
    )
    values = dict(zip(lab.scores["metric"], lab.scores["value"], strict=True))
    assert values["ok"] == 0.5 and values["big"] is None and values["nan"] is None
    assert values["inf"] is None
    assert "not a finite number" in lab.scores.filter(pl.col("metric") == "inf")["detail"][0]
    board = lab.leaderboard()
    assert board.filter(pl.col("metric") == "ok")["mean"].to_list() == [0.5]
    with pytest.raises(evalnb.InputError, match="'a/b' also comes from"):
        evalnb.load(log({"a/b": {"value": 1}, "a": {"value": {"b": 0}}}))


def test_a_zip_member_inflating_past_its_declared_size_stops_there(tmp_path: Path) -> None:
    import struct
    import zipfile

    path = tmp_path / "archive.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("interpretation.json", b" " * 50_000_000 + b"{}")
    data = bytearray(path.read_bytes())
    # Declare 100 bytes unzipped, in the local header and in the central directory.
    local = data.index(b"PK\x03\x04")
    struct.pack_into("<I", data, local + 22, 100)
    central = data.index(b"PK\x01\x02")
    struct.pack_into("<I", data, central + 24, 100)
    path.write_bytes(bytes(data))
    # Inflation stops at the declared 100 bytes: the member fails its CRC there, in
    # milliseconds, never holding the 50 MB it would give.
    with pytest.raises(evalnb.InputError, match=r"interpretation\.json"):
        evalnb.load(path)


def test_files_of_no_format_say_what_was_recognised(tmp_path: Path) -> None:
    import zipfile

    number = tmp_path / "five.json"
    number.write_text("5", encoding="utf-8")
    with pytest.raises(evalnb.InputError, match="one JSON int"):
        evalnb.load(number)
    log = tmp_path / "log.json"
    log.write_text(json.dumps({"status": "success", "eval": "not an object"}), encoding="utf-8")
    with pytest.raises(evalnb.InputError, match=r"eval"):
        evalnb.load(log)
    eval_zip = tmp_path / "run.eval"
    with zipfile.ZipFile(eval_zip, "w") as zf:
        zf.writestr("header.json", "{}")
        zf.writestr("_journal/start.json", "{}")
    with pytest.raises(evalnb.InputError, match="inspect log convert --to json"):
        evalnb.load(eval_zip)
    spans = tmp_path / "spans.jsonl"
    flat = {
        "name": "db query",
        "context": {"trace_id": "t", "span_id": "s"},
        "start_time": "2024-01-01T00:00:00Z",
        "end_time": "2024-01-01T00:00:01Z",
        "attributes": {"db.system": "postgres"},
    }
    spans.write_text(json.dumps(flat) + "\n", encoding="utf-8")
    with pytest.raises(evalnb.InputError, match="no conversation in them"):
        evalnb.load(spans, format="agent_spans")


def test_odd_span_values_are_read_or_refused_with_their_place(tmp_path: Path) -> None:
    def otlp(attributes: list[dict[str, object]]) -> Path:
        span = {
            "traceId": "t",
            "spanId": "s",
            "name": "llm",
            "startTimeUnixNano": "1",
            "endTimeUnixNano": "2",
            "attributes": attributes,
        }
        path = tmp_path / "spans.json"
        path.write_text(
            json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}), encoding="utf-8"
        )
        return path

    kind = {"key": "openinference.span.kind", "value": {"stringValue": "LLM"}}
    role = {"key": "llm.input_messages.0.message.role", "value": {"stringValue": "user"}}
    text = {"key": "llm.input_messages.0.message.content", "value": {"stringValue": "hi"}}
    reply = [
        {"key": "llm.output_messages.0.message.role", "value": {"stringValue": "assistant"}},
        {"key": "llm.output_messages.0.message.content", "value": {"stringValue": "ok"}},
    ]
    nan_tokens = {"key": "llm.token_count.total", "value": {"doubleValue": float("nan")}}
    with pytest.raises(evalnb.InputError, match="tokens"):
        evalnb.load(otlp([kind, role, text, *reply, nan_tokens]), format="agent_spans")
    listed = {"key": "x", "value": {"kvlistValue": {"values": [{"key": [1], "value": {}}]}}}
    with pytest.raises(evalnb.InputError, match="string key of a kvlistValue"):
        evalnb.load(otlp([kind, role, text, listed]), format="agent_spans")
    from evalnb.io.span_messages import llm_messages

    odd = {"gen_ai.input.messages": json.dumps([{"role": "user", "parts": 5}])}
    assert [m["role"] for m in llm_messages(odd, "input")] in ([], ["user"])


# --- metric objects in ragas' shape ---------------------------------------------------------------


class _Result:
    def __init__(self, value: object, *, raising: bool = False) -> None:
        self._value, self._raising = value, raising

    @property
    def value(self) -> object:
        if self._raising:
            raise RuntimeError("the value property fails")
        return self._value

    reason = None


class _Metric:
    """A metric object in ragas' shape (a name and ``ascore``), answering per prompt."""

    name = "hostile"
    allowed_values = (0.0, 1.0)

    async def ascore(self, user_input: str, response: str) -> object:
        import asyncio

        answers: dict[str, object] = {
            "huge": _Result(10**400),
            "raises": _Result(0.5, raising=True),
            "high": _Result(5.0),
            "low": _Result(-3.0),
            "f32": _Result(np.float32(0.25)),
            "i64": _Result(np.int64(1)),
            "object": _Result(object()),
        }
        if user_input == "hangs":
            await asyncio.Event().wait()
        return answers[user_input]


def test_a_ragas_shaped_metric_scores_what_it_can_and_says_why_for_the_rest() -> None:
    prompts = ["huge", "raises", "high", "low", "f32", "i64", "object", "hangs"]
    lab = evalnb.load(pl.DataFrame({"prompt": prompts, "actual": ["a"] * len(prompts)}))
    scored = evalnb.evaluate(lab, [_Metric()], timeout_s=0.5, progress=False)
    rows = scored.scores.join(scored.cases.select("case_id", "prompt"), on="case_id")
    got = {r["prompt"]: (r["value"], r["detail"] or "") for r in rows.iter_rows(named=True)}
    assert got["f32"][0] == 0.25 and got["i64"][0] == 1.0
    assert got["huge"][0] is None and "no number" in got["huge"][1]
    assert "the value property fails" in got["raises"][1]
    assert "outside the metric's range [0, 1]" in got["high"][1]
    assert got["low"][0] is None
    assert "no number" in got["object"][1]
    assert "did not return within timeout_s=0.5" in got["hangs"][1]


# --- ragas datasets: CSV cells and duck-typed objects (cases 12, 13) ------------------------------


def _csv(tmp_path: Path, header: list[str], rows: list[list[str]]) -> Path:
    path = tmp_path / "ragas.csv"
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def test_ragas_csv_text_that_looks_like_a_literal_stays_text(tmp_path: Path) -> None:
    # What ragas' to_csv writes for these samples (its DictWriter: str() of every value).
    path = _csv(
        tmp_path,
        ["user_input", "retrieved_contexts", "response", "reference", "persona_name"],
        [
            ["[URGENT] reset my password", "['[x]', '{y}']", '{"answer": 42}', "[2, 3, 5]", "{1}"],
            ["{not a dict", "", "[2, 3, 5]", "", ""],
        ],
    )
    lab = evalnb.load(path, model="rag")
    assert lab.cases["prompt"].to_list() == ["[URGENT] reset my password", "{not a dict"]
    assert lab.cases["expected"].to_list() == [["[2, 3, 5]"], []]
    assert lab.outputs["actual"].to_list() == ['{"answer": 42}', "[2, 3, 5]"]
    assert lab.outputs["context"].to_list() == [["[x]", "{y}"], []]
    assert json.loads(lab.cases["extra"][0]) == {"persona_name": "{1}"}  # a field of the user's


def test_ragas_csv_multi_turn_samples_are_conversations(tmp_path: Path) -> None:
    turns = (
        "[{'content': 'Weather in Oslo?', 'type': 'human'}, {'content': '', 'type': 'ai', "
        "'tool_calls': [{'name': 'weather', 'args': {'city': 'Oslo'}}]}, "
        "{'content': 'rain', 'type': 'tool'}, {'content': 'Rain in Oslo.', 'type': 'ai'}]"
    )
    path = _csv(
        tmp_path,
        ["user_input", "reference", "reference_tool_calls"],
        [[turns, "Rain.", "[{'name': 'weather', 'args': {'city': 'Oslo'}}]"]],
    )
    lab = evalnb.load(path, model="bot")
    assert lab.outputs["actual"].to_list() == ["Rain in Oslo."]
    call = lab.steps.filter(pl.col("tool_name") == "weather", pl.col("role") == "assistant")
    assert call["tool_result"].to_list() == ["rain"]


@pytest.mark.parametrize(
    ("cell", "found"),
    [
        ("{1, 2}", "a set"),
        ("[1j]", "a complex"),
        ("{'k': b'x'}", "a bytes"),
        ("{(1, 2): 3}", "a tuple key"),
        ("[1e999]", "the number inf"),
        ("[__import__('os')]", "literal"),
    ],
)
def test_ragas_csv_cells_json_cannot_hold_are_located_errors(
    tmp_path: Path, cell: str, found: str
) -> None:
    path = _csv(tmp_path, ["user_input", "response", "rubrics"], [["q", "a", cell]])
    with pytest.raises(evalnb.InputError) as caught:
        evalnb.load(path)
    assert "line 2" in str(caught.value)
    assert "rubrics" in str(caught.value)
    assert found in str(caught.value)


class _EvaluationDataset:
    def __init__(self, records: object) -> None:
        self.records = records

    def to_list(self) -> object:
        return self.records


class _EvaluationResult:
    def __init__(self, records: list[dict[str, object]], scores: object) -> None:
        self.dataset = _EvaluationDataset(records)
        self.scores = scores


def _endless() -> object:
    while True:
        yield {"user_input": "q", "response": "a"}


def test_a_duck_typed_dataset_is_bounded_and_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ragas_data, "MAX_OBJECT_SAMPLES", 1_000)
    with pytest.raises(evalnb.InputError, match="at most 1,000 samples"):
        evalnb.load(_EvaluationDataset(_endless()))
    with pytest.raises(evalnb.InputError, match="at most 1,000 samples"):
        evalnb.load(_EvaluationResult([{"user_input": "q", "response": "a"}], _endless()))
    loop: list[object] = ["c"]
    loop.append(loop)
    for value, found in [
        (object(), "a object"),
        ({"a", "b"}, "a set"),
        (loop, "a list that contains itself"),
        ("a\ud800", "lone surrogate"),
        (_nested(600), "nested more than 500"),
        (float("nan"), "the number nan"),
    ]:
        record = {"user_input": "q", "response": "a", "retrieved_contexts": value}
        with pytest.raises(evalnb.InputError) as caught:
            evalnb.load(_EvaluationDataset([{"user_input": "ok", "response": "a"}, record]))
        assert "[1]" in str(caught.value) and "retrieved_contexts" in str(caught.value)
        assert found in str(caught.value)
    with pytest.raises(evalnb.InputError, match="a dict of sample fields"):
        evalnb.load(_EvaluationDataset(["not a sample"]))
    big = evalnb.load(_EvaluationDataset([{"user_input": "q", "response": "a", "n": 10**400}]))
    assert json.loads(big.cases["extra"][0])["n"] == 10**400  # JSON holds it, so the lab does


def _nested(depth: int) -> list[object]:
    value: list[object] = []
    for _ in range(depth):
        value = [value]
    return value


def test_result_scores_that_are_no_finite_number_are_kept_with_the_reason() -> None:
    records = [{"user_input": f"q{k}", "response": "a"} for k in range(5)]
    scores = [
        {"m": 10**400},
        {"m": np.float32(0.25)},
        {"m": {"a"}},
        {"m": True},
        {"m": float("inf")},
    ]
    lab = evalnb.load(_EvaluationResult(records, scores), model="rag")
    got = lab.scores.join(lab.cases.select("case_id", "prompt"), on="case_id").sort("prompt")
    assert got["value"].to_list() == [None, 0.25, None, 1.0, None]
    assert "10000" in json.loads(got["detail"][0])["reason"]
    with pytest.raises(evalnb.InputError, match="a dict of metric values"):
        evalnb.load(_EvaluationResult(records[:1], [5]))


def test_what_the_agent_fuzz_found_reads_or_is_refused(tmp_path: Path) -> None:
    # A ragas list whose first item is null: Arrow's JSON reader builds it wrong (offsets
    # past its values), so the record path reads it and names the field.
    path = tmp_path / "ragas.jsonl"
    path.write_text(
        json.dumps({"user_input": "q", "response": "a", "retrieved_contexts": [None, "x"]}) + "\n",
        encoding="utf-8",
    )
    with pytest.raises(evalnb.InputError, match="retrieved_contexts"):
        evalnb.load(path)
    # An operation name that is a list (attributes hold any JSON value): a span of no kind.
    span = {
        "traceId": "t",
        "spanId": "s",
        "startTimeUnixNano": "1",
        "attributes": [
            {"key": "gen_ai.operation.name", "value": {"arrayValue": {"values": []}}},
        ],
    }
    spans = tmp_path / "spans.json"
    spans.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}))
    with pytest.raises(evalnb.InputError, match=r"kinds \[.OTHER.\] and no conversation"):
        evalnb.load(spans, format="agent_spans")
