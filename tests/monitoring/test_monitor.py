"""Ongoing monitoring end to end: OTLP files in, scores, windows, labels, alerts, kills."""

from __future__ import annotations

import http.server
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, ClassVar

import polars as pl
import pytest

import evalnb
from evalnb.calibration.bundle_check import seal
from evalnb.cli.main import main as cli
from evalnb.evaluation.catalog import get_evaluator
from evalnb.lab.errors import InputError
from evalnb.monitoring.plan import monitoring_plan
from evalnb_testkit.monitor_traffic import calibrated_bundle, write_traffic

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return calibrated_bundle(tmp_path_factory.mktemp("bundle") / "cal.json")


def _label_sample(mon: evalnb.Monitor, truth: dict[str, bool], **options: Any) -> int:
    sample = mon.sample_for_review(50, windows=None, **options)
    w = evalnb.labeler(sample, "rouge", "rouge_l", reviewer="bob", n=10_000, strategy="random")
    while w.remaining:
        w.label("pass" if truth[w.item["case_id"]] else "fail")
    return mon.add_labels(sample)


def test_a_bundle_monitors_otlp_files_end_to_end(bundle: Path, tmp_path: Path) -> None:
    truth = write_traffic(tmp_path / "otlp", days=3, per_day=200)
    names = {p.name for p in (tmp_path / "otlp").glob("*.json")}
    assert "traces.json" in names and len(names) > 3  # rotated files and the live one
    mon = evalnb.monitor(bundle, tmp_path / "monitor.duckdb")
    first = mon.ingest(tmp_path / "otlp")
    assert (first["requests"], first["duplicates"], first["waiting"]) == (600, 0, 0)
    again = mon.ingest(tmp_path / "otlp")
    assert (again["requests"], again["lines"], again["files"]) == (0, 0, 0)
    windows = mon.windows("1d")
    assert windows["n"].to_list() == [200, 200, 200]
    assert set(windows["bundle_hash"]) == {mon.spec.hash}
    assert windows["corrected"].is_null().all()  # nobody labelled yet
    # Reviewers label a random sample of each closed window; the labels correct the rate.
    assert _label_sample(mon, truth) == 100
    sample_again = mon.sample_for_review  # the same windows are not drawn twice
    with pytest.raises(ValueError, match="no closed window"):
        sample_again(50, windows=None)
    windows = mon.windows("1d")
    labelled = windows.filter(pl.col("labels") > 0)
    assert labelled.height == 2 and (labelled["labels"] == 50).all()
    true_rates = pl.DataFrame({"trace_id": list(truth), "good": list(truth.values())})
    for row in labelled.iter_rows(named=True):
        assert row["corrected_low"] <= row["corrected"] <= row["corrected_high"]
        assert row["superpop_low"] <= row["superpop"] <= row["superpop_high"]
        assert row["cs_low"] <= row["cs_estimate"] <= row["cs_high"]
    assert true_rates.height == 600
    # Labels given back twice count once.
    sample = mon.traces_lab(list(truth)[:3])
    assert mon.add_labels(sample) == 0
    status = mon.status()
    assert status["traces"] == 600 and status["labels"] == 100 and status["waiting_spans"] == 0


