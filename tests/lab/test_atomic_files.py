"""Every file evalnb writes appears whole or not at all: full disks, kills, no debris."""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

import evalnb
from evalnb.api.demo import build_demo_lab
from evalnb.cli.main import main
from evalnb_testkit.paths import ROOT

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

_HARPIA = {
    "instances": [
        {
            "id": str(i),
            "input": f"q {i}",
            "actual-output": f"the answer {i}",
            "expected-output": [f"an answer {i}"],
        }
        for i in range(200)
    ],
    "metrics": [{"id": "rouge", "enable": True, "parameters": {}}],
}


@pytest.fixture(scope="module")
def lab() -> evalnb.Lab:
    return evalnb.evaluate(build_demo_lab(), ["text_matching", "rouge"], progress=False)


@contextlib.contextmanager
def _full_disk(tmp_path: Path) -> Iterator[Path]:
    """A folder on a file system with no space left (a tiny tmpfs, as root)."""
    mnt = tmp_path / f"tiny-{uuid.uuid4().hex[:6]}"
    mnt.mkdir()
    if (
        os.geteuid() != 0
        or subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mnt)],
            capture_output=True,
            check=False,
        ).returncode
    ):
        pytest.skip("a full disk needs root to mount a small tmpfs")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def _fill(folder: Path) -> None:
    with contextlib.suppress(OSError), (folder / "filler").open("wb") as out:
        while True:
            out.write(b"\0" * 4096)
            out.flush()


def _writers(lab: evalnb.Lab, tmp_path: Path) -> dict[str, Callable[[Path], object]]:
    rewards = tmp_path / "rewards.jsonl"
    rewards.write_text("".join(json.dumps({"r": i % 2}) + "\n" for i in range(50)))
    harpia = tmp_path / "harpia.json"
    harpia.write_text(json.dumps(_HARPIA))

    def cli(argv: list[str]) -> None:
        code = main(argv)
        if code:
            raise OSError(f"exit {code}")

    return {
        "report.html": lambda p: lab.report(p),
        "lab.json": lambda p: lab.export(p),
        "lab.jsonl": lambda p: lab.export(p, "tencent"),
        "archive.zip": lambda p: lab.archive(p),
        "problems.json": lambda p: lab.problems_json(p),
        "insights.json": lambda p: lab.insights_json(p),
        "guardrail.json": lambda p: lab.calibration.guardrail_config(p, include_uncalibrated=True),
        "patch.md": lambda p: lab.calibration.corpus_patch(p),
        "metric.json": lambda p: cli(["metric", "-i", str(rewards), "-o", str(p)]),
        "harpia.json": lambda p: cli(["harpia", str(harpia), "-o", str(p)]),
    }


def test_a_full_disk_leaves_every_old_file_intact_and_no_debris(
    lab: evalnb.Lab, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with _full_disk(tmp_path) as disk:
        writers = _writers(lab, tmp_path)
        for name in writers:
            (disk / name).write_text(f"old {name}")
        _fill(disk)
        before = sorted(p.name for p in disk.iterdir())
        for name, write in writers.items():
            with pytest.raises(OSError, match=r"(?i)no space left|exit 1"):
                write(disk / name)
            assert (disk / name).read_text() == f"old {name}", name
            assert sorted(p.name for p in disk.iterdir()) == before, name
        assert capsys.readouterr().err.count("no space left") == 2  # both CLI commands said so
        with pytest.raises(
            evalnb.StoreError, match=r"new\.duckdb: could not write .*no space left"
        ):
            lab.save(disk / "new.duckdb")  # a first save: no stub store
        assert sorted(p.name for p in disk.iterdir()) == before


_KILLED_WRITER = """
import sys, evalnb
from evalnb.api.demo import build_demo_lab
lab = evalnb.evaluate(build_demo_lab(), ["rouge"], progress=False)
kind, target = sys.argv[1], sys.argv[2]
print("ready", flush=True)
while True:
    if kind == "report": lab.report(target)
    elif kind == "export": lab.export(target)
    elif kind == "archive": lab.archive(target)
    else: lab.save(target)
"""


@pytest.mark.parametrize("kind", ["report", "export", "archive", "save"])
def test_a_writer_killed_mid_write_leaves_a_whole_file(kind: str, tmp_path: Path) -> None:
    target = tmp_path / f"out.{kind}"
    rng = random.Random(kind)
    for _ in range(3):
        proc = subprocess.Popen(
            [sys.executable, "-c", _KILLED_WRITER, kind, str(target)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
        )
        assert proc.stdout is not None and proc.stdout.readline().strip() == b"ready"
        time.sleep(rng.uniform(0.05, 1.0))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        proc.stdout.close()
        if target.exists():  # whatever is there is a whole file of its kind
            if kind == "save":
                assert evalnb.open(target).cases.height > 0
            elif kind == "archive":
                assert evalnb.load(target).cases.height > 0
            elif kind == "export":
                assert json.loads(target.read_text())
            else:
                assert target.read_text().rstrip().endswith("</html>")
    # the next write sweeps what the killed writers left behind
    fresh = evalnb.evaluate(build_demo_lab(), ["rouge"], progress=False)
    {"report": fresh.report, "export": fresh.export, "archive": fresh.archive}.get(
        kind, fresh.save
    )(target)
    assert sorted(p.name for p in tmp_path.iterdir()) == [target.name]
