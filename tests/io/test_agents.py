"""Agents: conversations with tool calls in, steps kept, tool-call metrics equal to ragas' and
DeepEval's own (run in their environment, ``.venv-peers``, which ``scripts/test`` builds)."""

from __future__ import annotations

import json
import os
import random
import subprocess
from pathlib import Path

import polars as pl
import pytest

import evalnb

ROOT = Path(__file__).resolve().parents[2]
PEERS = ROOT / ".venv-peers" / "bin" / "python"

_NAMES = ["search", "weather", "convert", "lookup"]


def _args(rng: random.Random) -> dict[str, object]:
    pool: list[object] = [
        1,
        2,
        1.5,
        2.0,
        "Paris",
        "paris",
        True,
        [1, 2],
        {"unit": "C"},
        {"unit": "F", "precise": True},
    ]
    return {
        k: rng.choice(pool)
        for k in rng.sample(["city", "value", "unit", "query"], rng.randint(0, 3))
    }


def _conversations(n: int, seed: int) -> list[dict[str, object]]:
    """Reference calls and mutated runs of them: dropped, repeated, swapped, changed, extra."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        ref = [[rng.choice(_NAMES), _args(rng)] for _ in range(rng.randint(0, 4))]
        calls = [list(c) for c in ref]
        for _ in range(rng.randint(0, 3)):
            kind = rng.choice(["drop", "repeat", "swap", "change", "extra", "reorder_args"])
            if kind == "drop" and calls:
                calls.pop(rng.randrange(len(calls)))
            elif kind == "repeat" and calls:
                calls.insert(rng.randrange(len(calls) + 1), list(rng.choice(calls)))
            elif kind == "swap" and len(calls) > 1:
                i, j = rng.sample(range(len(calls)), 2)
                calls[i], calls[j] = calls[j], calls[i]
            elif kind == "change" and calls:
                k = rng.randrange(len(calls))
                calls[k] = [calls[k][0], _args(rng)]
            elif kind == "extra":
                calls.append([rng.choice(_NAMES), _args(rng)])
            elif kind == "reorder_args" and calls:
                k = rng.randrange(len(calls))
                calls[k] = [calls[k][0], dict(reversed(list(calls[k][1].items())))]
        outputs = [rng.choice(["ok", "18C", "none"]) for _ in calls]
        out.append(
            {"calls": [[n, a, o] for (n, a), o in zip(calls, outputs, strict=True)], "ref": ref}
        )
    return out


def _ragas_jsonl(conversations: list[dict[str, object]], path: Path) -> Path:
    """The conversations as ragas multi-turn samples (EvaluationDataset.to_jsonl's shape)."""
    with path.open("w") as fh:
        for i, conv in enumerate(conversations):
            turns: list[dict[str, object]] = [{"type": "human", "content": f"task {i}"}]
            for name, args, output in conv["calls"]:  # type: ignore[attr-defined]
                turns.append(
                    {"type": "ai", "content": "", "tool_calls": [{"name": name, "args": args}]}
                )
                turns.append({"type": "tool", "content": output})
            turns.append({"type": "ai", "content": "done"})
            fh.write(
                json.dumps(
                    {
                        "user_input": turns,
                        "reference_tool_calls": [{"name": n, "args": a} for n, a in conv["ref"]],
                    }
                )
                + "\n"
            )  # type: ignore[attr-defined]
    return path


def _ours(lab: evalnb.Lab, evaluator: str, metric: str, **params: object) -> list[float]:
    scored = evalnb.evaluate(lab, [evaluator], progress=False, **params)
    frame = scored.scores.filter(pl.col("metric") == metric).join(
        scored.cases.select("case_id", "prompt"), on="case_id"
    )
    order = frame.with_columns(i=pl.col("prompt").str.slice(5).cast(pl.Int64)).sort("i")
    return order["value"].to_list()


@pytest.mark.skipif(
    not PEERS.is_file(),
    reason="the peers' environment .venv-peers is built by "
    "scripts/test (ragas 0.4.3, DeepEval 4.3.1)",
)
def test_tool_call_metrics_equal_ragas_and_deepeval_on_generated_conversations(
    tmp_path: Path,
) -> None:
    conversations = _conversations(300, seed=7)
    lines = "".join(json.dumps(c) + "\n" for c in conversations)
    done = subprocess.run(
        [str(PEERS), str(ROOT / "evalnb_testkit" / "peer_agents.py")],
        input=lines,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    theirs = [json.loads(line) for line in done.stdout.splitlines()]
    lab = evalnb.load(_ragas_jsonl(conversations, tmp_path / "agents.jsonl"))
    checks = [
        ("accuracy_strict", "tool_call_accuracy", "tool_call_accuracy", {"strict_order": True}),
        ("accuracy_flexible", "tool_call_accuracy", "tool_call_accuracy", {"strict_order": False}),
        ("f1", "tool_call_f1", "tool_call_f1", {}),
    ]
    checks.extend(
        (
            f"{mode}_{'args' if args else 'noargs'}",
            "tool_correctness",
            "tool_correctness",
            {"exact_match": exact, "consider_ordering": ordering, "compare_arguments": args},
        )
        for mode, exact, ordering in (
            ("names", False, False),
            ("exact", True, False),
            ("ordering", False, True),
        )
        for args in (False, True)
    )
    for key, evaluator, metric, params in checks:
        ours = _ours(lab, evaluator, metric, **params)
        want = [t[key] for t in theirs]
        assert len(ours) == len(want)
        for i, (a, b) in enumerate(zip(ours, want, strict=True)):
            assert a == pytest.approx(b, abs=1e-9), (key, i, conversations[i])


def test_an_openai_conversation_with_tool_calls_loads_with_its_steps(tmp_path: Path) -> None:
    record = {
        "id": "paris",
        "model": "gpt",
        "messages": [
            {"role": "user", "content": "Weather in Paris?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "a1",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                    },
                    {
                        "id": "a2",
                        "type": "function",
                        "function": {"name": "get_uv", "arguments": "{oops"},
                    },
                ],
            },
            {"role": "tool", "tool_call_id": "a2", "content": "down", "status": "error"},
            {"role": "tool", "tool_call_id": "a1", "content": "18C", "latency_s": 0.5},
            {"role": "assistant", "content": "It is 18C.", "latency_s": 1.25, "cost": 0.002},
        ],
        "reference_tool_calls": [{"name": "get_weather", "args": {"city": "Paris"}}],
    }
    path = tmp_path / "chat.json"
    path.write_text(json.dumps([record]))  # a JSON list (not JSONL) is detected too
    lab = evalnb.load(path)
    assert lab.outputs["actual"].to_list() == ["It is 18C."]
    assert lab.outputs["error"].to_list() == [None]  # a tool's failure is not the agent's
    calls = lab.steps.filter(pl.col("role") == "assistant").filter(
        pl.col("tool_name").is_not_null()
    )
    assert calls.select("tool_name", "tool_args", "args_valid", "tool_result", "error").rows() == [
        ("get_weather", '{"city": "Paris"}', True, "18C", None),
        ("get_uv", "{oops", False, "down", "the tool reported an error"),
    ]
    assert lab.reference_calls.select("tool_name", "tool_args").rows() == [
        ("get_weather", '{"city": "Paris"}')
    ]
    store = tmp_path / "lab.duckdb"
    lab.save(store)
    again = evalnb.open(store)
    assert again.steps.sort("step", "tool_call_id").equals(lab.steps.sort("step", "tool_call_id"))
    scored = evalnb.evaluate(again, ["agent_steps", "tool_call_f1"], progress=False)
    values = dict(scored.scores.select("metric", "value").rows())
    assert values["tool_calls"] == 2.0 and values["tool_error_rate"] == 0.5
    assert values["extra_tool_calls"] == 1.0 and values["repeated_calls"] == 0.0
    assert values["run_latency_s"] == pytest.approx(1.75) and values["run_cost"] == 0.002
    assert values["tool_call_f1"] == pytest.approx(0.6667)


def test_trajectory_match_modes() -> None:
    from evalnb.evaluation.families.agents.tool_calls import trajectory_match

    a, b, c = ("a", {"x": 1}, None), ("b", {}, None), ("c", {}, None)
    assert trajectory_match([a, b], [a, b], "strict", True) == 1.0
    assert trajectory_match([b, a], [a, b], "strict", True) == 0.0
    assert trajectory_match([b, a], [a, b], "unordered", True) == 1.0
    assert trajectory_match([a, a], [a, b], "unordered", True) == 0.0
    assert trajectory_match([a], [a, b], "subset", True) == 1.0
    assert trajectory_match([a, c], [a, b], "subset", True) == 0.0
    assert trajectory_match([a, b, c], [a, b], "superset", True) == 1.0
    assert trajectory_match([("a", {"x": 2}, None), b], [a, b], "strict", False) == 1.0
    assert trajectory_match([("a", {"x": 2}, None), b], [a, b], "strict", True) == 0.0


def test_a_case_without_reference_is_not_scored_and_a_repeated_call_is_a_loop(
    tmp_path: Path,
) -> None:
    turns = [{"type": "human", "content": "go"}]
    for _ in range(3):
        turns += [
            {"type": "ai", "content": "", "tool_calls": [{"name": "poll", "args": {"id": 1}}]},
            {"type": "tool", "content": "pending"},
        ]
    turns.append({"type": "ai", "content": "gave up"})
    path = tmp_path / "loop.jsonl"
    path.write_text(json.dumps({"user_input": turns}) + "\n")
    with pytest.warns(evalnb.NothingScoredWarning, match="tool_call_f1 scored none.*no reference"):
        lab = evalnb.evaluate(evalnb.load(path), ["agent_steps", "tool_call_f1"], progress=False)
    values = dict(lab.scores.select("metric", "value").rows())
    assert values["repeated_calls"] == 2.0 and values["tool_calls"] == 3.0
    assert values["tool_call_f1"] is None and values["extra_tool_calls"] is None
    detail = lab.scores.filter(pl.col("metric") == "tool_call_f1")["detail"][0]
    assert "no reference tool calls" in detail


@pytest.mark.parametrize(
    ("record", "where", "field"),
    [
        (
            {"messages": [{"role": "robot", "content": "x"}], "reference_tool_calls": []},
            "line 1.messages[0]",
            "role",
        ),
        (
            {
                "messages": [
                    {"role": "user", "content": "q"},
                    {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [{"id": "1", "function": {"arguments": "{}"}}],
                    },
                ]
            },
            "line 1.messages[1].tool_calls[0].function",
            "name",
        ),
        (
            {"user_input": [{"type": "human", "content": "q"}, {"type": "alien", "content": "x"}]},
            "line 1.user_input[1]",
            "type",
        ),
        (
            {
                "messages": [{"role": "assistant", "content": "hi", "tool_calls": []}],
                "reference_tool_calls": [],
            },
            "line 1",
            "messages",
        ),
    ],
)
def test_bad_conversations_name_the_line_and_field(
    record: dict[str, object], where: str, field: str, tmp_path: Path
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(record) + "\n")
    with pytest.raises(evalnb.InputError) as err:
        evalnb.load(path)
    assert err.value.source == str(path)
    assert (err.value.location or "").replace("$", "") == where.replace("$", "")
    assert err.value.field == field


# --- Running agents: tool calling through an OpenAI-compatible endpoint ------------------------


def _weather_agent(messages: list[dict[str, object]]) -> str | list[dict[str, object]]:
    """A scripted tool-calling model: ask the tool, then answer from its result."""
    question = next(str(m["content"]) for m in messages if m["role"] == "user")
    results = [str(m["content"]) for m in messages if m["role"] == "tool"]
    if "loop" in question:  # never stops calling
        return [{"name": "weather", "arguments": json.dumps({"city": "Rome"})}]
    if "bad args" in question and not results:
        return [{"name": "weather", "arguments": "{not json"}]
    if not results:
        city = question.split()[-1].strip("?")
        return [
            {"name": "weather", "arguments": json.dumps({"city": city})},
            {"name": "missing_tool", "arguments": "{}"},
        ]
    return f"Answer: {results[0]}"


def test_run_suite_runs_agents_with_tools_and_records_every_step(tmp_path: Path) -> None:
    from evalnb_testkit.llm_server import LoopbackLLM

    def weather(city: str) -> str:
        """Current weather of a city."""
        if city == "Atlantis":
            msg = "no such city"
            raise ValueError(msg)
        return f"{city}: 18C"

    lab = evalnb.load(
        pl.DataFrame(
            {
                "prompt": [
                    "Weather in Paris?",
                    "Weather in Atlantis?",
                    "bad args please",
                    "loop forever",
                ]
            }
        )
    )
    with LoopbackLLM(agent=_weather_agent) as server:
        client = evalnb.LLMClient(
            server.base_url,
            "judge",
            api_key="sk-test-0000",
            cache=tmp_path / "llm.duckdb",
            max_retries=0,
        )
        ran = evalnb.run_suite(
            lab, client, ["agent-a"], tools={"weather": weather}, max_steps=3, progress=False
        )
        calls_first = server.total_calls
        again = evalnb.run_suite(
            lab, client, ["agent-b"], tools={"weather": weather}, max_steps=3, progress=False
        )
    answers = dict(ran.outputs.join(ran.cases, on="case_id").select("prompt", "actual").rows())
    assert answers["Weather in Paris?"] == "Answer: Paris: 18C"
    assert answers["Weather in Atlantis?"] == "Answer: error: ValueError: no such city"
    assert answers["loop forever"] is None
    errors = dict(ran.outputs.join(ran.cases, on="case_id").select("prompt", "error").rows())
    assert "stopped after max_steps=3 model calls" in str(errors["loop forever"])
    steps = ran.steps.join(ran.cases.select("case_id", "prompt"), on="case_id")
    paris = steps.filter(pl.col("prompt") == "Weather in Paris?").sort("step", "tool_call_id")
    assert paris.filter(pl.col("role") == "assistant")["tool_name"].to_list() == [
        "weather",
        "missing_tool",
        None,
    ]
    missing = paris.filter(pl.col("tool_name") == "missing_tool").filter(
        pl.col("role") == "assistant"
    )
    assert "no tool named 'missing_tool'" in str(missing["error"][0])
    bad = steps.filter(
        (pl.col("prompt") == "bad args please")
        & (pl.col("role") == "assistant")
        & pl.col("tool_name").is_not_null()
    )
    assert bad["args_valid"].to_list() == [False]
    assert "not valid JSON" in str(bad["error"][0])
    assert calls_first == 2 + 2 + 2 + 3  # each model call once: nothing asked twice
    assert again.steps.filter(pl.col("model") == "agent-b").height > 0
    scored = evalnb.evaluate(ran, ["agent_steps"], progress=False)
    loops = scored.scores.filter(pl.col("metric") == "repeated_calls").join(
        scored.cases.select("case_id", "prompt"), on="case_id"
    )
    assert dict(loops.select("prompt", "value").rows())["loop forever"] == 2.0


# --- Judged agent metrics --------------------------------------------------------------------


def test_goal_accuracy_and_topic_adherence_read_the_whole_run(tmp_path: Path) -> None:
    from evalnb_testkit.llm_server import LoopbackLLM

    seen: list[str] = []

    def judge(prompt: str) -> str:
        seen.append(prompt)
        if "allowed topics" in prompt or "may only talk about" in prompt:
            return json.dumps(
                {
                    "answers": [
                        {"topic": "weather", "on_topic": True},
                        {"topic": "stocks", "on_topic": False},
                    ]
                }
            )
        if "reference" in prompt and "broken" in prompt:
            return "the end state is booked, I think"  # not JSON: a parse failure
        if "could not be read" in prompt:  # the repair turn: still no JSON
            return "booked, as I said"
        achieved = "[tool result] Paris: 18C" in prompt
        return json.dumps(
            {
                "user_goal": "know the weather",
                "end_state": "told",
                "achieved": achieved,
                "reason": "the tool result was relayed",
            }
        )

    records = [
        {
            "id": "ok",
            "messages": [
                {"role": "user", "content": "Weather in Paris?"},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "1",
                            "type": "function",
                            "function": {"name": "weather", "arguments": '{"city": "Paris"}'},
                        }
                    ],
                },
                {"role": "tool", "tool_call_id": "1", "content": "Paris: 18C"},
                {"role": "assistant", "content": "It is 18C. Also, buy stocks."},
            ],
            "reference": "The user learns it is 18C in Paris.",
            "reference_topics": ["weather"],
        },
        {
            "id": "broken",
            "messages": [
                {"role": "user", "content": "Weather in Rome? broken"},
                {
                    "role": "assistant",
                    "content": "Sunny.",
                    "tool_calls": [
                        {
                            "id": "2",
                            "type": "function",
                            "function": {"name": "weather", "arguments": "{}"},
                        }
                    ],
                },
                {"role": "tool", "tool_call_id": "2", "content": "error", "status": "error"},
            ],
            "reference": "The user learns the weather in Rome.",
        },
    ]
    path = tmp_path / "runs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    lab = evalnb.load(path)
    with LoopbackLLM(judge) as server:
        client = evalnb.LLMClient(
            server.base_url, "judge", api_key="sk-test-0000", cache=False, max_retries=0
        )
        lab = evalnb.evaluate(
            lab, ["agent_goal_accuracy", "topic_adherence"], judge=client, progress=False
        )
    values = {(c, m): v for c, m, v in lab.scores.select("case_id", "metric", "value").rows()}
    assert values["ok", "agent_goal_accuracy"] == 1.0
    assert values["ok", "topic_adherence"] == 0.5
    assert values["broken", "agent_goal_accuracy"] is None
    assert values["broken", "topic_adherence"] is None  # no allowed topics known: not judged
    detail = json.loads(
        lab.scores.filter(
            (pl.col("case_id") == "broken") & (pl.col("metric") == "agent_goal_accuracy")
        )["detail"][0]
    )
    assert detail["parse_failed"] is True and "booked" in detail["raw"][0]
    assert detail["repair"] == "failed" and detail["contract"] == "free"
    run = next(p for p in seen if "Weather in Paris" in p and "reference" in p)
    assert '[assistant calls tool] weather({"city": "Paris"})' in run
    assert "[tool result] Paris: 18C" in run and "[assistant] It is 18C." in run


