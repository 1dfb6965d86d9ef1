"""Agent formats: Inspect AI logs and OpenInference / OpenTelemetry spans made by the tools
themselves (in the peers' environment, ``.venv-peers``), and the ``agent_chat`` export back."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import evalnb
from evalnb.lab.errors import InputError

ROOT = Path(__file__).resolve().parents[2]
PEERS = ROOT / ".venv-peers" / "bin" / "python"


def _peer(script: str, out: Path, *modules: str) -> list[dict[str, object]]:
    """Run a peer script that writes files under ``out`` and prints what it expects."""
    if not PEERS.is_file():
        pytest.skip("the peers' environment .venv-peers is built by scripts/test")
    probe = subprocess.run(
        [str(PEERS), "-c", "; ".join(f"import {m}" for m in modules)],
        capture_output=True,
        check=False,
    )
    if probe.returncode:
        pytest.skip(f".venv-peers lacks {modules}")
    done = subprocess.run(
        [str(PEERS), str(ROOT / "evalnb_testkit" / script), str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={**os.environ, "INSPECT_LOG_LEVEL": "warning"},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    expected: list[dict[str, object]] = json.loads(done.stdout)
    return expected


def _calls(lab: evalnb.Lab, case_id: str, model: str, sample: int) -> list[list[object]]:
    rows = lab.steps.filter(case_id=case_id, model=model, sample=sample, role="assistant")
    rows = rows.filter(pl.col("tool_name").is_not_null()).sort("step")
    return [[r["tool_name"], json.loads(r["tool_args"])] for r in rows.iter_rows(named=True)]


def _round_trip(lab: evalnb.Lab, tmp_path: Path) -> None:
    back = evalnb.load(lab.export(tmp_path / "back.jsonl", format="agent_chat"))
    for table in ("cases", "outputs", "steps", "reference_calls"):
        assert_frame_equal(lab.table(table), back.table(table))


def test_inspect_logs_of_a_real_eval_load_with_steps_and_scores(tmp_path: Path) -> None:
    expected = _peer("peer_inspect.py", tmp_path, "inspect_ai")
    files = sorted({str(e["file"]) for e in expected})
    assert len(files) == 2
    assert {evalnb.detect_format(f) for f in files} == {"inspect_log"}
    lab = evalnb.load(files[0]).merge(evalnb.load(files[1]))
    assert lab.outputs.height == len(expected) == 12  # 3 samples x 2 epochs x 2 agents
    for e in expected:
        key = {"case_id": e["id"], "model": e["model"], "sample": int(e["epoch"]) - 1}  # type: ignore[call-overload]
        out = lab.outputs.filter(**key).row(0, named=True)
        assert out["actual"] == e["completion"]
        assert _calls(lab, **key) == e["calls"]
        steps = lab.steps.filter(**key)
        assert steps["step"].n_unique() == e["messages"]
        assert steps.filter(role="tool")["error"].drop_nulls().to_list() == e["tool_errors"]
        scores = lab.scores.filter(**key, evaluator="inspect")
        assert dict(zip(scores["metric"], scores["value"], strict=True)) == e["scores"]
    # Inspect's target is the case's expected answer; the cases line up across the two logs.
    assert lab.cases.height == 3
    assert lab.cases.filter(case_id="paris")["expected"].to_list() == [["sunny, 21 C in Paris"]]
    # Agent b loops (the same call twice): the judge-free metrics see it.
    scored = evalnb.evaluate(lab, ["agent_steps"], progress=False)
    loops = scored.scores.filter(evaluator="agent_steps", metric="repeated_calls")
    by_model = loops.group_by("model").agg(pl.col("value").mean()).sort("model")
    assert by_model["value"].to_list()[0] == 0.0 < by_model["value"].to_list()[1]
    _round_trip(lab, tmp_path)


def test_openinference_spans_of_a_traced_agent_load_in_both_shapes(tmp_path: Path) -> None:
    expected = _peer("peer_spans.py", tmp_path, "openinference.instrumentation.openai")
    flat, otlp = tmp_path / "spans.jsonl", tmp_path / "otlp.json"
    assert evalnb.detect_format(flat) == evalnb.detect_format(otlp) == "agent_spans"
    labs = [evalnb.load(flat), evalnb.load(otlp)]
    for lab in labs:
        assert lab.outputs.height == len(expected) == 6
        for e in expected:
            case = lab.cases.filter(prompt=e["question"]).row(0, named=True)
            key = {"case_id": case["case_id"], "model": e["agent"], "sample": 0}
            assert lab.outputs.filter(**key)["actual"].item() == e["answer"]
            assert _calls(lab, **key) == e["calls"]  # type: ignore[arg-type]
            tools = lab.steps.filter(**key, role="tool")
            assert tools["error"].drop_nulls().to_list() == e["errors"]
            assert tools["latency_s"].min() >= 0  # type: ignore[operator]
            # The LLM spans' token counts (prompt + completion) are on the assistant steps.
            assert lab.steps.filter(**key, role="assistant")["tokens"].drop_nulls().len() > 0
            assert case["system"] == "Use the tool."
    # The two shapes of the same spans give the same lab (trace ids are spelled differently).
    a, b = (lab.outputs.drop("extra") for lab in labs)
    # (Flat spans' ISO times keep microseconds, OTLP's nanoseconds.)
    assert_frame_equal(a.sort("case_id", "model"), b.sort("case_id", "model"), abs_tol=1e-5)
    assert_frame_equal(
        labs[0].steps.sort("case_id", "model", "step"),
        labs[1].steps.sort("case_id", "model", "step"),
        abs_tol=1e-5,
    )
    run = json.loads(labs[0].outputs["extra"][0])
    assert run["conversation"].startswith("agent-") and run["traces"]
    _round_trip(labs[0], tmp_path)


def _otlp_attr(key: str, value: object) -> dict[str, object]:
    if isinstance(value, bool):
        return {"key": key, "value": {"boolValue": value}}
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    return {"key": key, "value": {"stringValue": value}}


def _genai_span(
    span_id: str, start: int, attrs: dict[str, object], *, error: str | None = None
) -> dict[str, object]:
    span: dict[str, object] = {
        "traceId": "5b8efff798038103d269b633813fc60c",
        "spanId": span_id,
        "name": span_id,
        "startTimeUnixNano": str(start * 10**9),
        "endTimeUnixNano": str(start * 10**9 + 5 * 10**8),
        "attributes": [_otlp_attr(k, v) for k, v in attrs.items()],
    }
    if error:
        span["status"] = {"code": 2, "message": error}
    return span


def test_opentelemetry_genai_spans_with_json_messages(tmp_path: Path) -> None:
    """The GenAI conventions' span attributes, transcribed from the semantic conventions."""
    user = [{"role": "user", "parts": [{"type": "text", "content": "Weather in Oslo and Bergen?"}]}]
    call = {
        "role": "assistant",
        "parts": [
            {"type": "tool_call", "id": "c1", "name": "weather", "arguments": {"city": "Oslo"}},
            {"type": "tool_call", "id": "c2", "name": "weather", "arguments": {"city": "Bergen"}},
        ],
    }
    results = {
        "role": "tool",
        "parts": [
            {"type": "tool_call_response", "id": "c1", "response": "rain"},
            {"type": "tool_call_response", "id": "c2", "response": "sun"},
        ],
    }
    final = {"role": "assistant", "parts": [{"type": "text", "content": "Oslo rain, Bergen sun."}]}
    spans = [
        _genai_span(
            "a1",
            0,
            {
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": "forecaster",
                "gen_ai.conversation.id": "conv-7",
            },
        ),
        _genai_span(
            "l1",
            1,
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.request.model": "m",
                "gen_ai.system_instructions": "Be brief.",
                "gen_ai.input.messages": json.dumps(user),
                "gen_ai.output.messages": json.dumps([call]),
                "gen_ai.usage.input_tokens": 20,
                "gen_ai.usage.output_tokens": 7,
            },
        ),
        _genai_span(
            "t1",
            2,
            {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "weather",
                "gen_ai.tool.call.id": "c1",
                "gen_ai.tool.call.result": "rain",
            },
        ),
        # The second tool span failed; its result reaches the lab through the next call's input.
        _genai_span(
            "t2",
            3,
            {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "weather"},
            error="timeout",
        ),
        _genai_span(
            "l2",
            4,
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.input.messages": json.dumps([*user, call, results]),
                "gen_ai.output.messages": json.dumps([final]),
            },
        ),
    ]
    path = tmp_path / "genai.json"
    path.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}))
    lab = evalnb.load(path)
    out = lab.outputs.row(0, named=True)
    assert (out["model"], out["actual"]) == ("forecaster", "Oslo rain, Bergen sun.")
    assert lab.cases["system"].item() == "Be brief."
    steps = lab.steps.sort("step")
    calls = steps.filter(role="assistant", tool_name="weather")
    assert calls["tool_args"].to_list() == ['{"city": "Oslo"}', '{"city": "Bergen"}']
    assert calls["tool_result"].to_list() == ["rain", None]
    assert calls["error"].to_list() == [None, "timeout"]  # t2 answered c2: the oldest open call
    assert calls["tokens"].to_list() == [27, None]