def test_duplicates_split_traces_and_unfinished_lines(bundle: Path, tmp_path: Path) -> None:
    folder = tmp_path / "otlp"
    write_traffic(folder, days=1, per_day=30, rotate_lines=None)
    lines = (folder / "traces.json").read_text().splitlines()
    spans = [
        (rs, ss, span)
        for line in lines
        for rs in json.loads(line)["resourceSpans"]
        for ss in rs["scopeSpans"]
        for span in ss["spans"]
    ]

    def request(items: list[tuple[Any, Any, Any]]) -> str:
        rs, ss, _ = items[0]
        body = {
            "resourceSpans": [
                {
                    "resource": rs["resource"],
                    "scopeSpans": [{"scope": ss["scope"], "spans": [s for _, _, s in items]}],
                }
            ]
        }
        return json.dumps(body) + "\n"

    roots = [s for s in spans if not s[2].get("parentSpanId")]
    children = [s for s in spans if s[2].get("parentSpanId")]
    live = tmp_path / "live"
    live.mkdir()
    (live / "a.json").write_text(request(children))  # every trace's children, no root
    mon = evalnb.monitor(bundle, tmp_path / "m.duckdb")
    report = mon.ingest(live)
    assert report["requests"] == 0 and report["waiting"] == len(children)
    # The roots arrive in the next file, the last one still being written (no newline yet).
    half = request(roots[:15]) + request(roots[15:]).rstrip("\n")
    (live / "b.json").write_text(half)
    time.sleep(0.01)
    assert mon.ingest(live)["requests"] == 15
    with (live / "b.json").open("a") as fh:
        fh.write("\n")
    report = mon.ingest(live)
    assert report["requests"] == 15 and report["waiting"] == 0
    # The same traces again, in another file: held already, scored once.
    (live / "c.json").write_text("\n".join(lines) + "\n")
    report = mon.ingest(live)
    assert (report["requests"], report["duplicates"]) == (0, 30)
    counts = mon.store.rows("SELECT count(*), count(DISTINCT trace_id) FROM scores")[0]
    assert counts == (30, 30)
    traces = mon.traces_lab(mon.store.read("SELECT trace_id FROM traces")["trace_id"].to_list())
    assert traces.outputs["context"].list.len().min() == 1  # the RETRIEVER's document


def test_a_bad_line_is_quarantined_with_its_file_and_line_and_reading_goes_on(
    bundle: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "otlp"
    write_traffic(folder, days=1, per_day=20, rotate_lines=None)
    path = folder / "traces.json"
    good = path.read_text()
    path.write_text(good + '{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": 7}]}]}]}\n')
    mon = evalnb.monitor(bundle, tmp_path / "m.duckdb")
    report = mon.ingest(folder)
    (bad,) = mon.quarantine().iter_rows(named=True)
    assert bad["path"] == str(path) and bad["line"] == good.count(chr(10)) + 1
    assert "traceId" in bad["reason"] and report["quarantined"] == 1
    assert mon.status()["traces"] == 20 and mon.status()["quarantined"] == 1


def test_a_bundle_this_evalnb_cannot_honour_is_refused_by_name(
    bundle: Path, tmp_path: Path
) -> None:
    data = json.loads(bundle.read_text())
    older = seal({**data, "evaluators": [{**data["evaluators"][0], "version": "0"}]})
    installed = get_evaluator("rouge").version
    with pytest.raises(InputError, match=rf"rouge at version {installed}.*'0'") as err:
        evalnb.monitor(older, tmp_path / "m.duckdb")
    assert "$.evaluators[0].version" in str(err.value)
    gone = seal({**data, "evaluators": [{"id": "rouge_9000", "version": "1", "params": {}}]})
    with pytest.raises(InputError, match="rouge_9000"):
        evalnb.monitor(gone, tmp_path / "m.duckdb")
    old = seal(
        {k: v for k, v in data.items() if k not in ("evaluators", "reference")} | {"version": 1}
    )
    with pytest.raises(InputError, match="version 2"):
        evalnb.monitor(old, tmp_path / "m.duckdb")


class _Hook(http.server.BaseHTTPRequestHandler):
    received: ClassVar[list[dict[str, Any]]] = []
    fail = False

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if type(self).fail:
            self.send_response(503)
        else:
            type(self).received.append(body | {"key": self.headers["Idempotency-Key"]})
            self.send_response(200)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def test_alerts_are_posted_once_per_window_and_retried_after_a_failure(
    bundle: Path, tmp_path: Path
) -> None:
    data = json.loads(bundle.read_text())
    data["metrics"][0]["accepted"] = 0.99  # a level the bot (85 % good) cannot keep
    data = seal(data)  # an edit on purpose: sealed again
    truth = write_traffic(tmp_path / "otlp", days=4, per_day=200)
    mon = evalnb.monitor(data, tmp_path / "m.duckdb")
    mon.ingest(tmp_path / "otlp")
    _label_sample(mon, truth)
    server = http.server.HTTPServer(("127.0.0.1", 0), _Hook)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_port}/hook"
    try:
        _Hook.fail = True
        with pytest.warns(UserWarning, match="not delivered to the webhook"):
            alerts = mon.alerts("1d", webhook=url, drift=False)
        assert alerts["last_error"].drop_nulls().to_list() == ["HTTP 503: "]
        assert alerts.height >= 1 and alerts["sent_at"].is_null().all()
        _Hook.fail = False
        for _ in range(3):  # every run after: nothing posted twice
            alerts = mon.alerts("1d", webhook=url, drift=False)
        assert alerts["sent_at"].is_not_null().all()
        keys = [r["key"] for r in _Hook.received]
        assert len(keys) == alerts.height == len(set(keys))
        assert all(
            r["kind"] == "pass_rate" and r["bundle_hash"] == mon.spec.hash for r in _Hook.received
        )
    finally:
        server.shutdown()
        server.server_close()


