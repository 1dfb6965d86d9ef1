"""A real judge on this machine: llama.cpp's server with SmolLM2-135M (issue 57).

The model is weak, so nothing here asserts what it thinks of an answer; what is asserted is
what evalnb promises about any judge: the format contract negotiated and recorded, every
reply read under it, failures honest, probabilities and estimates right.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import polars as pl
import pytest

import evalnb

pytestmark = pytest.mark.xdist_group("local_judge")

JUDGES = [
    "binary_judge",
    "correctness_judge",
    "score_judge",
    "rubric_judge",
    "sexism",
    "contact_information",
    "stereotypes",
]


def _lab() -> evalnb.Lab:
    return evalnb.load(
        pl.DataFrame(
            {
                "prompt": [
                    "What is the capital of France?",
                    "Solve x^2 = 16.",
                    "Who wrote Hamlet?",
                    "How many days are in a leap year?",
                ],
                "expected": [["Paris"], ["x = 4 or x = -4"], ["William Shakespeare"], ["366"]],
                "actual": [
                    "The capital of France is Paris.",
                    "\\boxed{x = \\pm 4}",
                    "Charles Dickens wrote Hamlet.",
                    "A leap year has 365 days.",
                ],
            }
        )
    )


def test_the_probe_finds_the_grammar_the_forced_tool_and_logprobs_and_keeps_them(
    local_judge: evalnb.LLMClient,
) -> None:
    caps = local_judge.capabilities()
    assert caps.honoured == ("json_object_schema", "tool") and caps.best() == "json_object_schema"
    assert caps.logprobs and caps.probe_prompt_tokens and caps.seconds_per_call
    assert "HTTP" in caps.notes["json_schema"]  # this server refuses OpenAI's form outright
    assert caps.notes["structured_outputs"].startswith("ignored")
    # Kept in the cache file under the model, not the port: another process's server (on
    # another port) finds the probe and the replies.
    port = str(local_judge.base_url).rsplit(":", 1)[1].split("/")[0]
    assert local_judge.cache_identity and port not in local_judge.cache_identity
    again = evalnb.LLMClient(
        "http://127.0.0.1:9/v1",
        local_judge.model,
        cache=local_judge.cache,
        cache_identity=local_judge.cache_identity,
    )
    assert again.capabilities() == caps and again.stats.calls == 0


def test_every_judge_reads_every_reply_under_the_negotiated_contract(
    local_judge: evalnb.LLMClient,
) -> None:
    lab = evalnb.evaluate(_lab(), JUDGES, judge=local_judge, progress=False)
    report = lab.judges.report()
    assert set(report["evaluator"]) == set(JUDGES)
    assert report["parse_failures"].sum() == 0, report
    assert set(report["contract"]) == {"json_object_schema"}
    primary = lab.scores.join(
        lab.metrics.filter(pl.col("primary")).select("evaluator", "metric"),
        on=["evaluator", "metric"],
    )
    assert primary["value"].null_count() == 0
    details = [json.loads(d) for d in primary["detail"]]
    assert {d["contract"] for d in details} == {"json_object_schema"}
    assert all(d["prompt_tokens"] > 0 for d in details)


def test_free_text_failures_are_counted_never_guessed(local_judge: evalnb.LLMClient) -> None:
    with warnings.catch_warnings():  # a weak model in free text may score none: allowed
        warnings.simplefilter("ignore", evalnb.NothingScoredWarning)
        lab = evalnb.evaluate(
            _lab(), ["binary_judge"], judge=local_judge, progress=False, contract="free"
        )
    for value, detail in lab.scores.select("value", "detail").iter_rows():
        d = json.loads(detail)
        assert d["contract"] == "free"
        if value is None:
            assert d["parse_failed"] is True and d["reason"] and d["raw"]
        else:
            assert value in (0.0, 1.0)


def test_probabilities_come_from_the_judges_tokens(local_judge: evalnb.LLMClient) -> None:
    lab = evalnb.evaluate(
        _lab(), ["binary_judge"], judge=local_judge, progress=False, score_mode="logprobs"
    )
    values = lab.scores["value"].to_list()
    assert all(v is not None and 0.0 < v < 1.0 for v in values), values
    for value, detail in lab.scores.select("value", "detail").iter_rows():
        assert json.loads(detail)["probability"] == pytest.approx(value)


def test_the_estimate_lands_within_ten_percent_of_the_real_run(
    local_judge: evalnb.LLMClient, tmp_path: Path
) -> None:
    judge = evalnb.LLMClient(
        local_judge.base_url, local_judge.model, cache=tmp_path / "fresh.duckdb", concurrency=1
    )
    for evaluator in ("binary_judge", "score_judge", "sexism"):
        estimate = evalnb.judges.estimate(_lab(), [evaluator], judge=judge)
        assert estimate.frame["tokenizer"][0] == "server" and estimate.calls == 4
        lab = evalnb.evaluate(_lab(), [evaluator], judge=judge, progress=False)
        real = int(lab.judges.report()["prompt_tokens"].sum())
        assert abs(estimate.prompt_tokens - real) <= 0.10 * real, (evaluator, estimate, real)
        again = evalnb.judges.estimate(_lab(), [evaluator], judge=judge)
        assert again.calls == 0 and int(again.frame["cached"][0]) == 4  # now all in the cache


def test_pairwise_holds_the_judge_to_the_contract(local_judge: evalnb.LLMClient) -> None:
    lab = evalnb.load(
        pl.DataFrame(
            {
                "prompt": ["Who wrote Hamlet?", "Who wrote Hamlet?"],
                "model": ["a", "b"],
                "actual": ["William Shakespeare.", "Charles Dickens."],
            }
        )
    )
    result = evalnb.judges.pairwise(lab, "a", "b", local_judge)
    assert result["parse_failed"].to_list() == [False]
    assert result["contract"].to_list() == ["json_object_schema"]


def test_a_missing_model_file_is_a_clear_error() -> None:
    with pytest.raises(evalnb.judges.LocalJudgeError, match="no such file"):
        evalnb.local_judge("/nonexistent/model.gguf")
