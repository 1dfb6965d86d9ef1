"""The MRM workflow end to end, offline: nine steps, a killed run resumed, stale steps, systems."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import duckdb
import polars as pl
import pytest

import evalnb
from evalnb.cli.main import main
from evalnb.workflow import STEPS
from evalnb_testkit.corpus_docs import LICENSES
from evalnb_testkit.llm_server import LoopbackLLM
from evalnb_testkit.workflow_system import async_rag, lazy_rag

# Suites generated from a real corpus with the embedding model, end to end: the slow tier.
pytestmark = [
    pytest.mark.skipif(not LICENSES.is_dir(), reason="needs Debian's base-files"),
    pytest.mark.slow,
    pytest.mark.xdist_group("workflow"),  # its module fixture is built once: on one worker
]
ROOT = Path(__file__).resolve().parents[2]
DOCS = [str(LICENSES / "Apache-2.0"), str(LICENSES / "MPL-2.0")]
PARAMS: dict[str, dict[str, Any]] = {
    "topic_modeling": {"max_tokens": 160, "min_topic_size": 3},
    "test_generation": {"n": 24},
    "calibration": {"min_labels": 8},
    "failure_clustering": {"min_failures": 3},
    "input_variations": {"perturbators": ["comma", "keyboard_typos"]},
    "adversarial_inputs": {"n": 9},
}


def _words(text: str | None) -> set[str]:
    return {w.strip(".,;:\"'()").lower() for w in (text or "").split()} - {""}


def label_like_a_reviewer(wf: evalnb.Workflow, n: int = 12) -> None:
    """A scripted reviewer: an answer passes when it holds most words of the expected one."""
    lab = wf.lab
    rows = lab.calibration.sample("answer_similarity", "answer_similarity", n=n, strategy="random")
    for r in rows.iter_rows(named=True):
        expected = _words((r["expected"] or [""])[0])
        shared = len(expected & _words(r["actual"])) / max(len(expected), 1)
        lab.calibration.add_label(
            r["case_id"],
            r["model"],
            "answer_similarity",
            "answer_similarity",
            "pass" if shared >= 0.6 else "fail",
            reviewer="ann",
        )


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A workflow through its first three steps (no system needed): each test copies it."""
    store = tmp_path_factory.mktemp("template") / "mrm.duckdb"
    wf = evalnb.workflow(store, corpus=DOCS, params=PARAMS, name="licences")
    for step in ("topic_modeling", "test_generation", "test_validation"):
        wf.run(step, who="ci")
    return store


