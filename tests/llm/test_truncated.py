"""A reply the host cut off at its token limit is never read as complete (issue 71, 4)."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl

import evalnb
from evalnb_testkit.llm_server import LoopbackLLM


def _lab() -> evalnb.Lab:
    return evalnb.load(
        pl.DataFrame({"prompt": ["Is the sky blue?"], "actual": ["Yes, on a clear day."]})
    )


def _cut_below(limit: int) -> object:
    def answer(body: dict[str, object]) -> tuple[str, str]:
        asked = body.get("max_tokens")
        if isinstance(asked, int) and asked < limit:
            return "tr", "length"  # "true" cut after two characters
        return "true", "stop"

    return answer


def _run(server: LoopbackLLM, tmp_path: Path, **params: object) -> dict[str, object]:
    judge = evalnb.LLMClient(
        server.base_url, "judge", cache=tmp_path / "c.duckdb", params={"temperature": 0, **params}
    )
    out = evalnb.evaluate(
        _lab(),
        ["byop"],
        judge=judge,
        progress=False,
        prompt_template="Is {ACTUAL_OUTPUT} polite? true or false",
        contract="free",
    )
    row = out.scores.filter(pl.col("metric") == "model_passes")
    report = out.judges.report()
    return {"value": row["value"][0], "detail": json.loads(row["detail"][0]), "report": report}


def test_a_cut_off_reply_is_resent_with_twice_the_tokens_and_counted(tmp_path: Path) -> None:
    with LoopbackLLM(by_request=_cut_below(16)) as server:
        got = _run(server, tmp_path, max_tokens=10)
    assert got["value"] == 1.0
    detail = got["detail"]
    assert isinstance(detail, dict)
    assert detail["truncated"] is True and detail["repair"] == "fixed"
    assert got["report"]["truncated"].to_list() == [1]  # type: ignore[index]


def test_a_reply_cut_off_again_stays_a_failure_naming_the_truncation(tmp_path: Path) -> None:
    with LoopbackLLM(by_request=_cut_below(10_000)) as server:
        got = _run(server, tmp_path, max_tokens=10)
    assert got["value"] is None
    detail = got["detail"]
    assert isinstance(detail, dict)
    assert detail["parse_failed"] is True and "truncated" in str(detail["reason"])


def test_without_a_token_limit_of_ours_a_cut_reply_is_not_resent(tmp_path: Path) -> None:
    def always_cut(body: dict[str, object]) -> tuple[str, str]:
        del body
        return '{"verdict": "true"', "length"

    with LoopbackLLM(by_request=always_cut) as server:
        got = _run(server, tmp_path)
        calls = server.total_calls
    assert got["value"] is None and calls == 1
