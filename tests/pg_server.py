"""A private PostgreSQL server for the tests: ``initdb`` + ``pg_ctl`` on a temporary folder.

Debian's ``postgresql`` package (``scripts/install`` installs it). The server listens on a
free loopback port and a socket in its own folder, trusts local connections (a throwaway
cluster) and is stopped when the test session ends. PostgreSQL refuses to run as root, so
as root it runs as the ``postgres`` user the package creates.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest


def _bindir() -> Path | None:
    found = shutil.which("pg_ctl")
    candidates = sorted(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"), reverse=True)
    for path in [*candidates, *([Path(found)] if found else [])]:
        if Path(path).with_name("initdb").is_file() and Path(path).with_name("postgres").is_file():
            return Path(path).parent
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class PgServer:
    """A running server: its DSN, and how to stop or restart it."""

    bindir: Path
    root: Path
    port: int
    as_user: list[str]

    @property
    def data(self) -> Path:
        return self.root / "data"

    def dsn(self, user: str = "evalnb", password: str | None = None) -> str:
        secret = f":{password}" if password else ""
        return f"postgresql://{user}{secret}@127.0.0.1:{self.port}/postgres"

    def ctl(self, *args: str) -> None:
        options = (
            f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c max_connections=200"
        )
        cmd = [str(self.bindir / "pg_ctl"), "-D", str(self.data), "-l", str(self.root / "log")]
        subprocess.run(
            [*self.as_user, *cmd, "-o", options, "-w", "-t", "60", *args],
            check=True,
            capture_output=True,
        )

    def restart_immediately(self) -> None:
        """``pg_ctl restart -m immediate``: a crash, as far as clients can tell."""
        self.ctl("restart", "-m", "immediate")

    def stop(self) -> None:
        self.ctl("stop", "-m", "fast")

    def psql(self, sql: str) -> str:
        """Run SQL as the superuser ``evalnb`` (for setting up roles)."""
        psql = self.bindir / "psql"
        out = subprocess.run(
            [
                str(psql) if psql.is_file() else "psql",
                self.dsn(),
                "-v",
                "ON_ERROR_STOP=1",
                "-qAtc",
                sql,
            ],
            check=True,
            capture_output=True,
            text=True,
        )
        return out.stdout


def start_server() -> PgServer:
    """Start a fresh server (skips the test when PostgreSQL is not installed)."""
    bindir = _bindir()
    if bindir is None:
        pytest.skip("PostgreSQL is not installed (Debian's postgresql; scripts/install)")
    root = Path(tempfile.mkdtemp(prefix="evalnb-pg-"))
    as_user: list[str] = []
    if os.geteuid() == 0:  # PostgreSQL will not run as root
        runuser = shutil.which("runuser")
        if runuser is None:
            pytest.skip("running as root without runuser: PostgreSQL cannot start")
        as_user = [runuser, "-u", "postgres", "--"]
        shutil.chown(root, "postgres", "postgres")
    subprocess.run(
        [
            *as_user,
            str(bindir / "initdb"),
            "-D",
            str(root / "data"),
            "-U",
            "evalnb",
            "--auth=trust",
            "-E",
            "UTF8",
            "--locale=C",
        ],
        check=True,
        capture_output=True,
    )
    server = PgServer(bindir, root, _free_port(), as_user)
    server.ctl("start")
    return server


@pytest.fixture(scope="session")
def pg_server() -> object:
    """One server for the session (each test names its own queues)."""
    server = start_server()
    yield server
    server.stop()
    shutil.rmtree(server.root, ignore_errors=True)