def test_problems_name_failing_tools_broken_arguments_and_loops(tmp_path: Path) -> None:
    records = []
    for i in range(6):
        messages: list[dict[str, object]] = [{"role": "user", "content": f"book trip {i}"}]
        calls = [("book", '{"day": 1}' if i % 2 else "{day: 1}", i < 3)]  # 3 of 6 fail
        if i == 5:
            calls += [("poll", '{"id": 7}', False)] * 3  # the same call three times: a loop
        for k, (name, args, fails) in enumerate(calls):
            messages.append(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": f"{i}-{k}",
                            "type": "function",
                            "function": {"name": name, "arguments": args},
                        }
                    ],
                }
            )
            messages.append(
                {
                    "role": "tool",
                    "tool_call_id": f"{i}-{k}",
                    "content": "x",
                    **({"status": "error"} if fails else {}),
                }
            )
        messages.append({"role": "assistant", "content": "done"})
        records.append(
            {
                "id": f"trip{i}",
                "model": "agent-x",
                "messages": messages,
                "reference_tool_calls": [{"name": "book", "args": {"day": 1}}],
            }
        )
    path = tmp_path / "trips.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    lab = evalnb.evaluate(evalnb.load(path), ["tool_call_f1", "agent_steps"], progress=False)
    found = lab.problems().filter(pl.col("problem_type") == "agents")
    texts = found["description"].to_list()
    assert any("tool 'book' failed in 3 of its 6 calls (50%)" in t for t in texts), texts
    assert any("3 call(s) of tool 'book' had arguments that are not valid JSON" in t for t in texts)
    loop = found.filter(pl.col("description").str.contains("a loop"))
    assert loop["case_ids"].to_list() == [["trip5"]]
    assert found.filter(pl.col("description").str.contains("failed in"))["severity"].to_list() == [
        "HIGH"
    ]


