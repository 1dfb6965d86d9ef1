"""Several reviewers, one lab store: nothing committed is lost, a stale copy never overwrites."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from typing import TYPE_CHECKING

import polars as pl
import pytest

import evalnb
from evalnb_testkit.paths import ROOT

if TYPE_CHECKING:
    from pathlib import Path

REVIEWERS = 4
QUOTA = 100  # labels per reviewer: time enough for six kills while they write


def _lab(path: Path, n: int = 120) -> Path:
    lab = evalnb.load(
        pl.DataFrame(
            {
                "prompt": [f"question {i}" for i in range(n)],
                "expected": [f"the answer is {i % 7} units" for i in range(n)],
                "actual": [f"the answer is {i % 5} units" for i in range(n)],
            }
        )
    )
    evalnb.evaluate(lab, ["rouge"], progress=False).save(path)
    return path


def test_saving_an_old_copy_keeps_other_processes_rows(tmp_path: Path) -> None:
    store = _lab(tmp_path / "lab.duckdb")
    old = evalnb.open(store)
    other = evalnb.open(store)
    cases = other.cases["case_id"].to_list()
    for i in range(10):
        other.calibration.add_label(
            cases[i], "model", "rouge", "rouge_l", "pass" if i % 2 else "fail", reviewer="b"
        )
    other.calibration.recalibrate("rouge", "rouge_l", n_boot=20)
    batch = other.table("info").vstack(pl.DataFrame({"key": ["batch:b"], "value": ['"x"']}))
    other.replace_tables({"info": batch})

    old.save(store)
    scored = evalnb.evaluate(old, ["bleu"], progress=False)
    old_batch = old.table("info").vstack(pl.DataFrame({"key": ["batch:a"], "value": ['"y"']}))
    old.replace_tables({"info": old_batch})

    final = evalnb.open(store)
    assert final.labels.height == 10
    assert (final.thresholds["source"] == "calibrated").sum() == 1
    assert {"batch:a", "batch:b"} <= set(final.table("info")["key"])
    assert set(final.scores["evaluator"]) == {"rouge", "bleu"}
    # the stale copies caught up with what they merged
    assert old.labels.height == 10 and (scored.thresholds["source"] == "calibrated").any()


def test_a_stale_copy_of_a_replaced_table_is_refused(tmp_path: Path) -> None:
    store = _lab(tmp_path / "lab.duckdb")
    a, b = evalnb.open(store), evalnb.open(store)
    evalnb.evaluate(b, ["bleu"], progress=False)  # scores replaced by b
    before = evalnb.open(store)
    with pytest.raises(evalnb.StoreConflict, match=r"'scores' \(read at version 1, now 2\)"):
        evalnb.evaluate(a, ["text_matching"], progress=False)
    assert evalnb.open(store).equals(before)  # nothing written
    b.set_question_types()  # cases untouched by anyone else: written
    with pytest.raises(evalnb.StoreConflict, match="'cases'"):
        a.set_question_types(overwrite=True)
    fresh = evalnb.open(store)
    evalnb.evaluate(fresh, ["text_matching"], progress=False)  # reopening resolves it


def test_merging_an_import_writes_only_what_it_adds(tmp_path: Path) -> None:
    store = _lab(tmp_path / "lab.duckdb")
    reviewer = evalnb.open(store)
    importer = evalnb.open(store)
    reviewer.calibration.add_label(
        reviewer.cases["case_id"][0], "model", "rouge", "rouge_l", "pass", reviewer="r"
    )
    importer.merge(importer).save(store)  # nothing new: no table replaced
    reviewer.set_question_types()  # so the reviewer's copy of cases is still current
    assert evalnb.open(store).labels.height == 1


@pytest.mark.slow
def test_four_reviewers_killed_at_random_lose_no_acknowledged_label(tmp_path: Path) -> None:
    store = _lab(tmp_path / "lab.duckdb")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "EVALNB_LOCK_WAIT_S": "60"}

    def start(reviewer: str) -> subprocess.Popen[bytes]:
        acks = tmp_path / f"{reviewer}.acks"
        cmd = [
            sys.executable,
            "-m",
            "evalnb_testkit.store_worker",
            str(store),
            reviewer,
            str(QUOTA),
            str(acks),
        ]
        with (tmp_path / f"{reviewer}.err").open("ab") as err:  # the child keeps its own copy
            return subprocess.Popen(cmd, cwd=ROOT, env=env, stderr=err)

    def errors(reviewer: str) -> str:
        return (tmp_path / f"{reviewer}.err").read_text(errors="replace")[-2000:]

    def acked(reviewer: str) -> int:
        path = tmp_path / f"{reviewer}.acks"
        return len(path.read_text().split()) if path.exists() else 0

    running = {f"r{i}": start(f"r{i}") for i in range(REVIEWERS)}
    since = dict.fromkeys(running, 0)  # acknowledged labels when each process (re)started
    stale = start("stale")
    rng = random.Random(7)
    kills, failures = 0, []
    deadline = time.monotonic() + 420
    while running and time.monotonic() < deadline:
        time.sleep(rng.uniform(0.5, 3.0))
        for name, proc in list(running.items()):
            if proc.poll() is not None:
                if proc.returncode != 0:
                    failures.append((name, proc.returncode, errors(name)))
                del running[name]
        # Only a reviewer that is writing (it acknowledged a label since it started) is
        # killed: a kill while Python imports tests nothing.
        writing = [n for n, p in running.items() if p.poll() is None and acked(n) > since[n]]
        if writing and kills < 6:
            victim = rng.choice(writing)
            running[victim].send_signal(signal.SIGKILL)
            running[victim].wait()
            kills += 1
            since[victim] = acked(victim)
            running[victim] = start(victim)  # the reviewer comes back and carries on
    stale_rc = stale.wait(timeout=max(1.0, deadline - time.monotonic()))
    assert not running, f"reviewers still running at the deadline: {sorted(running)}"
    assert failures == [], failures
    assert stale_rc == 0, errors("stale")
    assert kills >= 3

    final = evalnb.open(store)
    stored = set(final.labels["label_id"])
    for i in range(REVIEWERS):
        acked = (tmp_path / f"r{i}.acks").read_text().split()
        assert len(acked) == QUOTA
        assert set(acked) <= stored, f"r{i} lost {len(set(acked) - stored)} acknowledged labels"
    assert (final.thresholds["source"] == "calibrated").any()
    assert "bleu" in set(final.scores["evaluator"])
