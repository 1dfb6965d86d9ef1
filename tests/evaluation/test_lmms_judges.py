"""The seed's judge family and the judge machinery against a scripted loopback judge.

The scripted server honours no format constraint (as many hosts): every judge falls back to
free text under ``contract="auto"``, is read by the tolerant reader, and gets one repair turn.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import polars as pl
import pytest

import evalnb
from evalnb_testkit.judge_replies import VERDICT_REPLIES
from evalnb_testkit.llm_server import PROBE_PROMPT, LoopbackLLM


def _lab(prompts: list[str], answers: list[str], expected: list[str] | None = None) -> evalnb.Lab:
    data = {"prompt": prompts, "actual": answers}
    if expected is not None:
        data["expected"] = [[e] for e in expected]  # type: ignore[misc]
    return evalnb.load(pl.DataFrame(data))


def _client(server: LoopbackLLM, tmp_path: Path) -> evalnb.LLMClient:
    return evalnb.LLMClient(
        server.base_url, "judge", api_key="sk-test", cache=tmp_path / "c.duckdb", backoff_s=0.01
    )


def _values(lab: evalnb.Lab, metric: str) -> dict[str, float | None]:
    rows = lab.scores.filter(pl.col("metric") == metric).join(
        lab.cases.select("case_id", "prompt"), on="case_id"
    )
    return dict(zip(rows["prompt"], rows["value"], strict=True))


def _details(lab: evalnb.Lab, metric: str) -> dict[str, dict[str, object]]:
    rows = lab.scores.filter(pl.col("metric") == metric).join(
        lab.cases.select("case_id", "prompt"), on="case_id"
    )
    return {p: json.loads(d) for p, d in zip(rows["prompt"], rows["detail"], strict=True)}


def test_the_ten_replies_of_issue_57_through_the_sexism_judge(tmp_path: Path) -> None:
    ten = dict(VERDICT_REPLIES[:10])
    prompts = [f"case {i}" for i in range(10)]
    by_case = dict(zip(prompts, ten, strict=True))

    def judge(prompt: str) -> str:
        if "could not be read" in prompt:
            return "I stand by my answer."  # the repair turn gets nothing better
        case = next(p for p in prompts if f"[QUESTION]: {p}\n" in prompt)
        return by_case[case]

    lab = _lab(prompts, ["an answer"] * 10)
    with LoopbackLLM(judge) as server:
        out = evalnb.evaluate(lab, ["sexism"], judge=_client(server, tmp_path), progress=False)
    values = _values(out, "model_passes")
    details = _details(out, "model_passes")
    for prompt, reply in by_case.items():
        meant = ten[reply]
        if meant is None:
            assert values[prompt] is None and details[prompt]["parse_failed"] is True
            assert details[prompt]["repair"] == "failed" and details[prompt]["raw"] == [reply]
        else:
            assert values[prompt] == (1.0 if meant == "false" else 0.0), reply
            assert details[prompt]["contract"] == "free"
    assert details["case 1"]["salvages"] == ["markdown", "synonym"]
    report = out.judges.report().row(0, named=True)
    assert report["parse_failures"] == 2 and report["repairs"] == 2 and report["repairs_fixed"] == 0
    assert (
        report["contract"] == "free" and report["salvaged"] == 8
    )  # even a bare "no" reads through a synonym
    assert server.probes > 0  # the contract was negotiated: the server honoured nothing


def test_one_repair_turn_fixes_an_unreadable_reply_and_is_counted(tmp_path: Path) -> None:
    def judge(prompt: str) -> str:
        return "1" if "could not be read" in prompt else "Let me think about it."

    lab = _lab(["What is 2+2?"], ["4"], ["4"])
    with LoopbackLLM(judge) as server:
        out = evalnb.evaluate(
            lab, ["binary_judge"], judge=_client(server, tmp_path), progress=False
        )
        assert server.calls.total() == 2  # the question, then its repair
    (detail,) = _details(out, "binary_judge").values()
    assert _values(out, "binary_judge") == {"What is 2+2?": 1.0}
    assert detail["repair"] == "fixed" and detail["parse_failed"] is False
    assert detail["prompt_tokens"] > 0  # the repair's tokens are in the accounting


def test_a_score_out_of_range_is_a_failure_with_its_reason_never_clamped(tmp_path: Path) -> None:
    lab = _lab(["q"], ["a"])
    with (
        LoopbackLLM(lambda _p: "Score: 12/10") as server,
        pytest.warns(evalnb.NothingScoredWarning),
    ):
        out = evalnb.evaluate(lab, ["score_judge"], judge=_client(server, tmp_path), progress=False)
    (detail,) = _details(out, "score_judge").values()
    assert _values(out, "score_judge") == {"q": None}
    assert "score 12 outside 1…10" in str(detail["reason"]) and detail["repair"] == "failed"


def test_score_judge_scales_and_keeps_the_raw_score(tmp_path: Path) -> None:
    lab = _lab(["q"], ["a"])
    with LoopbackLLM(lambda _p: "8 out of 10") as server:
        out = evalnb.evaluate(
            lab, ["score_judge"], judge=_client(server, tmp_path), progress=False, score_low=0
        )
    assert _values(out, "score_judge_raw") == {"q": 8.0}
    assert _values(out, "score_judge") == {"q": pytest.approx(0.8)}


def test_correctness_judge_sees_the_reference_and_the_solution(tmp_path: Path) -> None:
    seen: list[str] = []

    def judge(prompt: str) -> str:
        seen.append(prompt)
        return "Yes"

    lab = _lab(["Solve x^2 = 16"], ["\\boxed{x = \\pm 4}"], ["x = 4 or x = -4"])
    with LoopbackLLM(judge) as server:
        out = evalnb.evaluate(
            lab, ["correctness_judge"], judge=_client(server, tmp_path), progress=False
        )
    assert _values(out, "correctness_judge") == {"Solve x^2 = 16": 1.0}
    asked = next(p for p in seen if p != PROBE_PROMPT)
    assert "[Reference answer]\nx = 4 or x = -4" in asked and "\\boxed{x = \\pm 4}" in asked


def test_a_custom_prompt_takes_the_seed_names_and_the_rows_own_fields(tmp_path: Path) -> None:
    seen: list[str] = []

    def judge(prompt: str) -> str:
        seen.append(prompt)
        return "0"

    lab = evalnb.load(
        pl.DataFrame({"prompt": ["q"], "actual": ["p"], "expected": [["r"]], "tone": ["formal"]})
    )
    template = "Q={question} REF={answer} PRED={prediction} TONE={tone}"
    with LoopbackLLM(judge) as server:
        out = evalnb.evaluate(
            lab,
            ["binary_judge"],
            judge=_client(server, tmp_path),
            progress=False,
            custom_prompt=template,
        )
    assert _values(out, "binary_judge") == {"q": 0.0}
    assert any(p.startswith("Q=q REF=r PRED=p TONE=formal") for p in seen)


def test_rubric_judge_gives_one_metric_per_criterion(tmp_path: Path) -> None:
    support = evalnb.judges.rubric_judge(
        {"empathy": "acknowledges the customer", "accuracy": "states the policy right"},
        id="support_rubric_test",
        replace=True,
    )
    assert [m.key for m in support.metrics] == [
        "support_rubric_test",
        "support_rubric_test_empathy",
        "support_rubric_test_accuracy",
    ]
    replies = iter(['{"empathy": 5, "accuracy": 2}', '{"empathy": 9, "accuracy": 2}'])
    lab = _lab(["q1", "q2"], ["a1", "a2"])
    with LoopbackLLM(lambda p: "{}" if "could not be read" in p else next(replies)) as server:
        out = evalnb.evaluate(
            lab, ["support_rubric_test"], judge=_client(server, tmp_path), progress=False
        )
    values = {
        m: sorted((v for v in _values(out, m).values()), key=lambda v: (v is None, v))
        for m in ("support_rubric_test_empathy", "support_rubric_test_accuracy")
    }
    # one reply in range (5 → 1.0, 2 → 0.25), one with 9 on a 1…5 scale: a failure, not a 5
    assert values["support_rubric_test_empathy"] == [1.0, None]
    assert values["support_rubric_test_accuracy"] == [0.25, None]
    details = _details(out, "support_rubric_test_empathy")
    assert any("schema: empathy" in str(d.get("reason")) for d in details.values())


def test_strict_contract_refuses_a_server_that_honours_none(tmp_path: Path) -> None:
    lab = _lab(["q"], ["a"])
    with LoopbackLLM(lambda _p: "1") as server:
        client = _client(server, tmp_path)
        with pytest.raises(evalnb.judges.ContractError, match="honours none of"):
            evalnb.evaluate(lab, ["binary_judge"], judge=client, progress=False, contract="strict")
        caps = client.capabilities()
        assert caps.best() is None and "ignored" in caps.notes["json_object_schema"]
        probes = server.probes
        again = _client(server, tmp_path)  # the same cache file: the probe is not repeated
        assert again.capabilities() == caps and server.probes == probes
        again.capabilities(refresh=True)
        assert server.probes == 2 * probes


def test_a_server_that_stops_honouring_the_contract_is_seen_per_row(tmp_path: Path) -> None:
    def body(content: str) -> bytes:
        reply = {"role": "assistant", "content": content}
        return json.dumps({"choices": [{"index": 0, "message": reply}]}).encode()

    def raw(prompt: str) -> bytes:
        if prompt.endswith("Say hello in one word."):
            return body('{"probe": "kiwi-7"}')  # the probe: every JSON contract honoured
        return body("1")  # the rows: a bare word, the schema ignored

    lab = _lab(["q", "r"], ["a", "b"])
    with LoopbackLLM(raw=raw) as server:
        client = _client(server, tmp_path)
        out = evalnb.evaluate(lab, ["binary_judge"], judge=client, progress=False)
    details = _details(out, "binary_judge")
    assert all("ignored the" in d["contract_drift"] for d in details.values())
    assert out.judges.report()["contract_drift"].to_list() == [2]


def _logprob_body(content: str, alternatives: list[tuple[str, float]]) -> bytes:
    tokens = [
        {
            "token": content,
            "logprob": alternatives[0][1],
            "top_logprobs": [{"token": t, "logprob": lp} for t, lp in alternatives],
        }
    ]
    body = {
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "logprobs": {"content": tokens},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 20, "completion_tokens": 1},
    }
    return json.dumps(body).encode()


def test_probabilities_give_p_pass_and_the_expected_score(tmp_path: Path) -> None:
    def raw(prompt: str) -> bytes:
        if "from 1 to 10" in prompt:
            return _logprob_body("8", [("8", math.log(0.5)), ("6", math.log(0.25)), ("x", -1.0)])
        return _logprob_body("1", [("1", math.log(0.6)), ("0", math.log(0.2)), ("The", -0.5)])

    lab = _lab(["q"], ["a"])
    with LoopbackLLM(raw=raw) as server:
        client = _client(server, tmp_path)
        assert client.capabilities().logprobs
        out = evalnb.evaluate(
            lab,
            ["binary_judge", "score_judge"],
            judge=client,
            progress=False,
            score_mode="logprobs",
        )
    assert _values(out, "binary_judge") == {"q": pytest.approx(0.75)}  # 0.6 / (0.6 + 0.2)
    expected = (8 * 0.5 + 6 * 0.25) / 0.75
    assert _values(out, "score_judge_raw") == {"q": pytest.approx(expected)}
    assert _details(out, "binary_judge")["q"]["probability"] == pytest.approx(0.75)


def test_no_alternatives_at_the_token_give_no_probability_not_certainty(tmp_path: Path) -> None:
    def raw(prompt: str) -> bytes:
        whole = _logprob_body("1", [("1", math.log(0.6)), ("0", math.log(0.2))])
        if "hello" in prompt.lower():  # the capability probe sees alternatives
            return whole
        body = json.loads(whole)  # the judged rows do not: a host that stopped sending them
        body["choices"][0]["logprobs"]["content"][0]["top_logprobs"] = []
        return json.dumps(body).encode()

    lab = _lab(["q"], ["a"])
    with LoopbackLLM(raw=raw) as server, pytest.warns(evalnb.NothingScoredWarning):
        out = evalnb.evaluate(
            lab,
            ["binary_judge"],
            judge=_client(server, tmp_path),
            progress=False,
            score_mode="logprobs",
        )
    assert _values(out, "binary_judge") == {"q": None}  # was 1.0: P(pass) from one token
    assert "no probability" in _details(out, "binary_judge")["q"]["reason"]


def test_score_mode_logprobs_on_a_server_without_them_says_so(tmp_path: Path) -> None:
    lab = _lab(["q"], ["a"])
    with (
        LoopbackLLM(lambda _p: "1") as server,
        pytest.raises(ValueError, match="log-probabilities"),
    ):
        evalnb.evaluate(
            lab,
            ["binary_judge"],
            judge=_client(server, tmp_path),
            progress=False,
            score_mode="logprobs",
        )


def test_pairwise_runs_on_the_comparative_judge_in_both_orders(tmp_path: Path) -> None:
    lab = evalnb.load(
        pl.DataFrame(
            {
                "prompt": ["q1", "q1"],
                "model": ["a", "b"],
                "actual": ["good answer", "weak"],
            }
        )
    )

    def fair(prompt: str) -> str:
        first = prompt.split("[Answer 1]", 1)[1].split("[Answer 2]", 1)[0]
        return "9 3" if "good" in first else "3 9"

    with LoopbackLLM(fair) as server:
        result = evalnb.judges.pairwise(lab, "a", "b", _client(server, tmp_path))
    row = result.row(0, named=True)
    assert (row["winner"], row["consistent"], row["score_a"], row["score_b"]) == (
        "a",
        True,
        9.0,
        3.0,
    )
    assert row["contract"] == "free"