def _copy(template: Path, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    wal = template.with_name(template.name + ".wal")  # committed rows not yet checkpointed
    if wal.exists():
        shutil.copy(wal, folder / "mrm.duckdb.wal")
    return Path(shutil.copy(template, folder / "mrm.duckdb"))


@pytest.fixture(scope="module")
def finished(template: Path, tmp_path_factory: pytest.TempPathFactory) -> evalnb.Workflow:
    store = _copy(template, tmp_path_factory.mktemp("workflow"))
    wf = evalnb.workflow(store, system=lazy_rag(store), system_name="rag")
    status = wf.run_all(who="ci")
    assert status.filter(pl.col("step") == "calibration")["status"].item() == "waiting"
    assert set(status.filter(pl.col("status") == "blocked")["step"]) == {
        "failure_clustering",
        "weakness_detection",
    }
    assert status.filter(pl.col("step").is_in(["input_variations", "adversarial_inputs"]))[
        "status"
    ].to_list() == ["done", "done"]  # what does not wait for people went on
    label_like_a_reviewer(wf)
    wf.run_all(who="ci")
    return wf


def test_nine_steps_run_review_and_hand_over(finished: evalnb.Workflow, tmp_path: Path) -> None:
    wf = finished
    assert wf.status()["status"].to_list() == ["done"] * 9
    lab = wf.lab
    assert lab.cases.filter(pl.col("perturbation_of").is_null()).height == 24
    assert set(lab.outputs["model"]) == {"rag"} and lab.outputs["error"].is_null().all()
    assert lab.outputs["context"].list.len().min() == 3  # the function's contexts were kept
    assert wf.summary("calibration")["n_labels"] >= 8
    assert {r["perturbation"] for r in wf.summary("input_variations")["per_kind"]} == {
        "comma",
        "keyboard_typos",
    }
    assert {r["kind"] for r in wf.summary("adversarial_inputs")["effect"]} == {
        "misleading",
        "contradictory",
        "injection",
    }
    for step in ("test_validation", "evaluation", "calibration"):
        wf.approve(step, "risk-owner", note=f"{step} <checked>")
    with pytest.raises(KeyError, match="no workflow step"):
        wf.approve("nope", "risk-owner")
    status = wf.status()
    assert status.filter(pl.col("approved_by").is_not_null())["step"].to_list() == [
        "test_validation",
        "evaluation",
        "calibration",
    ]

    # No corrected pass rate on this lab: the bundle says no level was signed off.
    with pytest.warns(UserWarning, match="no accepted pass rate"):
        paths = wf.artifacts(tmp_path / "out")
    html = paths["report"].read_text(encoding="utf-8")
    for spec in STEPS:
        assert spec.title in html
    assert "approved by <b>risk-owner</b>: “evaluation &lt;checked&gt;”" in html  # escaped
    # Nothing runs and nothing is fetched: no script, no external src or href. (A case's text
    # may quote a URL, e.g. a cloze question on the MPL's "http://mozilla.org/MPL/2.0/": as
    # escaped text it is no request.)
    assert "<script" not in html
    assert not re.search(r"""(?:src|href)\s*=\s*["']?\s*(?:https?:)?//""", html, re.I)
    guard = json.loads(paths["guardrail"].read_text())
    assert guard["calibrated_thresholds"]  # the calibrated threshold is handed over
    assert paths["system_prompt_extension"].read_text().startswith("# System prompt extension")
    # The calibrated metric is handed over for ongoing monitoring: the bundle and its plan.
    handed = json.loads(paths["calibration"].read_text())
    assert handed["version"] == 2 and handed["evaluators"]
    assert "# Ongoing monitoring plan" in paths["monitoring_plan"].read_text()
    assert paths["corpus_patch"].exists()
    kinds = Counter(wf.events()["event"])
    assert kinds["finished"] >= 9 and kinds["approved"] == 3 and kinds["waiting"] == 1
    assert kinds["written"] == 1  # the hand-over is in the audit trail too

    reviews = {
        s: wf.review(s)
        for s in (
            "topic_modeling",
            "evaluation",
            "weakness_detection",
            "input_variations",
            "adversarial_inputs",
        )
    }
    assert type(reviews["evaluation"]).__name__ == "Eye"
    assert type(wf.review("calibration", reviewer="ann")).__name__ == "Labeler"
    assert type(wf.review("test_validation", reviewer="ann")).__name__ == "Curator"
    with pytest.raises(ValueError, match="reviewer="):
        wf.review("calibration")


def test_a_changed_threshold_makes_the_steps_after_calibration_stale(
    finished: evalnb.Workflow,
) -> None:
    wf = finished
    before = wf.summary("weakness_detection")["threshold"]
    # A stricter second reviewer fails the six lowest-scored answers that pass now: the
    # labels no longer fit the current threshold, so the labeler's apply moves it (a reviewer
    # who agreed with it would leave it where it is, as recalibrate keeps a threshold that
    # fits the labels as well as any).
    lab = wf.lab
    unlabelled = lab.calibration.sample("answer_similarity", "answer_similarity", n=10_000)
    for r in unlabelled.filter(pl.col("passed")).sort("value").head(6).iter_rows(named=True):
        lab.calibration.add_label(
            r["case_id"],
            r["model"],
            "answer_similarity",
            "answer_similarity",
            "fail",
            reviewer="bob",
        )
    moved = lab.calibration.recalibrate("answer_similarity", "answer_similarity")
    assert moved.threshold > before, moved
    status = dict(wf.status().select("step", "status").iter_rows())
    assert status["calibration"] == "done"  # its own inputs did not change
    assert status["failure_clustering"] == status["weakness_detection"] == "stale"
    assert status["input_variations"] == "done"  # does not depend on calibration
    wf.run_all(who="ci")
    assert wf.status()["status"].to_list() == ["done"] * 9
    after = wf.summary("weakness_detection")["threshold"]
    current = wf.lab.metric_spec("answer_similarity", "answer_similarity")["threshold"]
    assert after == pytest.approx(current) and after != before
    assert f"{after:.4g}" in wf.report().html  # the report shows the new threshold
    wf.configure("test_generation", n=20)  # a parameter change upstream: all after it stale
    assert wf.status()["status"].to_list() == ["done"] + ["stale"] * 8
    wf.configure("test_generation", n=24)  # and back: nothing to redo
    assert wf.status()["status"].to_list() == ["done"] * 9


RUNNER = """
import sys, evalnb
from evalnb_testkit.workflow_system import lazy_rag
store = sys.argv[1]
wf = evalnb.workflow(store, system=lazy_rag(store, delay_s=0.4), system_name="rag")
wf.run_all()
"""


def _asked(log: Path) -> Counter[str]:
    return Counter(log.read_text(encoding="utf-8").splitlines()) if log.exists() else Counter()


def _answers(w: evalnb.Workflow) -> pl.DataFrame:
    base = w.lab.cases.filter(pl.col("perturbation_of").is_null()).select("case_id")
    out = w.lab.outputs.join(base, on="case_id")
    return out.select("case_id", "actual", "context").sort("case_id")


def test_a_workflow_killed_mid_step_resumes_without_redoing_or_reasking(
    template: Path, finished: evalnb.Workflow, tmp_path: Path
) -> None:
    store, log = _copy(template, tmp_path), tmp_path / "asked.txt"
    # The system answers ten calls and then hangs: the run is killed mid-step, at a known point.
    env = {**os.environ, "EVALNB_TEST_ASKED": str(log), "EVALNB_TEST_HANG_AFTER": "10"}
    proc = subprocess.Popen([sys.executable, "-c", RUNNER, str(store)], cwd=ROOT, env=env)
    deadline = time.monotonic() + 240
    while sum(_asked(log).values()) <= 10 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.02)
    time.sleep(3)  # the ten answers returned 0.4 s after they were asked; each is committed then
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    wf = evalnb.workflow(store, system=lazy_rag(store), system_name="rag")
    status = dict(wf.status().select("step", "status").iter_rows())
    assert status["evaluation"] == "interrupted", status
    with duckdb.connect(str(store.with_name("mrm.answers.duckdb")), read_only=True) as con:
        answered = {
            json.loads(r)["prompt"].replace("\n", "\\n")
            for (r,) in con.execute("SELECT request FROM llm_cache").fetchall()
        }
    assert 0 < len(answered) <= 10, "killed mid-step, after the answers the system gave"
    before = _asked(log)
    os.environ["EVALNB_TEST_ASKED"] = str(log)
    try:
        wf.run_all()
    finally:
        del os.environ["EVALNB_TEST_ASKED"]
    after = _asked(log)
    assert [p for p in answered if after[p] > before[p]] == []  # no answered case asked again
    events = wf.events()
    for step in ("topic_modeling", "test_generation", "test_validation"):
        done = events.filter((pl.col("step") == step) & (pl.col("event") == "finished"))
        assert done.height == 1, f"{step} was redone"
    assert wf.status().filter(pl.col("step") == "evaluation")["status"].item() == "done"
    assert _answers(wf).equals(_answers(finished))  # as the never-interrupted run answered


