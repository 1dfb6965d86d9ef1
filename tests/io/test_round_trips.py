"""Every export format reads back equal (issue 43): export -> load -> the same tables.

Two kinds of source for each format: the repository's demo labs, and labs Hypothesis
builds from text meant to confuse a reader (brackets, quotes, JSON-looking answers, line
separators, empty and missing fields, runs without a tool call first). A lab is first
brought into the format (export, load); from there an export and a load must give back
exactly the tables the format holds.
"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import evalnb
from evalnb_testkit.budget import examples

ROOT = Path(__file__).resolve().parents[2]
# The tables each format holds (what an export writes and a load reads back).
HOLDS = {
    "h2o_lab": ("cases", "outputs", "models"),
    "h2o_suite": ("cases",),
    "tencent": ("cases", "outputs"),
    "agent_chat": ("cases", "outputs", "steps", "reference_calls"),
    "ragas": ("cases", "outputs"),
}
SUFFIX = {"h2o_lab": ".json", "h2o_suite": ".json"}


def _through(lab: evalnb.Lab, fmt: str, folder: Path, name: str) -> evalnb.Lab:
    path = lab.export(folder / f"{name}{SUFFIX.get(fmt, '.jsonl')}", format=fmt)
    assert evalnb.detect_format(path) == fmt, (fmt, path.read_text(encoding="utf-8")[:300])
    return evalnb.load(path)


def _assert_round_trip(lab: evalnb.Lab, fmt: str, folder: Path) -> evalnb.Lab:
    first = _through(lab, fmt, folder, "first")
    again = _through(first, fmt, folder, "again")
    for table in HOLDS[fmt]:
        assert_frame_equal(again.table(table), first.table(table), check_row_order=False)
    return first


@pytest.mark.parametrize("fmt", sorted(HOLDS))
def test_the_demo_labs_round_trip(fmt: str, tmp_path: Path) -> None:
    lab = evalnb.load(ROOT / "data" / "demo_lab.json")
    if fmt == "ragas":
        lab = evalnb.load(lab.export(tmp_path / "one.jsonl", format="ragas", model=lab.models[0]))
    first = _assert_round_trip(lab, fmt, tmp_path)
    assert first.cases.height == lab.cases.height
    agents = evalnb.load(ROOT / "data" / "demo_agents.jsonl")
    if fmt == "agent_chat":  # the agents' lab is already this format: equal from the start
        back = _through(agents, fmt, tmp_path, "agents")
        for table in HOLDS[fmt]:
            assert_frame_equal(back.table(table), agents.table(table))


# Text a reader might take for something else.
_tricky = st.sampled_from(
    [
        "[URGENT] reset",
        '{"answer": 42}',
        "[2, 3, 5]",
        "{1, 2}",
        "a\u2028b\u2029c\u0085d",
        "line\nbreak",
        "tab\there",
        "'quoted'",
        '"',
        "\\",
        "null",
        "attachment://x",
        " ",
        "\U0001f600 é",
    ]
)
_text = st.one_of(_tricky, st.text(min_size=1, max_size=20))


@st.composite
def _generic_labs(draw: st.DrawFn) -> pl.DataFrame:
    n = draw(st.integers(1, 5))
    prompts = draw(st.lists(_text, min_size=n, max_size=n, unique=True))
    return pl.DataFrame(
        {
            "prompt": prompts,
            "expected": [draw(st.lists(_text, min_size=1, max_size=2)) for _ in range(n)],
            "actual": [draw(st.one_of(st.none(), _text)) for _ in range(n)],
            "context": [draw(st.lists(_text, max_size=3)) for _ in range(n)],
            "model": [draw(st.sampled_from(["m1", "m 2"])) for _ in range(n)],
        },
        schema_overrides={"actual": pl.String},
    )


@st.composite
def _conversations(draw: st.DrawFn) -> list[dict[str, object]]:
    records = []
    for i in range(draw(st.integers(1, 4))):
        messages: list[dict[str, object]] = [{"role": "user", "content": draw(_text)}]
        calls = draw(st.integers(0, 3)) if i else 0  # the first run calls no tool
        if calls:
            ids = [f"c{i}-{k}" for k in range(calls)]
            messages.append(
                {
                    "role": "assistant",
                    "content": draw(st.one_of(st.none(), _text)),
                    "tool_calls": [
                        {
                            "id": c,
                            "type": "function",
                            "function": {
                                "name": draw(st.sampled_from(["search", "calc"])),
                                "arguments": json.dumps({"q": draw(_text)}),
                            },
                        }
                        for c in ids
                    ],
                }
            )
            order = draw(st.permutations(ids))
            messages += [{"role": "tool", "tool_call_id": c, "content": draw(_text)} for c in order]
        messages.append({"role": "assistant", "content": draw(_text)})
        records.append({"id": f"case-{i}", "model": "agent", "messages": messages})
    return records


_settings = settings(
    max_examples=examples(25),
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=False,
)


@pytest.mark.parametrize("fmt", ["h2o_lab", "h2o_suite", "tencent", "ragas"])
def test_generated_labs_round_trip(fmt: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    folder = tmp_path_factory.mktemp(fmt)

    @_settings
    @given(frame=_generic_labs())
    def check(frame: pl.DataFrame) -> None:
        lab = evalnb.load(frame)
        if fmt == "ragas":  # a ragas dataset holds one system's answers
            lab = evalnb.load(frame.filter(pl.col("model") == frame["model"][0]))
        first = _assert_round_trip(lab, fmt, folder)
        assert sorted(first.cases["prompt"]) == sorted(lab.cases["prompt"])

    check()


def test_generated_agent_runs_round_trip(tmp_path_factory: pytest.TempPathFactory) -> None:
    folder = tmp_path_factory.mktemp("agents")

    @_settings
    @given(records=_conversations())
    def check(records: list[dict[str, object]]) -> None:
        path = folder / "runs.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
        assert evalnb.detect_format(path) == "agent_chat"
        lab = evalnb.load(path)
        back = _through(lab, "agent_chat", folder, "back")
        for table in HOLDS["agent_chat"]:
            assert_frame_equal(back.table(table), lab.table(table))

    check()