def test_bad_spans_and_logs_name_the_place(tmp_path: Path) -> None:
    span = _genai_span("l1", 1, {"gen_ai.operation.name": "chat"})
    span["attributes"] = [{"key": "gen_ai.usage.input_tokens", "value": {"intValue": "many"}}]
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}) + "\n")
    with pytest.raises(InputError, match=r"bad\.jsonl.*attributes\[0\].*integer"):
        evalnb.load(path)
    del span["traceId"]
    span["attributes"] = []
    path.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}) + "\n")
    with pytest.raises(InputError, match=r"spans\[0\].*traceId"):
        evalnb.load(path)
    log = {
        "version": 2,
        "status": "success",
        "eval": {"model": "m", "task": "t"},
        "samples": [
            {
                "id": 1,
                "epoch": 1,
                "input": "hi",
                "target": "",
                "attachments": {},
                "messages": [
                    {"role": "user", "content": "hi"},
                    {"role": "assistant", "content": "x", "tool_calls": [{"id": "c"}]},
                ],
            }
        ],
    }
    path = tmp_path / "log.json"
    path.write_text(json.dumps(log))
    with pytest.raises(InputError, match=r"samples\[0\]\.messages\[1\]\.tool_calls\[0\].*function"):
        evalnb.load(path)
    log["samples"][0]["messages"] = [{"role": "user", "content": "attachment://abc"}]  # type: ignore[index]
    path.write_text(json.dumps(log))
    with pytest.raises(InputError, match=r"attachment"):
        evalnb.load(path)