def test_an_async_function_and_a_rag_endpoint_are_systems_too(
    template: Path, tmp_path: Path
) -> None:
    store = _copy(template, tmp_path)
    wf = evalnb.workflow(store, system=async_rag(store), system_name="async-rag")
    wf.run("evaluation")
    out = wf.lab.outputs
    assert (
        out.height == 24 and out["context"].list.len().min() == 3 and out["error"].is_null().all()
    )

    def reply(prompt: str) -> str:
        return "The licence is granted." if "[[fail]]" not in prompt else "x"

    def passages(prompt: str) -> dict[str, object]:
        return {"contexts": [{"content": f"passage about {prompt[:20]}"}, "second passage"]}

    with LoopbackLLM(reply, extra=passages) as server:
        client = evalnb.LLMClient(server.base_url, "rag-endpoint", cache=tmp_path / "c.duckdb")
        ep = evalnb.workflow(store, system=client)  # the same suite, another system
        ep.run("evaluation")
    got = ep.lab.outputs.filter(pl.col("model") == "rag-endpoint")
    assert got.height == 24 and (got["actual"] == "The licence is granted.").all()
    assert got["context"].list.get(1).to_list() == ["second passage"] * 24
    assert got["context"].list.get(0).str.starts_with("passage about ").all()


def test_a_failing_function_keeps_its_errors_and_the_step_goes_on(
    template: Path, tmp_path: Path
) -> None:
    store = _copy(template, tmp_path)
    calls: Counter[str] = Counter()

    def flaky(prompt: str) -> str:
        calls[prompt] += 1
        if "blank" in prompt:
            raise ConnectionError("the retriever is down")
        return 42 if "mean" in prompt else "an answer"  # type: ignore[return-value]

    wf = evalnb.workflow(store, system=flaky, system_name="flaky")
    wf.run("evaluation")
    out = wf.lab.outputs.join(wf.lab.cases.select("case_id", "prompt"), on="case_id")
    down = out.filter(pl.col("prompt").str.contains("blank"))
    assert down.height and down["error"].str.contains("ConnectionError").all()
    assert all(calls[p] == 3 for p in down["prompt"])  # tried, then retried twice
    wrong = out.filter(
        pl.col("prompt").str.contains("mean") & ~pl.col("prompt").str.contains("blank")
    )
    assert wrong["error"].str.contains("expected the answer as text").all()
    assert all(calls[p] == 1 for p in wrong["prompt"])  # a wrong shape is not retried


