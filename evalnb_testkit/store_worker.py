"""A reviewer process for the concurrency test: labels one lab store until it has its quota.

``python -m evalnb_testkit.store_worker STORE REVIEWER QUOTA ACKS`` appends one line per acknowledged
label (its ``label_id``) to ACKS, fsynced, only after ``add_label`` returned: a line there is
a label the reviewer was told is stored. It resumes from the lines already there, so it can
be killed and started again. ``stale`` as REVIEWER runs the stale saver instead: it opens
the lab at once, waits until another process has recalibrated, then saves its old copy and
evaluates another evaluator on it.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import polars as pl

import evalnb


def _reviewer(store: Path, reviewer: str, quota: int, acks: Path) -> None:
    done = len(acks.read_text().splitlines()) if acks.exists() else 0
    lab = evalnb.open(store)
    cases = lab.cases["case_id"].to_list()
    with acks.open("a", encoding="utf-8") as out:
        for i in range(done, quota):
            verdict = "pass" if (i * 7 + len(reviewer)) % 3 else "fail"
            row = lab.calibration.add_label(
                cases[i % len(cases)], "model", "rouge", "rouge_l", verdict, reviewer=reviewer
            )
            out.write(row["label_id"][0] + "\n")
            out.flush()
            os.fsync(out.fileno())
    if reviewer == "r0":
        lab.calibration.recalibrate("rouge", "rouge_l", n_boot=50)


def _stale(store: Path) -> None:
    lab = evalnb.open(store)  # read before any reviewer wrote
    deadline = time.monotonic() + 400  # within the test's own 420 s, even on a loaded machine
    while time.monotonic() < deadline:
        current = evalnb.open(store).thresholds
        if (current["source"] == "calibrated").any():
            break
        time.sleep(0.5)
    lab.save(store)  # an old copy saved over the store
    evalnb.evaluate(lab, ["bleu"], progress=False)  # and scored from the old copy
    assert (lab.thresholds["source"] == "calibrated").any(), "save must bring others' rows in"
    assert lab.labels.filter(pl.col("reviewer") != "stale").height > 0


if __name__ == "__main__":
    store_arg, reviewer_arg = Path(sys.argv[1]), sys.argv[2]
    if reviewer_arg == "stale":
        _stale(store_arg)
    else:
        _reviewer(store_arg, reviewer_arg, int(sys.argv[3]), Path(sys.argv[4]))
