"""A PostgreSQL server of your own, on this machine, for trying team review (and the tests).

:meth:`LocalServer.start` runs PostgreSQL's ``initdb`` and ``pg_ctl`` on a new folder (a
throwaway cluster that trusts connections from this machine only), listening on a free
loopback port. A team uses its own server; this one is for a try, a demo, a notebook, the
tests. PostgreSQL refuses to run as root, so as root it runs as the ``postgres`` user that
Debian's package creates.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

__all__ = ["LocalServer", "postgres_bindir"]


def postgres_bindir() -> Path | None:
    """Return the folder of PostgreSQL's server programs (newest first), or None."""
    found = shutil.which("pg_ctl")
    candidates = sorted(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"), reverse=True)
    for path in [*candidates, *([Path(found)] if found else [])]:
        if path.with_name("initdb").is_file() and path.with_name("postgres").is_file():
            return path.parent
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class LocalServer:
    """A running throwaway server: its connection strings, and stop / restart."""

    bindir: Path
    root: Path
    port: int
    as_user: tuple[str, ...] = ()
    password: str | None = field(default=None, repr=False)

    @classmethod
    def start(cls, folder: str | Path | None = None, *, password: str | None = None) -> LocalServer:
        """Create a cluster in ``folder`` (a new temporary one when None) and start it.

        ``password``: the superuser ``evalnb``'s, and connections over TCP must then give
        theirs (SCRAM), as on a team's server; without it this machine's connections are
        trusted.
        """
        bindir = postgres_bindir()
        if bindir is None:
            msg = (
                "PostgreSQL's server programs (initdb, pg_ctl) are not installed; on Debian "
                "or Ubuntu: apt-get install postgresql (scripts/install does it as root)"
            )
            raise FileNotFoundError(msg)
        root = Path(folder) if folder else Path(tempfile.mkdtemp(prefix="evalnb-pg-"))
        root.mkdir(parents=True, exist_ok=True)
        as_user: tuple[str, ...] = ()
        if os.geteuid() == 0:  # PostgreSQL will not run as root
            runuser = shutil.which("runuser")
            if runuser is None:
                msg = "running as root without runuser: PostgreSQL cannot be started here"
                raise PermissionError(msg)
            as_user = (runuser, "-u", "postgres", "--")
            shutil.chown(root, "postgres", "postgres")
        auth = ["--auth=trust"]
        if password is not None:
            secret = root / "pwfile"
            secret.write_text(password + "\n", encoding="utf-8")
            secret.chmod(0o600)
            if as_user:
                shutil.chown(secret, "postgres", "postgres")
            auth = ["--auth-local=trust", "--auth-host=scram-sha-256", f"--pwfile={secret}"]
        subprocess.run(
            [
                *as_user,
                str(bindir / "initdb"),
                "-D",
                str(root / "data"),
                "-U",
                "evalnb",
                *auth,
                "-E",
                "UTF8",
                "--locale=C",
            ],
            check=True,
            capture_output=True,
        )
        if password is not None:
            (root / "pwfile").unlink()
        server = cls(bindir, root, _free_port(), as_user, password)
        server.ctl("start")
        return server

    def dsn(self, user: str = "evalnb", password: str | None = None) -> str:
        """Return a connection string for ``user`` (the superuser ``evalnb`` by default)."""
        if password is None and user == "evalnb":
            password = self.password
        secret = f":{quote(password, safe='')}" if password else ""
        return f"postgresql://{user}{secret}@127.0.0.1:{self.port}/postgres"

    def ctl(self, *args: str, check: bool = True) -> None:
        """Run ``pg_ctl`` on this cluster (``start``, ``stop``, ``restart`` ...)."""
        options = (
            f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c max_connections=200"
        )
        cmd = [str(self.bindir / "pg_ctl"), "-D", str(self.root / "data")]
        subprocess.run(
            [
                *self.as_user,
                *cmd,
                "-l",
                str(self.root / "log"),
                "-o",
                options,
                "-w",
                "-t",
                "60",
                *args,
            ],
            check=check,
            capture_output=True,
        )

    def restart_immediately(self) -> None:
        """``pg_ctl restart -m immediate``: a crash, as far as clients can tell."""
        self.ctl("restart", "-m", "immediate")

    def stop(self, *, remove: bool = False) -> None:
        """Stop the server (nothing to do when stopped already); ``remove`` deletes its folder."""
        self.ctl("stop", "-m", "fast", check=False)
        if remove:
            shutil.rmtree(self.root, ignore_errors=True)

    def psql(self, sql: str) -> str:
        """Run SQL as the superuser ``evalnb`` with ``psql``; return what it printed."""
        psql = self.bindir / "psql"
        done = subprocess.run(
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
        return done.stdout

    def __enter__(self) -> LocalServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop(remove=True)