def test_a_corpus_read_before_is_taken_as_it_is(tmp_path: Path) -> None:
    corpus = evalnb.corpus(DOCS[:1], max_tokens=160)  # in memory
    wf = evalnb.workflow(
        tmp_path / "w.duckdb", corpus=corpus, params={"topic_modeling": {"min_topic_size": 3}}
    )
    wf.run("topic_modeling")
    chunks = wf.lab.table("chunks")
    assert chunks.drop("topic").equals(corpus.chunks.drop("topic"))
    assert (
        chunks["topic"].drop_nulls().n_unique() == wf.summary("topic_modeling")["topics"].__len__()
    )


def test_the_command_line_runs_and_reports_a_workflow(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "cli.duckdb"
    evalnb.workflow(
        store,
        corpus=DOCS,
        system="retrieval-baseline",
        params={**PARAMS, "test_generation": {"n": 8}},
    )
    assert main(["workflow", "run", str(store), "--all", "--who", "cli"]) == 3  # waits for labels
    assert "waiting" in capsys.readouterr().err
    assert main(["workflow", "status", str(store)]) == 0
    out = capsys.readouterr().out
    assert "evaluation" in out and "done" in out and "blocked" in out
    assert main(["workflow", "approve", str(store), "evaluation", "--reviewer", "ro"]) == 0
    assert main(["workflow", "run", str(store), "--step", "failure_clustering"]) == 2
    assert "depends on ['calibration']" in capsys.readouterr().err
