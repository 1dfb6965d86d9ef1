"""A PostgreSQL server of your own: stopped with its process, reopened, clear errors (issue 55)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from evalnb.cli.main import main
from evalnb.team.local_server import LocalServer, LocalServerError, postgres_bindir

if TYPE_CHECKING:
    from collections.abc import Iterator

pytestmark = [
    pytest.mark.xdist_group("postgres"),
    pytest.mark.skipif(postgres_bindir() is None, reason="PostgreSQL is not installed"),
]
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def place() -> Iterator[Path]:
    """A folder 'postgres' can enter (pytest's own are root's alone), removed after."""
    made = Path(tempfile.mkdtemp(prefix="evalnb-pg-test-"))
    made.chmod(0o755)
    yield made
    shutil.rmtree(made, ignore_errors=True)


def test_a_server_stops_when_its_python_process_ends(place: Path) -> None:
    folder = place / "pg"
    code = (
        "from evalnb.team.local_server import LocalServer;"
        f"s = LocalServer.start({str(folder)!r}); print(s.port)"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, timeout=120)
    found = LocalServer.at(folder)
    assert found is not None and not found.running()  # stopped at exit, folder kept
    # a temporary folder it made itself goes with it (the suite left 39 MB ones behind)
    made = subprocess.run(
        [
            sys.executable,
            "-c",
            "from evalnb.team.local_server import LocalServer;print(LocalServer.start().root)",
        ],
        check=True,
        cwd=ROOT,
        timeout=120,
        capture_output=True,
        text=True,
    ).stdout.strip()
    assert made and not Path(made).exists()
    reopened = LocalServer.start(folder)  # reopened from its folder, on its port
    try:
        assert reopened.port == found.port and reopened.running()
        assert reopened.psql("SELECT 1").strip() == "1"
    finally:
        reopened.stop(remove=True)


def test_a_folder_that_is_not_a_server_or_unreachable_is_said_plainly(place: Path) -> None:
    other = place / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    with pytest.raises(LocalServerError, match="not empty and holds no evalnb server"):
        LocalServer.start(other)
    if os.geteuid() == 0:  # the 'postgres' user cannot enter a folder only root may
        closed = place / "closed"
        closed.mkdir(mode=0o700)
        with pytest.raises(LocalServerError, match=r"initdb could not create.*postgres"):
            LocalServer.start(closed / "pg")


@pytest.mark.services  # starts PostgreSQL through the command line (the tripwire found it)
def test_the_command_line_starts_reports_and_stops_a_server(
    place: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = place / "pg"
    args = ["review", "server"]
    assert main([*args, "status", "--folder", str(folder)]) == 1
    assert "no evalnb server" in capsys.readouterr().out
    try:
        assert main([*args, "start", "--folder", str(folder)]) == 0
        out = capsys.readouterr().out
        assert "started a server" in out and "postgresql://evalnb@127.0.0.1:" in out
        assert main([*args, "status", "--folder", str(folder)]) == 0  # outlived the command
        assert "running" in capsys.readouterr().out
        assert main([*args, "start", "--folder", str(folder)]) == 0
        assert "reopened" in capsys.readouterr().out
    finally:
        assert main([*args, "stop", "--folder", str(folder), "--remove"]) == 0
    assert "stopped" in capsys.readouterr().out and not folder.exists()