def test_question_drift_is_flagged_where_users_ask_something_else(
    bundle: Path, tmp_path: Path
) -> None:
    write_traffic(tmp_path / "otlp", days=3, per_day=120, drifted_days=(2,))
    mon = evalnb.monitor(bundle, tmp_path / "m.duckdb")
    mon.ingest(tmp_path / "otlp")
    drift = mon.drift("1d", sample=120, permutations=100)
    same, moved = drift.row(0, named=True), drift.row(2, named=True)
    assert moved["question_distance"] > 3 * same["question_distance"]
    assert moved["question_p_adjusted"] < 0.05 and same["question_p_adjusted"] > 0.05
    assert moved["no_topic_share"] > 0.5 > same["no_topic_share"]
    kinds = mon.alerts("1d").filter(pl.col("window_start") == moved["window_start"])["kind"]
    assert "question_drift" in kinds.to_list()


def test_parquet_and_frames_are_ingested_and_deduplicated(bundle: Path, tmp_path: Path) -> None:
    frame = pl.DataFrame(
        {
            "trace_id": ["t1", "t2", "t3"],
            "at": ["2026-11-01T10:00:00Z", "2026-11-01T11:00:00Z", "2026-11-02T09:00:00Z"],
            "prompt": ["how do I pay my invoice"] * 3,
            "actual": ["pay it online", "by card", "by cheque"],
            "expected": ["pay it online or by card"] * 3,
        }
    )
    folder = tmp_path / "pq"
    folder.mkdir()
    frame.head(2).write_parquet(folder / "a.parquet")
    mon = evalnb.monitor(bundle, tmp_path / "m.duckdb")
    assert mon.ingest(folder)["requests"] == 2
    assert mon.ingest(folder)["requests"] == 0  # the same file: not read again
    report = mon.ingest(frame)
    assert (report["requests"], report["duplicates"]) == (1, 2)
    with pytest.raises(ValueError, match="trace_id"):
        mon.ingest(frame.drop("trace_id"))


_KILLED_INGEST = """
import sys, evalnb
mon = evalnb.monitor(sys.argv[1], sys.argv[2])
print(mon.ingest(sys.argv[3]), flush=True)
"""


def test_a_killed_ingest_loses_and_doubles_nothing(bundle: Path, tmp_path: Path) -> None:
    truth = write_traffic(tmp_path / "otlp", days=4, per_day=1000, rotate_lines=5)
    store = tmp_path / "m.duckdb"
    args = [sys.executable, "-c", _KILLED_INGEST, str(bundle), str(store), str(tmp_path / "otlp")]
    rng = random.Random(5)
    kills = 0
    for _ in range(8):
        proc = subprocess.Popen(
            args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT
        )
        time.sleep(rng.uniform(2.5, 5.0))
        if proc.poll() is not None:
            break
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        kills += 1
    assert kills >= 2  # the ingest really was cut, more than once
    done = subprocess.run(args, capture_output=True, text=True, cwd=ROOT, check=True, timeout=600)
    assert "'requests'" in done.stdout
    mon = evalnb.monitor(bundle, store)
    held = mon.store.rows(
        "SELECT (SELECT count(*) FROM traces), (SELECT count(DISTINCT trace_id) FROM traces), "
        "(SELECT count(*) FROM scores), (SELECT count(*) FROM pending)"
    )[0]
    assert held == (len(truth), len(truth), len(truth), 0)