def test_agent_chat_export_reads_back_equal(tmp_path: Path) -> None:
    rec = {
        "id": "c1",
        "model": "a",
        "topic": "travel",
        "ticket": "T-1",
        "messages": [
            {"role": "system", "content": "S"},
            {"role": "user", "content": "Go"},
            {
                "role": "assistant",
                "content": "Looking.",
                "latency_s": 0.5,
                "tool_calls": [
                    {"id": "x", "function": {"name": "f", "arguments": '{"a": 1}'}},
                    {"id": "y", "function": {"name": "g", "arguments": "{broken"}},
                ],
            },
            {"role": "tool", "tool_call_id": "y", "content": "G", "error": "boom"},
            {"role": "tool", "tool_call_id": "x", "content": "F"},
            {"role": "assistant", "content": "Done.", "cost": 0.01},
        ],
        "reference_tool_calls": [{"name": "f", "args": {"a": 1}}],
    }
    other = {
        **rec,
        "model": "b",
        "messages": [
            *rec["messages"][:2],  # type: ignore[misc]
            {"role": "assistant", "content": "No.", "error": "refused"},
        ],
    }
    none = {
        "id": "c2",
        "model": "a",
        "reference_tool_calls": [],
        "messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hey"}],
    }
    path = tmp_path / "runs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in (rec, other, none)))
    lab = evalnb.load(path)
    assert lab.steps.filter(tool_name="g", role="assistant")["args_valid"].to_list() == [False]
    assert lab.outputs.filter(model="b")["error"].item() == "refused"
    _round_trip(lab, tmp_path)
    case = lab.cases.filter(case_id="c1").row(0, named=True)
    assert case["topic"] == "travel" and json.loads(case["extra"]) == {"ticket": "T-1"}


