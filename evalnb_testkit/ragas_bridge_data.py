"""Run by tests/evaluation/test_ragas.py with evalnb and ragas (evalnb_testkit/ragas_env.py): datasets in and out.

A ragas EvaluationDataset (single-turn samples with every field, and multi-turn ones) and a
real EvaluationResult of ragas.evaluate go into evalnb and back; ragas' own JSONL and CSV
files load into the same lab. Prints what it checked as JSON.
"""

from __future__ import annotations

import json
import sys
import tempfile
import warnings
from pathlib import Path

warnings.simplefilter("ignore")

import polars as pl  # noqa: E402
from polars.testing import assert_frame_equal  # noqa: E402
from ragas import EvaluationDataset, MultiTurnSample, SingleTurnSample, evaluate  # noqa: E402
from ragas.messages import AIMessage, HumanMessage, ToolCall, ToolMessage  # noqa: E402
from ragas.metrics import BleuScore, ExactMatch, RougeScore  # noqa: E402

import evalnb  # noqa: E402

work = Path(tempfile.mkdtemp())
single = [
    SingleTurnSample(
        user_input="What is the capital of France?",
        response="Paris is.",
        reference="Paris",
        retrieved_contexts=["Paris is the capital.", "Lyon."],
        reference_contexts=["France's capital is Paris."],
        multi_responses=["Paris", "Paris, France"],
        rubrics={"score1_description": "wrong", "score5_description": "right"},
        persona_name="student",
        query_style="PERFECT_GRAMMAR",
        query_length="SHORT",
        retrieved_context_ids=["d1", "d2"],
        reference_context_ids=["d1"],
    ),
    SingleTurnSample(user_input="Largest ocean?", response="The Pacific.", reference="Pacific"),
    SingleTurnSample(
        user_input="Who wrote Hamlet?",
        response="Shakespeare",
        retrieved_contexts=["Hamlet is a play by Shakespeare."],
        retrieved_context_ids=["doc-7"],
        reference_context_ids=["doc-7"],
    ),
]
# (ragas' to_csv takes its header from the first sample: it holds every field.)
dataset = EvaluationDataset(samples=single)
checked = {}

# 1. The dataset object, and its to_jsonl / to_csv files, load into one lab.
lab = evalnb.load(dataset, model="rag")
dataset.to_jsonl(str(work / "d.jsonl"))
dataset.to_csv(str(work / "d.csv"))
for name in ("d.jsonl", "d.csv"):
    assert evalnb.detect_format(work / name) == "ragas", name
    other = evalnb.load(work / name, model="rag")
    for table in ("cases", "outputs"):
        assert_frame_equal(other.table(table), lab.table(table))
case = lab.cases.filter(pl.col("prompt") == "What is the capital of France?").row(0, named=True)
assert case["expected"] == ["Paris"] and case["corpus"] == ["France's capital is Paris."]
assert json.loads(case["extra"])["persona_name"] == "student"
out = lab.outputs.filter(pl.col("case_id") == case["case_id"]).row(0, named=True)
assert out["context"] == ["Paris is the capital.", "Lyon."] and out["model"] == "rag"
assert json.loads(out["extra"])["multi_responses"] == ["Paris", "Paris, France"]
checked["files"] = ["jsonl", "csv"]

# 2. Back out: to_ragas and export give ragas the same samples.
back = lab.to_ragas()
assert back.to_list() == dataset.to_list(), (back.to_list(), dataset.to_list())
lab.export(work / "back.jsonl", format="ragas")
assert EvaluationDataset.from_jsonl(str(work / "back.jsonl")).to_list() == dataset.to_list()
two = evalnb.load(dataset, model="rag").merge(evalnb.load(dataset, model="other"))
per_model = two.to_ragas()
assert sorted(per_model) == ["other", "rag"]
assert per_model["other"].to_list() == dataset.to_list()
checked["round_trip"] = len(dataset.to_list())

# 3. A real EvaluationResult: its scores become imported scores, one metric each.
result = evaluate(dataset, metrics=[BleuScore(), RougeScore(), ExactMatch()], show_progress=False)
scored = evalnb.load(result, model="rag")
theirs = result.scores
ours = scored.scores.join(scored.cases.select("case_id", "prompt"), on="case_id")
for sample, row in zip(single, theirs, strict=True):
    mine = ours.filter(pl.col("prompt") == sample.user_input)
    got = dict(zip(mine["metric"], mine["value"], strict=True))
    # ragas' NaN (a sample it could not score) is a null with the reason here.
    assert got == {k: None if v != v else float(v) for k, v in row.items()}, (got, row)
assert set(scored.scores["evaluator"]) == {"ragas_result"}
board = scored.leaderboard()
assert set(board["metric"]) == set(theirs[0])
checked["result_metrics"] = sorted(theirs[0])

# 4. Multi-turn samples are agent conversations.
turns = MultiTurnSample(
    user_input=[
        HumanMessage(content="Weather in Oslo?"),
        AIMessage(content="", tool_calls=[ToolCall(name="weather", args={"city": "Oslo"})]),
        ToolMessage(content="rain"),
        AIMessage(content="Rain in Oslo."),
    ],
    reference_tool_calls=[ToolCall(name="weather", args={"city": "Oslo"})],
    reference="Rain.",
)
agents = evalnb.load(EvaluationDataset(samples=[turns]), model="bot")
assert agents.steps.filter(pl.col("tool_name") == "weather").height == 2
assert agents.outputs["actual"].to_list() == ["Rain in Oslo."]
assert agents.outputs["model"].to_list() == ["bot"]
checked["multi_turn_steps"] = agents.steps.height

# 5. ragas' to_csv writes str() of every value: text that looks like a literal stays text,
# and a multi-turn dataset's CSV reads as its JSONL does.
tricky = EvaluationDataset(
    samples=[
        SingleTurnSample(
            user_input="[URGENT] reset my password",
            response='{"answer": 42}',
            reference="[2, 3, 5]",
            retrieved_contexts=["[x]", "{y}"],
        ),
        SingleTurnSample(user_input="{not a dict", response="[2, 3, 5]", reference="(1, 2)"),
    ]
)
tricky.to_csv(str(work / "tricky.csv"))
read = evalnb.load(work / "tricky.csv", model="rag")
assert read.to_ragas().to_list() == tricky.to_list(), read.to_ragas().to_list()
conversations = EvaluationDataset(samples=[turns, turns.model_copy(update={"reference": "Wet."})])
conversations.to_csv(str(work / "turns.csv"))
conversations.to_jsonl(str(work / "turns.jsonl"))
from_csv = evalnb.load(work / "turns.csv", model="bot")
from_jsonl = evalnb.load(work / "turns.jsonl", model="bot")
for table in ("cases", "outputs", "steps"):
    assert_frame_equal(from_csv.table(table), from_jsonl.table(table))
checked["csv_text_and_turns"] = [read.cases.height, from_csv.steps.height]

print(json.dumps(checked))
sys.exit(0)
