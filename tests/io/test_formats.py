"""HarpIA, Tencent, Harbor and generic tables: mapping, extras and round trips."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import evalnb


def _jsonl(path: Path, records: list[object]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_harpia(tmp_path: Path) -> None:
    doc = {
        "instances": [
            {
                "id": "1",
                "input": "Olá",
                "actual-output": "Hello",
                "expected-output": ["Hello", "Hi"],
            },
            {
                "id": 2,
                "input": "Tchau",
                "actual-output": "Bye",
                "expected-output": ["Goodbye"],
                "lang": "pt",
            },
        ],
        "metrics": [
            {"id": "bleu", "enable": True, "parameters": {"max_ngram_order": 4}},
            {"id": "bertscore", "enable": False},
        ],
    }
    path = tmp_path / "harpia.json"
    path.write_text(json.dumps(doc))
    assert evalnb.detect_format(path) == "harpia"
    lab = evalnb.load(path, model="my-llm")
    assert lab.cases["case_id"].to_list() == ["1", "2"]
    assert lab.cases["expected"].to_list() == [["Hello", "Hi"], ["Goodbye"]]
    assert json.loads(lab.cases["extra"][1]) == {"lang": "pt"}
    assert lab.models == ["my-llm"]
    assert lab.info["harpia_metrics"] == [
        {"id": "bleu", "enable": True, "parameters": {"max_ngram_order": 4}},
        {"id": "bertscore", "enable": False, "parameters": {}},
    ]


EVAL_ONLY = [
    {
        "messages": [
            {"role": "user", "content": "Hello!"},
            {"role": "assistant", "content": "Hello! Is there anything I can do for you"},
            {"role": "user", "content": "What is the sum of 16 and 16"},
        ],
        "ref_answer": "The answer is 32",
        "id": "141234314",
        "max_tokens": 1024,
        "temperature": 0.7,
        "model_outputs": [
            {
                "model_name": "llama3",
                "responses": [{"content": "The answer is 32."}, {"content": "32 is the answer."}],
            },
            {
                "model_name": "qwen3",
                "responses": [
                    {"content": "The answer is 32.", "reasoning_content": "Wait..."},
                    {"content": "The answer is 32.", "reasoning_content": "Thinking..."},
                ],
            },
        ],
    },
    {
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "What is the sum of 1 and 1"},
            {"role": "assistant", "content": "2"},
        ],
        "ref_answer": "The answer is 2",
        "extra_content": "usable in a judge prompt",
    },
]


def test_tencent_evaluation_only_and_round_trip(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "set.jsonl", EVAL_ONLY)
    assert evalnb.detect_format(path) == "tencent"
    lab = evalnb.load(path)
    first, second = lab.cases.rows(named=True)
    assert first["case_id"] == "141234314"
    assert first["prompt"] == "What is the sum of 16 and 16"
    assert first["expected"] == ["The answer is 32"]
    assert json.loads(first["extra"]) == {"max_tokens": 1024, "temperature": 0.7}
    # The last assistant turn is a reference answer (gt) next to ref_answer.
    assert second["expected"] == ["The answer is 2", "2"]
    assert second["system"] == "Be brief."
    assert second["prompt"] == "What is the sum of 1 and 1"
    assert lab.outputs.height == 4
    assert lab.outputs["sample"].to_list() == [0, 1, 0, 1]
    assert lab.outputs["reasoning"].to_list() == [None, None, "Wait...", "Thinking..."]
    again = evalnb.load(lab.export(tmp_path / "out.jsonl", format="tencent"))
    assert_frame_equal(again.cases, lab.cases)
    assert_frame_equal(again.outputs, lab.outputs)


def test_tencent_manual_jsonl_and_csv(tmp_path: Path) -> None:
    path = _jsonl(
        tmp_path / "manual.jsonl",
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
    )
    lab = evalnb.load(path)
    assert lab.cases["prompt"].to_list() == ["712+165+223+711=", "2+2="]
    assert lab.cases["expected"].to_list() == [["1811"], ["4"]]
    assert lab.cases["system"].to_list() == ["You are helpful.", None]
    assert len(json.loads(lab.cases["messages"][1])) == 3  # hi, hello, 2+2=
    csv = tmp_path / "manual.csv"
    csv.write_text('system,prompt,response\n,"712+165+223+711=",1811\nBe terse.,"2, 3?",5\n')
    assert evalnb.detect_format(csv) == "tencent_csv"
    lab = evalnb.load(csv)
    assert lab.cases["system"].to_list() == [None, "Be terse."]
    assert lab.cases["prompt"].to_list() == ["712+165+223+711=", "2, 3?"]


def test_harbor_rewards(tmp_path: Path) -> None:
    path = tmp_path / "rewards.jsonl"
    path.write_text('{"reward": 1}\nnull\n{"reward": 0.5}\n')
    assert evalnb.detect_format(path) == "harbor"
    lab = evalnb.load(path, model="agent-x")
    assert lab.scores["value"].to_list() == [1.0, None, 0.5]
    assert lab.scores["metric"].unique().to_list() == ["reward"]
    assert "counts it as 0" in lab.scores["detail"][1]
    assert lab.metrics.row(0, named=True)["primary"] is True
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"reward": 1}\n{"a": 1, "b": 2}\n')
    with pytest.raises(evalnb.InputError, match=r"line 2.*exactly one key"):
        evalnb.load(bad, format="harbor")


def test_generic_csv_with_mapping(tmp_path: Path) -> None:
    path = tmp_path / "answers.csv"
    path.write_text(
        "question,gold,llm,answer,ctx,latency,team\n"
        'What is 2+2?,4,gpt,4,"[""2+2=4"", ""math""]",0.5,a\n'
        "What is 2+2?,4,claude,four,,1.25,a\n"
    )
    lab = evalnb.load(path, prompt="question", expected="gold", model="llm", context="ctx")
    assert lab.cases.height == 1
    assert lab.models == ["gpt", "claude"]
    assert lab.outputs["context"].to_list() == [["2+2=4", "math"], []]
    assert lab.outputs["duration_s"].to_list() == [0.5, 1.25]
    assert json.loads(lab.cases["extra"][0]) == {"team": "a"}


def test_generic_frames_wide_and_parquet(tmp_path: Path) -> None:
    frame = pl.DataFrame(
        {
            "prompt": ["a?", "b?"],
            "expected": [["A"], ["B", "bee"]],
            "m1": ["A", "x"],
            "m2": ["A", "B"],
        }
    )
    lab = evalnb.load(frame, actual={"model one": "m1", "model two": "m2"})
    assert lab.outputs.height == 4
    assert lab.models == ["model one", "model two"]
    frame.write_parquet(tmp_path / "t.parquet")
    assert evalnb.detect_format(tmp_path / "t.parquet") == "parquet"
    from_parquet = evalnb.load(
        tmp_path / "t.parquet", actual={"model one": "m1", "model two": "m2"}
    )
    assert_frame_equal(from_parquet.outputs, lab.outputs)
    from_pandas = evalnb.load(pd.DataFrame({"input": ["q"], "response": ["r"]}))
    assert from_pandas.outputs["actual"].to_list() == ["r"]
    assert isinstance(from_pandas.to_pandas(), pd.DataFrame)


def test_generic_jsonl_and_json_records(tmp_path: Path) -> None:
    recs = [{"id": 1, "prompt": "p", "actual": "a", "model": "m"}, {"id": 2, "prompt": "q"}]
    lab = evalnb.load(_jsonl(tmp_path / "r.jsonl", recs))
    assert lab.cases["case_id"].to_list() == ["1", "2"]
    assert lab.outputs.height == 1  # the second row has no answer (absent, not empty)
    (tmp_path / "r.json").write_text(json.dumps(recs))
    assert evalnb.detect_format(tmp_path / "r.json") == "json"
    assert_frame_equal(evalnb.load(tmp_path / "r.json").cases, lab.cases)


def test_mapping_errors(tmp_path: Path) -> None:
    frame = pl.DataFrame({"q": ["x"]})
    with pytest.raises(TypeError, match="unknown mapping keys"):
        evalnb.load(frame, promt="q")
    with pytest.raises(evalnb.InputError, match="prompt column"):
        evalnb.load(frame)
    with pytest.raises(evalnb.InputError, match="'nope'"):
        evalnb.load(frame, prompt="nope")
    path = _jsonl(tmp_path / "set.jsonl", EVAL_ONLY)
    with pytest.raises(TypeError, match="generic tables only"):
        evalnb.load(path, prompt="x")


def test_same_question_several_models_unmapped_hints_at_model(tmp_path: Path) -> None:
    path = tmp_path / "answers.csv"
    path.write_text("question,answer,llm\nq1,a,m1\nq1,b,m2\n")
    with pytest.raises(
        evalnb.InputError,
        match=r"map the column naming the model, e\.g\. "
        r"load\(path, model='llm'\)",
    ):
        evalnb.load(path)
    assert evalnb.load(path, model="llm").models == ["m1", "m2"]
