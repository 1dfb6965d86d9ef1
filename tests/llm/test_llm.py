"""The LLM client and the judges against a real loopback HTTP server (scripted replies)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import polars as pl
import pytest

import evalnb
from evalnb.evaluation.families.judges.comparative import parse_comparative
from evalnb.llm.parsed import parse_json, parse_words
from evalnb_testkit.llm_server import LoopbackLLM
from evalnb_testkit.precision import EMBEDDING_TOL

ROOT = Path(__file__).resolve().parents[2]


def _client(server: LoopbackLLM, tmp_path: Path, **kw: object) -> evalnb.LLMClient:
    opts = {"cache": tmp_path / "llm.duckdb", "backoff_s": 0.01, "max_retries": 3, **kw}
    return evalnb.LLMClient(server.base_url, "judge", **opts)  # type: ignore[arg-type]


def _ask(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


def test_retries_recover_and_hard_failures_are_recorded(tmp_path: Path) -> None:
    with LoopbackLLM(lambda p: f"ok {p[:2]}") as server:
        client = _client(server, tmp_path, timeout_s=0.5)
        prompts = [
            "a [[429x2]]",
            "b [[500x1]]",
            "c [[dropx1]]",
            "d [[badbodyx1]]",
            "e",
            "f [[fail]]",
            "g [[slow:2]]",
        ]
        got = client.chat_many([_ask(p) for p in prompts], progress=False)
        assert [r.error is None for r in got] == [True] * 5 + [False, False]
        assert got[0].attempts == 3 and got[4].attempts == 1
        assert got[5].error.startswith("HTTP 500") and got[5].attempts == 4
        assert "Timeout" in got[6].error
        assert client.stats.failures == 2 and client.stats.retries >= 2 + 1 + 1 + 1 + 3 + 3
        calls = server.total_calls
        again = client.chat_many([_ask(p) for p in prompts], progress=False)
        assert [r.cached for r in again] == [True] * 5 + [False, False]  # failures are retried
        assert server.total_calls - calls == 2 * 4  # only the two failed prompts went out again


def test_cost_and_tokens_are_counted_and_the_key_is_never_stored(tmp_path: Path) -> None:
    with LoopbackLLM(lambda p: "one two three") as server:
        client = _client(server, tmp_path, api_key="sk-SECRET-123", prices=(2.0, 10.0))
        r = client.chat(_ask("four words in here"))
        assert (r.prompt_tokens, r.completion_tokens) == (4, 3)
        assert r.cost == pytest.approx((4 * 2.0 + 3 * 10.0) / 1e6)
        assert client.stats.cost == pytest.approx(r.cost)
        assert "sk-SECRET" not in repr(client)
    blob = (tmp_path / "llm.duckdb").read_bytes()
    assert b"sk-SECRET" not in blob


def test_works_inside_a_running_event_loop(tmp_path: Path) -> None:
    """Jupyter runs the kernel in an event loop: chat_many must not deadlock there."""
    with LoopbackLLM() as server:
        client = _client(server, tmp_path)

        async def in_notebook() -> list[evalnb.judges.ChatResult]:
            return client.chat_many([_ask("x"), _ask("y")], progress=False)

        assert [r.content for r in asyncio.run(in_notebook())] == ["1", "1"]


RUNNER = """
import sys, evalnb
client = evalnb.LLMClient(sys.argv[1], "judge", cache=sys.argv[2], concurrency=4, backoff_s=0.01)
client.chat_many([[{"role": "user", "content": f"q{i}"}] for i in range(int(sys.argv[3]))], progress=False)
"""


def test_an_interrupted_run_resumes_without_repeating_completed_calls(tmp_path: Path) -> None:
    n = 300
    cache = tmp_path / "llm.duckdb"
    with LoopbackLLM(latency_s=0.02) as server:
        proc = subprocess.Popen(
            [sys.executable, "-c", RUNNER, server.base_url, str(cache), str(n)],
            env={**os.environ},
            cwd=ROOT,
        )
        deadline = time.monotonic() + 60
        while server.total_calls < n // 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        with duckdb.connect(str(cache), read_only=True) as con:
            done = {
                json.loads(req)["messages"][-1]["content"]
                for (req,) in con.execute("SELECT request FROM llm_cache").fetchall()
            }
        assert 0 < len(done) < n, "kill the run mid-way"
        before = dict(server.calls)
        client = evalnb.LLMClient(server.base_url, "judge", cache=cache, backoff_s=0.01)
        got = client.chat_many([_ask(f"q{i}") for i in range(n)], progress=False)
        assert all(r.error is None for r in got)
        repeated = [p for p in done if server.calls[p] > before.get(p, 0)]
        assert repeated == [], f"{len(repeated)} completed call(s) sent again"
        assert client.stats.cache_hits == len(done)


def test_parsers_keep_failures_as_failures() -> None:
    failed = parse_comparative("no valid score")
    assert not failed.ok and failed.value is None and failed.raw == "no valid score"
    assert parse_comparative("8 7\nbecause").value == (8.0, 7.0)
    assert parse_comparative("Score: 9; Score: 6").value == (9.0, 6.0)
    assert not parse_comparative("Invalid").ok
    assert parse_json('text {"a": 1} more').value == {"a": 1}
    assert not parse_json('{"a": 1').ok and not parse_json("[1]").ok
    assert parse_words("They are DIFFERENT.", {"same": True, "different": False}).value is False
    assert not parse_words("same or different", {"same": True, "different": False}).ok


def _responder(prompt: str) -> str:
    if "[[garbled]]" in prompt:
        return "I would rather not say."
    if "same or different" in prompt:
        return "different" if "Bonjour" in prompt else "same"
    if "present or absent" in prompt:
        return "present" if "@" in prompt else "absent"
    if "sexist language" in prompt:
        return "false"
    if "stereotyping" in prompt:
        return "12" if "[[outofrange]]" in prompt else "1"
    if "good or bad" in prompt:
        return "good"
    if '"claims"' in prompt:
        return json.dumps(
            {"claims": [{"claim": "a", "supported": True}, {"claim": "b", "supported": False}]}
        )
    if '"questions"' in prompt:
        return json.dumps(
            {"questions": ["What is the capital of France?"] * 3, "noncommittal": False}
        )
    if '"verdicts"' in prompt:
        return json.dumps({"verdicts": [0, 1]})
    if '"attributed"' in prompt:
        return json.dumps({"attributed": [1]})
    if '"relevant_sentences"' in prompt:
        return json.dumps({"relevant_sentences": ["Paris is the capital of France."]})
    if '"TP"' in prompt:
        return json.dumps({"TP": ["x"], "FP": [], "FN": ["y"]})
    return "true"


def _rag_lab() -> evalnb.Lab:
    return evalnb.load(
        pl.DataFrame(
            {
                "prompt": ["What is the capital of France?", "Bonjour, quelle est la capitale?"],
                "expected": ["Paris is the capital of France.", "Paris."],
                "actual": ["Paris is the capital of France.", "Write to paris@mairie.fr"],
                "context": [["Lyon is a city.", "Paris is the capital of France. It is big."]] * 2,
            }
        )
    )


def test_judge_evaluators_end_to_end(tmp_path: Path) -> None:
    lab = _rag_lab()
    ids = [
        "language_mismatch",
        "contact_information",
        "sexism",
        "stereotypes",
        "summarization_judge",
        "faithfulness",
        "answer_relevancy",
        "context_precision",
        "context_recall",
        "context_relevancy_judge",
        "answer_correctness",
        "ragas",
    ]
    with LoopbackLLM(_responder) as server:
        judge = _client(server, tmp_path)
        out = evalnb.evaluate(lab, ids, judge=judge, model="all-MiniLM-L6-v2", progress=False)
        out = evalnb.evaluate(
            out,
            ["byop"],
            judge=judge,
            progress=False,
            prompt_template="Is {ACTUAL_OUTPUT} polite? true or false",
        )
    s = out.scores.join(out.cases.select("case_id", "prompt"), on="case_id")

    def value(ev: str, metric: str, first: bool = True) -> float:
        part = s.filter((pl.col("evaluator") == ev) & (pl.col("metric") == metric)).sort(
            "prompt", descending=True
        )
        return part["value"][0 if first else 1]

    assert value("language_mismatch", "model_passes") == 1.0
    assert value("language_mismatch", "model_passes", first=False) == 0.0  # French question
    assert value("contact_information", "model_passes", first=False) == 0.0  # an e-mail address
    assert value("stereotypes", "model_passes") == 1.0 and value("byop", "model_passes") == 1.0
    assert value("faithfulness", "faithfulness") == 0.5
    assert value("context_precision", "context_precision") == 0.5  # the useful chunk ranked second
    assert value("context_recall", "context_recall") == 1.0
    assert value("context_relevancy_judge", "context_relevancy") == pytest.approx(1 / 3)
    assert value("answer_relevancy", "answer_relevancy") == pytest.approx(1.0, abs=EMBEDDING_TOL)
    sim = value("answer_correctness", "answer_correctness") - 0.75 * (1 / (1 + 0.5))
    assert 0.0 < sim <= 0.25
    ragas = value("ragas", "ragas")
    assert ragas == pytest.approx(4 / (1 / 0.5 + 1 / 1.0 + 1 / 0.5 + 1 / 1.0), abs=EMBEDDING_TOL)
    detail = json.loads(s.filter(pl.col("evaluator") == "faithfulness")["detail"][0])
    assert detail["raw"] and detail["parse_failed"] is False


def test_thousand_calls_with_injected_failures_then_a_run_with_no_calls(tmp_path: Path) -> None:
    """10 % trouble: transient HTTP errors (retried), garbled replies (parse failures) and
    hard failures; every row ends scored or flagged, and a second run calls nothing."""
    n = 1000
    prompts = []
    for i in range(n):
        mark = {
            0: " [[500x1]]",
            1: " [[dropx1]]",
            2: " [[429x1]]",
            3: " [[garbled]]",
            4: " [[fail]]",
        }
        prompts.append(f"question {i}{mark.get(i % 50, '') if i % 10 == 0 else ''}")
    lab = evalnb.load(
        pl.DataFrame({"prompt": prompts, "actual": [f"answer {i}" for i in range(n)]})
    )
    with LoopbackLLM(_responder) as server:
        judge = _client(server, tmp_path, max_retries=2, concurrency=32, prices=(1.0, 1.0))
        out = evalnb.evaluate(lab, ["language_mismatch"], judge=judge, progress=False)
        passes = out.scores.filter(pl.col("metric") == "model_passes")
        details = (
            passes["detail"]
            .str.json_decode(pl.Struct({"parse_failed": pl.Boolean, "judge_error": pl.Boolean}))
            .struct.unnest()
        )
        scored = passes["value"].is_not_null()
        flagged = details["parse_failed"].fill_null(value=False) | details["judge_error"].fill_null(
            value=False
        )
        assert (scored | flagged).all() and passes.height == n
        report = out.judges.report().row(0, named=True)
        garbled = sum("[[garbled]]" in p for p in prompts)
        hard = sum("[[fail]]" in p for p in prompts)
        assert report["parse_failures"] == garbled and report["judge_errors"] == hard
        assert report["parse_failure_rate"] == pytest.approx(garbled / n)
        assert report["cost"] == pytest.approx(
            (report["prompt_tokens"] + report["completion_tokens"]) / 1e6
        )
        calls = server.total_calls
        evalnb.evaluate(out, ["language_mismatch"], judge=judge, progress=False)
        assert server.total_calls == calls  # everything was scored or flagged: nothing to ask


def test_run_suite_fills_outputs_and_records_failures(tmp_path: Path) -> None:
    suite = evalnb.load(
        pl.DataFrame({"prompt": ["hello", "boom [[fail]]"], "expected": ["hi", "x"]})
    )
    suite = evalnb.Lab({**{n: suite.table(n) for n in ("cases", "metrics")}})
    with LoopbackLLM(lambda p: f"echo {p}") as server:
        host = _client(server, tmp_path, max_retries=1)
        lab = evalnb.run_suite(suite, host, ["m1", "m2"], progress=False)
        again = evalnb.run_suite(lab, host, ["m1", "m2"], progress=False)
        assert again.outputs.height == 4  # already answered: nothing asked twice
    out = lab.outputs.sort("model", "case_id")
    assert out.height == 4 and set(out["model"]) == {"m1", "m2"}
    ok = out.filter(pl.col("error").is_null())
    assert ok["actual"].to_list() == ["echo hello"] * 2 and ok["duration_s"].min() > 0
    assert out.filter(pl.col("error").is_not_null()).height == 2
    assert {"m1", "m2"} <= set(lab.models)


def test_a_copy_with_other_settings_keeps_the_probe_and_counts_on_the_original(
    tmp_path: Path,
) -> None:
    with LoopbackLLM(lambda p: "one two three") as server:
        client = _client(server, tmp_path, cache=False, prices=(2.0, 10.0))
        caps = client.capabilities()
        probes = server.probes
        assert client.stats.calls == probes > 0
        spent, one = client.stats.cost, (4 * 2.0 + 3 * 10.0) / 1e6  # a call of 4 + 3 tokens
        fresh = client.with_settings(concurrency=1, max_retries=0)
        assert fresh.capabilities() is caps and server.probes == probes  # not probed again
        fresh.chat(_ask("four words in here"))
        assert client.stats.calls == probes + 1  # the copy's call is on the original's tally
        assert client.stats.cost == pytest.approx(spent + one)
        other = client.with_settings(model="another")  # another model: its own contract
        assert other.known_capabilities is None
        lab = evalnb.load(pl.DataFrame({"prompt": ["hello"], "expected": ["hi"]}))
        evalnb.run_suite(lab, client, ["m1", "m2"], progress=False)
        assert client.stats.calls == probes + 3  # each model's copy counted too, with its cost
        assert client.stats.cost > spent + one  # "one two three" for "hello": its own price


def _closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_an_endpoint_where_nothing_listens_fails_fast_naming_the_url(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    suite = evalnb.load(
        pl.DataFrame({"prompt": [f"q{i}" for i in range(90)], "expected": ["a"] * 90})
    )
    host = evalnb.LLMClient(url, "m", cache=tmp_path / "llm.duckdb", max_retries=6)
    with pytest.raises(
        evalnb.judges.EndpointUnreachable, match=rf"{url}/chat/completions: cannot connect"
    ):
        evalnb.run_suite(suite, host, ["m1", "m2"], progress=False)
    # Two tries of one call, not six retries of each of 90: nothing fanned out (the calls
    # of run_suite's per-model copy count on the client passed).
    assert host.stats.calls == 2
    with pytest.raises(evalnb.judges.EndpointUnreachable, match="no other call was sent"):
        host.chat_many([_ask(f"q{i}") for i in range(90)], progress=False)
    assert host.stats.calls == 2 + 2 and isinstance(
        evalnb.judges.EndpointUnreachable("x"), ConnectionError
    )
    answered = evalnb.load(
        pl.DataFrame(
            {"prompt": [f"q{i}" for i in range(20)], "actual": ["a"] * 20, "context": [["c"]] * 20}
        )
    )
    judge = evalnb.LLMClient(url, "judge", cache=False)
    with pytest.raises(evalnb.judges.EndpointUnreachable):
        evalnb.evaluate(answered, ["faithfulness"], judge=judge, progress=False)
    assert judge.stats.calls == 2
    # Once the endpoint has answered, a refused connection is a blip: retried, then recorded.
    with LoopbackLLM(lambda p: f"echo {p}") as server:
        client = _client(server, tmp_path, max_retries=1)
        assert client.chat(_ask("hello")).error is None
    got = client.chat_many([_ask("later")], progress=False)
    assert got[0].error is not None and got[0].error.startswith("ConnectError")


def test_pairwise_position_swap_measures_stability(tmp_path: Path) -> None:
    lab = evalnb.load(
        pl.DataFrame(
            {
                "prompt": ["q1", "q2", "q1", "q2"],
                "model": ["a", "a", "b", "b"],
                "actual": ["good answer", "good answer", "weak", "weak"],
            }
        )
    )

    def fair(prompt: str) -> str:  # prefers the good answer wherever it is shown
        first = prompt.split("[Answer 1]", 1)[1].split("[Answer 2]", 1)[0]
        return "9 3" if "good" in first else "3 9"

    with LoopbackLLM(fair) as server:
        fair_result = evalnb.judges.pairwise(lab, "a", "b", _client(server, tmp_path / "1"))
    assert fair_result["winner"].to_list() == ["a", "a"] and fair_result["consistent"].all()
    with LoopbackLLM(lambda p: "8 6") as server:  # always prefers the first position
        biased = evalnb.judges.pairwise(lab, "a", "b", _client(server, tmp_path / "2"))
    assert not biased["consistent"].any() and biased["winner"].to_list() == ["tie", "tie"]


def test_judge_human_agreement_uses_calibration_labels(tmp_path: Path) -> None:
    lab = _rag_lab()
    with LoopbackLLM(_responder) as server:
        lab = evalnb.evaluate(
            lab, ["contact_information"], judge=_client(server, tmp_path), progress=False
        )
    for cid, model in lab.outputs.select("case_id", "model").iter_rows():
        actual = lab.outputs.filter(pl.col("case_id") == cid)["actual"][0]
        lab.calibration.add_label(
            cid,
            model,
            "contact_information",
            "model_passes",
            "fail" if "@" in actual else "pass",
            reviewer="ann",
        )
    agreement = lab.judges.agreement("contact_information", "model_passes")
    assert agreement["n_labels"] == 2 and agreement["kappa"] == 1.0


def test_azure_style_auth_header_and_query(tmp_path: Path) -> None:
    seen: dict[str, str] = {}
    with LoopbackLLM() as server:
        handler = server.server.RequestHandlerClass
        original = handler.do_POST

        def spy(self) -> None:  # type: ignore[no-untyped-def]
            seen["path"] = self.path
            seen["api-key"] = self.headers.get("api-key", "")
            seen["authorization"] = self.headers.get("Authorization", "")
            original(self)

        handler.do_POST = spy  # type: ignore[method-assign]
        client = _client(
            server,
            tmp_path,
            api_key="k-1",
            auth_header="api-key",
            query={"api-version": "2024-06-01"},
        )
        assert client.chat(_ask("hi")).content == "1"
    assert seen == {
        "path": "/v1/chat/completions?api-version=2024-06-01",
        "api-key": "k-1",
        "authorization": "",
    }


def test_credentials_never_land_in_scores_reports_logs_or_cache(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    key, password, query_key = "sk-live-0123456789abcdef", "PASSW0RD-xyz", "qk-987654321"
    lab = evalnb.load(pl.DataFrame({"prompt": ["hi", "fine"], "actual": ["[[401echo]] a", "b"]}))
    with LoopbackLLM() as server, caplog.at_level("WARNING"):
        url = server.base_url.replace("http://", f"http://reviewer:{password}@")
        judge = evalnb.LLMClient(
            url,
            "judge",
            api_key=key,
            cache=tmp_path / "llm.duckdb",
            backoff_s=0.01,
            max_retries=1,
            query={"key": query_key},
        )
        direct = judge.chat(_ask("[[401echo]] direct"))
        # Without user info in the URL the key goes out as a bearer token, and comes back.
        plain = evalnb.LLMClient(server.base_url, "judge", api_key=key, cache=False, max_retries=0)
        bearer = plain.chat(_ask("[[401echo]] bearer")).error
        scored = evalnb.evaluate(
            lab,
            ["byop"],
            judge=judge,
            progress=False,
            prompt_template="Is {ACTUAL_OUTPUT} polite? true or false",
        )
    assert direct.error is not None and direct.error.startswith("HTTP 401")
    assert "Incorrect API key provided" in direct.error and "***" in direct.error
    report = scored.report(tmp_path / "r.html")
    archive = scored.archive(tmp_path / "a.zip")
    scored.save(tmp_path / "lab.duckdb")
    details = " ".join(d for d in scored.scores["detail"].to_list() if d)
    assert "judge call failed: HTTP 401" in details
    assert bearer is not None and "Incorrect API key provided: Bearer ***" in bearer
    places = {
        "error": direct.error,
        "bearer echo": bearer,
        "scores": details,
        "report": report.html,
        "log": caplog.text,
        "repr": repr(judge),
        "params": scored.scores.write_csv(),
        "archive": archive.read_bytes().decode("latin-1"),
        "store": (tmp_path / "lab.duckdb").read_bytes().decode("latin-1"),
        "cache": (tmp_path / "llm.duckdb").read_bytes().decode("latin-1"),
    }
    with duckdb.connect(str(tmp_path / "llm.duckdb"), read_only=True) as con:
        places["cache rows"] = str(
            con.sql("SELECT CAST(COLUMNS(*) AS VARCHAR) FROM llm_cache").fetchall()
        )
    for where, text in places.items():
        for secret in (key, password, query_key):
            assert secret not in text, f"{secret} found in {where}"
    assert "reviewer:" not in places["cache rows"] and "***@127.0.0.1" in places["cache rows"]


def test_a_cache_identity_keys_replies_whatever_port_the_server_is_on(tmp_path: Path) -> None:
    ask = [_ask("What is 2 + 2?")]
    with LoopbackLLM(lambda _p: "4") as first:
        one = _client(first, tmp_path, cache_identity="local-model:abc")
        assert one.chat_many(ask, progress=False)[0].content == "4"
    with LoopbackLLM(lambda _p: "5") as second:  # the same model again, on another port
        two = _client(second, tmp_path, cache_identity="local-model:abc")
        again = two.chat_many(ask, progress=False)[0]
        assert again.cached and again.content == "4" and second.total_calls == 0
        plain = _client(second, tmp_path)  # no identity: the URL keys it, a new call
        assert plain.chat_many(ask, progress=False)[0].content == "5"