def test_weakness_grid_takes_the_tool_as_an_axis(tmp_path: Path) -> None:
    """Runs that called a failing tool score worse; the grid by tool points at it."""
    records = []
    for i in range(24):
        tool = ["search", "calendar", "mailer"][i % 3]
        broken = tool == "mailer"
        msgs = [
            {"role": "user", "content": f"task {i}"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "a", "function": {"name": "search", "arguments": "{}"}},
                    {"id": "b", "function": {"name": tool, "arguments": "{}"}},
                ],
            },
            {"role": "tool", "tool_call_id": "a", "content": "ok"},
            {
                "role": "tool",
                "tool_call_id": "b",
                "content": "x",
                **({"error": "503"} if broken else {}),
            },
            {"role": "assistant", "content": "done"},
        ]
        records.append(
            {"id": f"c{i}", "model": "bot", "messages": msgs, "topic": "ops" if i % 2 else "sales"}
        )
    path = tmp_path / "runs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    lab = evalnb.evaluate(evalnb.load(path), ["agent_steps"], progress=False)
    grid = lab.weakness("agent_steps", "tool_error_rate", axes=("tool", "question_type"))
    by_tool = {r["group"]: r for r in grid_rows(grid)}
    # Every run called search, so its group holds all 24; mailer's runs all failed half.
    assert by_tool["search"]["n"] == 24 and by_tool["mailer"]["n"] == 8
    assert by_tool["mailer"]["mean"] == 0.5 and by_tool["calendar"]["mean"] == 0.0
    assert grid._meta["axes"] == ["tool", "question type"]
    worst = grid.weaknesses()
    assert worst["topic"].to_list()[:1] == ["mailer"]  # the rows axis holds the tool
    grid.selected_cell = ["mailer", "(none)"]
    assert grid.selection().height == 8
    with pytest.raises(ValueError, match="neither 'tool', 'retrieval', 'media' nor a text column"):
        lab.weakness("agent_steps", "tool_error_rate", axes=("tool", "expected"))


def grid_rows(grid: object) -> list[dict[str, object]]:
    from evalnb.transforms.weakness import univariate

    return univariate(grid._index, "topic").to_dicts()  # type: ignore[attr-defined]


def test_fastest_and_cheapest_agents_are_named_only_when_their_intervals_separate(
    tmp_path: Path,
) -> None:
    records = []
    for i in range(30):
        cost = 0.01 + (i % 2) * 0.001  # the same for all three agents
        for model, latency in (
            ("quick", 1.0 + (i % 3) * 0.1),
            ("steady", 3.0 + (i % 5) * 0.1),
            ("twin", 3.0 + (i % 4) * 0.1),
        ):
            msgs = [
                {"role": "user", "content": f"job {i}"},
                {"role": "assistant", "content": "ok", "latency_s": latency, "cost": cost},
            ]
            records.append({"id": f"j{i}", "model": model, "messages": msgs})
    path = tmp_path / "runs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    ins = evalnb.load(path, format="agent_chat").insights().filter(insight_type="performance")
    said = dict(zip(ins["description"], ins["model"], strict=True))
    fastest = [d for d in said if "fastest" in d]
    assert len(fastest) == 1 and said[fastest[0]] == "quick" and "separates" in fastest[0]
    # steady and twin: the slowest is not clear (their intervals overlap), so nobody is named.
    assert not any("slowest" in d for d in said)
    # They all cost the same: nobody is the cheapest.
    cheapest = [d for d in said if "cheapest" in d]
    assert len(cheapest) == 1 and cheapest[0].startswith("No single cheapest model")


