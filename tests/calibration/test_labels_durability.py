"""No acknowledged label is lost when the labelling process is killed abruptly."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np

import evalnb
from evalnb_testkit.labs import synthetic_lab

# Labels as fast as it can and prints each label's id only after add_label returned, i.e.
# after its transaction committed: a printed id is an acknowledged decision.
WRITER = """
import sys
import evalnb
lab = evalnb.open(sys.argv[1])
print("ready", flush=True)
i = 0
while True:
    row = lab.calibration.add_label(f"c{i % 50}", "m", "ev", "score", "pass" if i % 3 else "fail",
                        reviewer="killed", note=f"round {sys.argv[2]} #{i}")
    print(row["label_id"][0], flush=True)
    i += 1
"""


def test_zero_labels_lost_across_repeated_kills(tmp_path: Path) -> None:
    lab, _ = synthetic_lab(50)
    store = tmp_path / "lab.duckdb"
    lab.save(store)
    rng = random.Random(7)
    acknowledged: list[str] = []
    for round_no in range(5):
        proc = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(store), str(round_no)],
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready"
        acknowledged.extend(proc.stdout.readline().strip() for _ in range(rng.randint(3, 40)))
        proc.send_signal(signal.SIGKILL)  # mid-write of the next label, most likely
        rest = proc.stdout.read().split()  # printed before the kill: acknowledged too
        proc.wait()
        proc.stdout.close()
        acknowledged += rest
    stored = evalnb.open(store).labels
    missing = set(acknowledged) - set(stored["label_id"])
    assert not missing, f"{len(missing)} acknowledged label(s) lost"
    # Nothing half-written either: every row is whole and unique.
    assert stored["label_id"].n_unique() == stored.height
    assert stored.select("verdict", "case_id", "created_at").null_count().row(0) == (0, 0, 0)
    print(f"{len(acknowledged)} acknowledged labels over 5 kills, {stored.height} stored, 0 lost")
    assert np.all(stored["reviewer"].to_numpy() == "killed")
