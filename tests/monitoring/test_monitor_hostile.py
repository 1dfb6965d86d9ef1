"""Monitoring under torn files, many windows, no labels and hostile webhooks (issue 54)."""

from __future__ import annotations

import gzip
import json
import re
import socket
import threading
import time
import warnings
from pathlib import Path

import polars as pl
import pytest

import evalnb
from evalnb.calibration.bundle_check import check_calibration, seal
from evalnb.lab.errors import InputError
from evalnb.monitoring import ingest
from evalnb.monitoring.alerts import post_alert
from evalnb_testkit.monitor_traffic import calibrated_bundle, write_traffic


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return calibrated_bundle(tmp_path_factory.mktemp("bundle") / "cal.json")


def test_a_torn_line_a_gzip_file_and_a_late_span_are_quarantined_not_fatal(
    bundle: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "otlp"
    write_traffic(folder, days=1, per_day=80, rotate_lines=None)
    path = folder / "traces.json"
    lines = path.read_text().splitlines()
    assert len(lines) >= 3
    # One trace split over the two first exports: a child span in the first (to be torn),
    # its root and the rest in the second.
    first, second = json.loads(lines[0]), json.loads(lines[1])
    later = second["resourceSpans"][0]["scopeSpans"][0]["spans"]
    child = next(s for s in later if s.get("parentSpanId"))
    later.remove(child)
    first["resourceSpans"][0]["scopeSpans"][0]["spans"].insert(0, child)
    lines[0], lines[1] = json.dumps(first), json.dumps(second)
    # A collector killed mid-write, restarted: half a line, then its next export glued on.
    torn = lines[0][: len(lines[0]) // 2] + lines[1]
    bad_otlp = '{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": 7}]}]}]}'
    path.write_text("\n".join([torn, "not json at all", bad_otlp, *lines[2:]]) + "\n")
    (folder / "old.json").write_bytes(gzip.compress(b'{"resourceSpans": []}\n'))
    mon = evalnb.monitor(bundle, tmp_path / "m.duckdb")
    report = mon.ingest(folder)
    quarantined = mon.quarantine()

    # everything readable is in: every trace but those of the torn half, and none of those
    def ids(line: str) -> set[str]:
        return {
            span["traceId"]
            for rs in json.loads(line)["resourceSpans"]
            for ss in rs["scopeSpans"]
            for span in ss["spans"]
        }

    legible = set(re.findall(r'"traceId":\s*"([0-9a-f]+)"', lines[0][: len(lines[0]) // 2]))
    readable = set().union(*(ids(line) for line in lines[1:])) - legible
    held_ids = {r[0] for r in mon.store.rows("SELECT trace_id FROM traces")}
    assert child["traceId"] in legible  # the split trace lost a span in the tear
    assert not held_ids & legible and held_ids == readable
    reasons = " | ".join(quarantined["reason"])
    assert "a torn line" in reasons and "not one JSON object" in reasons
    assert "not an OTLP export request" in reasons and "traceId" in reasons
    assert "gzip" in reasons
    assert set(quarantined.filter(pl.col("line") > 0)["line"]) == {1, 2, 3}
    assert report["quarantined"] == quarantined.height == mon.status()["quarantined"]
    assert mon.ingest(folder)["quarantined"] == 0  # reported once, not on every run
    # A span of a trace already scored: counted, not silently dropped.
    one = json.loads(lines[2])
    span = one["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    late = {**span, "spanId": "ab" * 8, "parentSpanId": span["spanId"], "name": "late"}
    one["resourceSpans"][0]["scopeSpans"][0]["spans"] = [late]
    (folder / "later.json").write_text(json.dumps(one) + "\n")
    assert mon.ingest(folder)["quarantined"] == 1
    assert "after its trace was scored" in mon.quarantine()["reason"].to_list()[0]


def test_a_first_line_past_the_limit_is_skipped_to_its_end(
    bundle: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "otlp"
    write_traffic(folder, days=1, per_day=10, rotate_lines=None)
    path = folder / "traces.json"
    good = path.read_text()
    path.write_text('{"resourceSpans": [], "pad": "' + "x" * 200_000 + '"}\n' + good)
    assert max(len(line) for line in good.splitlines()) < 60_000
    monkeypatch.setattr(ingest, "MAX_LINE_BYTES", 60_000)
    monkeypatch.setattr(ingest, "CHUNK_BYTES", 25_000)  # the long line spans several reads
    mon = evalnb.monitor(bundle, tmp_path / "m.duckdb")
    report = mon.ingest(folder)
    assert mon.status()["traces"] == 10 and report["quarantined"] == 1
    assert "longer than 60,000 bytes" in mon.quarantine()["reason"][0]


def test_question_drift_alarms_on_a_new_domain_week_among_thirty_windows(
    bundle: Path, tmp_path: Path
) -> None:
    write_traffic(tmp_path / "otlp", days=30, per_day=30, drifted_days=(25, 26, 27, 28, 29))
    mon = evalnb.monitor(bundle, tmp_path / "m.duckdb")
    mon.ingest(tmp_path / "otlp")
    drift = mon.drift("1d", sample=30)
    assert drift.height == 30
    flagged = drift.filter(pl.col("question_p_adjusted") < 0.05)
    assert flagged.height >= 4  # with 200 permutations: none could be
    assert flagged["window_start"].min() >= drift["window_start"][25]
    kinds = mon.alerts("1d").filter(pl.col("kind") == "question_drift")
    assert kinds.height == flagged.height


def test_a_monitor_nobody_labels_for_still_alarms_uncorrected(tmp_path: Path) -> None:
    path = calibrated_bundle(tmp_path / "cal.json")
    data = json.loads(path.read_text())
    assert data["metrics"][0]["lab_pass_rate"] is not None
    data["metrics"][0]["accepted"] = None  # as a lab with no corrected pass rate exports it
    data = seal(data)
    rates = [0.85] * 4 + [0.3] * 6
    write_traffic(tmp_path / "otlp", days=10, per_day=120, good_rate=rates)
    mon = evalnb.monitor(data, tmp_path / "m.duckdb")
    mon.ingest(tmp_path / "otlp")
    alerts = mon.alerts("1d", drift=False)
    raw = alerts.filter(pl.col("kind") == "pass_rate_uncorrected")
    assert raw.height >= 3 and "uncorrected" in raw["detail"][0]
    assert raw["window_start"].min() >= mon.windows("1d")["window_start"][4]
    # no level at all: the monitor says no pass-rate alarm can fire
    data["metrics"][0]["lab_pass_rate"] = None
    with pytest.warns(UserWarning, match="no pass-rate alarm can fire"):
        evalnb.monitor(seal(data), tmp_path / "m2.duckdb")


def test_bundles_refuse_edits_bad_levels_and_metrics_no_score_reaches(
    bundle: Path, tmp_path: Path
) -> None:
    data = json.loads(bundle.read_text())
    edited = {**data, "metrics": [{**data["metrics"][0], "threshold": 0.01}]}
    with pytest.raises(InputError, match="changed after export"):
        check_calibration(edited, "edited.json")
    for value in (1.5, -0.1):
        bad = seal({**data, "metrics": [{**data["metrics"][0], "accepted": value}]})
        with pytest.raises(InputError, match=r"a pass rate in \[0, 1\]"):
            check_calibration(bad, "bad.json")
    with pytest.raises(InputError, match="monitors nothing"):
        evalnb.monitor(seal({**data, "metrics": []}), tmp_path / "a.duckdb")
    unknown = seal({**data, "metrics": [{**data["metrics"][0], "metric": "rouge_9"}]})
    with pytest.raises(InputError, match="a metric rouge produces"):
        evalnb.monitor(unknown, tmp_path / "b.duckdb")
    lab = evalnb.load(pl.DataFrame({"prompt": ["q"], "expected": ["a"], "actual": ["a"]}))
    with pytest.raises(ValueError, match=r"accepted is a pass rate in \[0, 1\]"):
        lab.calibration.export(tmp_path / "x.json", accepted=1.5)


def _serve(reply: bytes, drip_s: float | None) -> tuple[str, threading.Event]:
    """A webhook on loopback that answers ``reply``, byte by byte when ``drip_s``."""
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def run() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            with conn:
                conn.recv(65536)
                try:
                    if drip_s is None:
                        conn.sendall(reply)
                        while not stop.is_set():  # then an endless body
                            conn.sendall(b"0" * 65536)
                    else:
                        for byte in reply:
                            if stop.is_set():
                                break
                            conn.sendall(bytes([byte]))
                            time.sleep(drip_s)
                except OSError:
                    pass
        listener.close()

    threading.Thread(target=run, daemon=True).start()
    return f"http://127.0.0.1:{listener.getsockname()[1]}/hook", stop


def test_webhooks_are_bounded_in_time_and_memory() -> None:
    alert = {"alert_id": "a1", "kind": "pass_rate"}
    url, stop = _serve(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", drip_s=0.3)
    try:
        started = time.monotonic()
        why = post_alert(url, alert, timeout_s=1.5)
        assert why is not None and "1.5 s" in why
        assert time.monotonic() - started < 4  # the total deadline, not one per read
    finally:
        stop.set()
    huge = b"HTTP/1.1 200 OK\r\nContent-Length: 3000000000\r\n\r\n"
    url, stop = _serve(huge, drip_s=None)
    try:
        assert post_alert(url, alert, timeout_s=5) is None  # a 2xx body is never read
    finally:
        stop.set()
    failing = b"HTTP/1.1 500 Oops\r\nContent-Length: 3000000000\r\n\r\n"
    url, stop = _serve(failing, drip_s=None)
    try:
        started = time.monotonic()
        why = post_alert(url, alert, timeout_s=5)
        assert why is not None and why.startswith("HTTP 500") and len(why) < 300
        assert time.monotonic() - started < 5
    finally:
        stop.set()


def test_a_down_webhook_costs_one_timeout_per_run_and_says_why(
    bundle: Path, tmp_path: Path
) -> None:
    data = json.loads(bundle.read_text())
    data = seal({**data, "metrics": [{**data["metrics"][0], "accepted": 0.99}]})
    write_traffic(tmp_path / "otlp", days=5, per_day=60)
    mon = evalnb.monitor(data, tmp_path / "m.duckdb")
    mon.ingest(tmp_path / "otlp")
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{s.getsockname()[1]}/hook"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        alerts = mon.alerts("1d", webhook=url, drift=False)
    assert alerts.height >= 2 and alerts["sent_at"].is_null().all()
    assert alerts["last_error"].drop_nulls().len() == 1  # tried once, then stopped
    assert any("not delivered" in str(w.message) for w in caught)