def test_steps_stay_on_disk_with_the_outputs_and_agents_score_the_same(tmp_path: Path) -> None:
    from evalnb.analysis.agent_problems import tool_problems
    from evalnb.transforms.cases import run_steps

    records = []
    for i in range(40):
        calls = [
            {"id": f"k{j}", "function": {"name": ["a", "b"][j % 2], "arguments": f'{{"n": {j}}}'}}
            for j in range(1 + i % 3)
        ]
        msgs = [
            {"role": "user", "content": f"q{i}"},
            {"role": "assistant", "content": None, "tool_calls": calls},
            *(
                {
                    "role": "tool",
                    "tool_call_id": c["id"],
                    "content": "r",
                    **({"error": "down"} if c["function"]["name"] == "b" else {}),
                }
                for c in calls
            ),
            {"role": "assistant", "content": "fin"},
        ]
        records.append(
            {
                "id": f"c{i}",
                "model": "m",
                "messages": msgs,
                "reference_tool_calls": [{"name": "a", "args": {"n": 0}}],
            }
        )
    path = tmp_path / "runs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    lab = evalnb.load(path)
    names = ["agent_steps", "tool_call_f1", "trajectory_match"]
    mem = evalnb.evaluate(lab, names, progress=False).scores
    store = tmp_path / "lab.duckdb"
    evalnb.load(path).save(store, on_disk=("outputs", "scores"))
    disk = evalnb.open(store)
    assert set(disk.on_disk) == {"outputs", "scores", "steps"}
    on_disk = evalnb.evaluate(disk, names, progress=False)
    assert "steps" not in on_disk._tables  # never loaded whole  # type: ignore[attr-defined]
    keys = ["case_id", "evaluator", "metric"]
    assert_frame_equal(on_disk.scan("scores").collect().sort(keys), mem.sort(keys))
    assert tool_problems(on_disk) == tool_problems(lab)
    panel = run_steps(on_disk, "c2", "m", 0)  # what the eye's case panel lists
    assert [s["tool_name"] for s in panel if s["tool_name"]] == ["a", "b", "a"]
    grid = on_disk.weakness("agent_steps", "tool_error_rate", axes=("tool", "topic"))
    assert sorted(grid._grid["topic"].to_list()) == ["a", "b"]
    assert "steps" not in on_disk._tables  # type: ignore[attr-defined]


def test_the_agents_demo_file_is_what_the_generator_makes(tmp_path: Path) -> None:
    from evalnb.api.demo_agents import build_demo_agents

    lab = build_demo_agents()
    fresh = lab.export(tmp_path / "demo_agents.jsonl", format="agent_chat")
    committed = ROOT / "data" / "demo_agents.jsonl"
    assert fresh.read_text(encoding="utf-8") == committed.read_text(encoding="utf-8"), (
        "data/demo_agents.jsonl is stale: run `python -m evalnb.api.demo_agents "
        "data/demo_agents.jsonl`"
    )
    loaded = evalnb.load(committed)
    for table in ("cases", "outputs", "steps", "reference_calls"):
        assert_frame_equal(loaded.table(table), lab.table(table))
    # The three agents differ as the demo says: atlas careful, breeze sloppy, cirrus loops.
    scored = evalnb.evaluate(loaded, ["tool_call_f1", "agent_steps"], progress=False)
    board = scored.leaderboard().filter(metric="tool_call_f1").sort("mean")
    assert board["model"][0] == "breeze"
    loops = (
        scored.scores.filter(metric="repeated_calls").group_by("model").agg(pl.col("value").sum())
    )
    assert dict(loops.iter_rows())["cirrus"] > 0 == dict(loops.iter_rows())["atlas"]