def test_the_command_line_ingests_and_reports(
    bundle: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_traffic(tmp_path / "otlp", days=2, per_day=50)
    store = tmp_path / "m.duckdb"
    argv = ["--bundle", str(bundle), "--store", str(store)]
    assert cli(["monitor", "ingest", str(tmp_path / "otlp"), *argv]) == 0
    assert "100 new traces scored" in capsys.readouterr().out
    assert cli(["monitor", "status", *argv]) == 0
    out = capsys.readouterr().out
    assert "100 traces" in out and "rouge_l" in out
    assert cli(["monitor", "status", "--every", "1x", *argv]) == 2


def test_the_view_opens_a_clicked_window_in_the_eye(bundle: Path, tmp_path: Path) -> None:
    write_traffic(tmp_path / "otlp", days=2, per_day=40)
    mon = evalnb.monitor(bundle, tmp_path / "m.duckdb")
    mon.ingest(tmp_path / "otlp")
    view = mon.view("1d", drift=False)
    assert view.chart._windows and view.chart._meta["every"] == "1d"
    view.chart.selected_window = "2026-11-02T00:00:00Z"
    (title, eye) = view.detail.children
    assert isinstance(eye, evalnb.Eye) and "40 traces" in title.value


def test_the_report_and_the_mrm_hand_over_carry_the_monitoring(
    bundle: Path, tmp_path: Path
) -> None:
    truth = write_traffic(tmp_path / "otlp", days=3, per_day=100)
    mon = evalnb.monitor(bundle, tmp_path / "m.duckdb")
    mon.ingest(tmp_path / "otlp")
    _label_sample(mon, truth)
    lab = evalnb.load(pl.DataFrame({"prompt": ["<b>q</b>"], "expected": ["a"], "actual": ["a"]}))
    lab = evalnb.evaluate(lab, ["rouge"], progress=False)
    html = lab.report(tmp_path / "report.html", monitor=mon).html
    section = html[html.index("<h2>Ongoing monitoring</h2>") :]
    assert mon.spec.hash[:16] in section and "<svg" in section and "rouge_l (rouge)" in section
    assert "<b>q</b>" not in html  # lab text is escaped
    plan = monitoring_plan(json.loads(bundle.read_text()))
    assert "| rouge | rouge_l |" in plan and mon.spec.hash[:16] in plan and "0.800" in plan


def test_genai_convention_spans_give_the_question_and_answer(bundle: Path, tmp_path: Path) -> None:
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    from evalnb.monitoring.otlp_file import OTLPJsonFileExporter

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(OTLPJsonFileExporter(tmp_path / "otlp")))
    tracer = provider.get_tracer("agent")
    start = 1_793_491_200 * 10**9
    root = tracer.start_span(
        "invoke_agent faq", start_time=start, attributes={"gen_ai.operation.name": "invoke_agent"}
    )
    chat = {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "gpt-genai",
        "gen_ai.input.messages": json.dumps(
            [{"role": "user", "parts": [{"type": "text", "content": "how do I pay my invoice"}]}]
        ),
        "gen_ai.output.messages": json.dumps(
            [{"role": "assistant", "parts": [{"type": "text", "content": "pay it <b>online</b>"}]}]
        ),
    }
    tracer.start_span(
        "chat", context=trace.set_span_in_context(root), start_time=start + 10, attributes=chat
    ).end(start + 20)
    root.end(start + 30)
    provider.shutdown()
    mon = evalnb.monitor(bundle, tmp_path / "m.duckdb")
    assert mon.ingest(tmp_path / "otlp")["requests"] == 1  # three lines: one span each
    (row,) = mon.store.read("SELECT model, prompt, actual FROM traces").iter_rows()
    assert row == ("gpt-genai", "how do I pay my invoice", "pay it <b>online</b>")
    # No expected answer: ROUGE cannot score it, and says so in the unscored share.
    assert mon.windows("1d")["unscored_share"].to_list() == [1.0]