# --- H2O's agent sanity check ------------------------------------------------------------------


def test_agent_sanity_checks_each_artifact_and_refuses_paths_out_of_the_root(
    tmp_path: Path,
) -> None:
    root = tmp_path / "work"
    (root / "charts").mkdir(parents=True)
    (root / "charts" / "summary.png").write_bytes(b"\x89PNG...")
    (root / "report.json").write_text(json.dumps({"status": "ok", "rows": [1, 2]}))
    (root / "wrong.json").write_text(json.dumps({"status": "failed"}))
    (root / "broken.json").write_text("{not json")
    (root / "empty.md").write_text("  \n")
    (root / "page.html").write_text("<html><body><p>Hello</p></body></html>")
    os.mkfifo(root / "pipe.txt")
    (tmp_path / "secret.txt").write_text("outside")
    artifacts = [
        "report.json",
        "wrong.json",
        "broken.json",
        "empty.md",
        "page.html",
        "charts/",
        "missing.txt",
        "../secret.txt",
        "pipe.txt",
    ]
    expected = [
        {"path": "report.json", "fields": {"status": "ok", "rows.1": 2}},
        {"path": "wrong.json", "fields": {"status": "ok"}},
        {"path": "charts/", "contains": ["summary.png", "detail.png"]},
    ]
    frame = pl.DataFrame(
        {
            "prompt": ["make the report", "nothing made"],
            "actual": ["done", "ok"],
            "artifacts": [json.dumps(artifacts), None],
            "expected_artifacts": [json.dumps(expected), None],
        }
    )
    scored = evalnb.evaluate(
        evalnb.load(frame), ["agent_sanity"], artifacts_root=str(root), progress=False
    )
    row = scored.scores.join(scored.cases.select("case_id", "prompt"), on="case_id").sort("prompt")
    made = row.filter(pl.col("prompt") == "make the report")
    detail = {a["path"]: a["failed"] for a in json.loads(made["detail"][0])["artifacts"]}
    assert detail["report.json"] == [] and detail["page.html"] == []
    assert detail["wrong.json"] == ['field status: "failed", expected "ok"']
    assert detail["broken.json"][0].startswith("JSON lint")
    assert detail["empty.md"] == ["empty"]
    assert detail["charts/"] == ["missing ['detail.png']"]
    assert detail["missing.txt"] == ["missing"]
    assert detail["../secret.txt"] == ["outside the artifacts root"]
    assert "a regular file" in detail["pipe.txt"][0] and "FIFO" in detail["pipe.txt"][0]
    assert made["value"][0] == pytest.approx(2 / 9)
    nothing = row.filter(pl.col("prompt") == "nothing made")
    assert nothing["value"][0] is None and "lists no artifacts" in nothing["detail"][0]