@pytest.mark.slow  # a model loaded, or processes racing: the slow tier
def test_two_ingests_at_once_hold_each_trace_and_score_once(bundle: Path, tmp_path: Path) -> None:
    truth = write_traffic(tmp_path / "otlp", days=2, per_day=1000, rotate_lines=5)
    store = tmp_path / "m.duckdb"
    evalnb.monitor(bundle, store)  # the store exists before both start
    args = [sys.executable, "-c", _KILLED_INGEST, str(bundle), str(store), str(tmp_path / "otlp")]
    procs = [subprocess.Popen(args, stdout=subprocess.PIPE, text=True, cwd=ROOT) for _ in range(2)]
    outputs = [p.communicate(timeout=600)[0] for p in procs]
    assert all(p.returncode == 0 for p in procs), outputs
    mon = evalnb.monitor(bundle, store)
    held = mon.store.rows(
        "SELECT (SELECT count(*) FROM traces), (SELECT count(*) FROM scores), "
        "(SELECT count(DISTINCT trace_id) FROM scores)"
    )[0]
    assert held == (len(truth), len(truth), len(truth))


def test_judges_score_only_their_share_of_traces_and_only_with_a_client(
    bundle: Path, tmp_path: Path
) -> None:
    from evalnb_testkit.llm_server import LoopbackLLM

    template = "Grade this answer.\n<<<{ACTUAL_OUTPUT}>>>\nReply true or false."
    data = json.loads(bundle.read_text())
    data["evaluators"].append(
        {"id": "byop", "version": "1", "params": {"prompt_template": template}}
    )
    data["metrics"].append(
        {**data["metrics"][0], "evaluator": "byop", "metric": "model_passes", "threshold": 0.5}
    )
    data = seal(data)
    write_traffic(tmp_path / "otlp", days=1, per_day=200)
    with LoopbackLLM(lambda prompt: "true" if "policy" in prompt else "false") as server:
        judge = evalnb.LLMClient(server.base_url, "judge", cache=tmp_path / "cache.duckdb")
        mon = evalnb.monitor(data, tmp_path / "m.duckdb", judge=judge, judge_rate=0.25)
        mon.ingest(tmp_path / "otlp")
        judged = mon.store.rows("SELECT count(*) FROM scores WHERE evaluator = 'byop'")[0][0]
        assert 25 <= judged <= 75 and server.total_calls == judged  # about a quarter of 200
    rest = evalnb.monitor(data, tmp_path / "other.duckdb")  # no client: judges left out
    rest.ingest(tmp_path / "otlp")
    assert set(rest.windows()["evaluator"]) == {"rouge"}


@pytest.mark.xdist_group("postgres")
def test_a_window_sample_goes_through_a_team_queue_and_back(
    bundle: Path, tmp_path: Path, pg_server: Any
) -> None:
    truth = write_traffic(tmp_path / "otlp", days=2, per_day=80)
    mon = evalnb.monitor(bundle, tmp_path / "m.duckdb")
    mon.ingest(tmp_path / "otlp")
    sample = mon.sample_for_review(30)  # the one closed window
    name = f"monitor-{tmp_path.name}"
    queue = evalnb.review(
        sample,
        pg_server.dsn(),
        name,
        evaluator="rouge",
        metric="rouge_l",
        per_item=1,
        n=sample.outputs.height,
        strategy="random",
    )
    with evalnb.ReviewQueue.open(pg_server.dsn(), name) as me:
        while (item := me.next("ann")) is not None:
            me.submit(item, "pass" if truth[item.case_id] else "fail", reviewer="ann")
    sample.calibration.pull_labels(queue, rule="all")
    queue.close()
    assert mon.add_labels(sample) == 30
    (row,) = mon.windows().filter(pl.col("labels") > 0).iter_rows(named=True)
    assert row["labels"] == 30 and row["corrected"] is not None
