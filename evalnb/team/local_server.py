"""A PostgreSQL server of your own, on this machine, for trying team review (and the tests).

:meth:`LocalServer.start` runs PostgreSQL's ``initdb`` and ``pg_ctl`` on a new folder (a
throwaway cluster that trusts connections from this machine only), listening on a free
loopback port. A team uses its own server; this one is for a try, a demo, a notebook, the
tests. PostgreSQL refuses to run as root, so as root it runs as the ``postgres`` user that
Debian's package creates.

**It does not outlive its Python process** unless asked: a server started from a notebook
is stopped when the kernel exits or restarts (an ``atexit`` hook and a finalizer), so no
``postgres`` is left running with nobody to stop it. ``keep=True`` (what
``evalnb review server start`` uses) leaves it running; :meth:`LocalServer.start` on its
folder later reopens it (starting it again if it was stopped), and ``stop`` ends it.
The folder records the port in ``evalnb-server.json``.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import tempfile
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from evalnb.lab.errors import EvalnbError

__all__ = ["LocalServer", "LocalServerError", "postgres_bindir"]

_RECORD = "evalnb-server.json"


class LocalServerError(EvalnbError):
    """A local server could not be created, started or reopened (the reason says why)."""


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


def _said(err: subprocess.CalledProcessError) -> str:
    """Return what a PostgreSQL program printed before it failed (its own words, trimmed)."""
    text = (err.stderr or b"") + (err.stdout or b"")
    said = text.decode("utf-8", "replace") if isinstance(text, bytes) else str(text)
    lines = [line.strip() for line in said.splitlines() if line.strip()]
    return " / ".join(lines[-4:])[:600] or f"exit status {err.returncode}"


def _stop_quietly(ctl: list[str], remove: Path | None) -> None:
    """Stop a server at interpreter exit or when its object is collected (never raises).

    ``remove``: the temporary folder made for it, deleted too (nobody else knows of it).
    """
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        subprocess.run([*ctl, "stop", "-m", "fast"], capture_output=True, timeout=60, check=False)
    if remove is not None:
        shutil.rmtree(remove, ignore_errors=True)


@dataclass
class LocalServer:
    """A running throwaway server: its connection strings, and stop / restart."""

    bindir: Path
    root: Path
    port: int
    as_user: tuple[str, ...] = ()
    password: str | None = field(default=None, repr=False)
    # weakref.finalize is generic in the stubs only; the object is what stop() detaches.
    _finalizer: Any = field(default=None, init=False, repr=False, compare=False)
    _temporary: bool = field(default=False, init=False, repr=False, compare=False)

    @classmethod
    def start(
        cls, folder: str | Path | None = None, *, password: str | None = None, keep: bool = False
    ) -> LocalServer:
        """Create a cluster in ``folder`` (a new temporary one when None) and start it.

        A ``folder`` that holds a server made here before is reopened (started again when
        it was stopped, on the port it recorded). ``password``: the superuser ``evalnb``'s,
        and connections over TCP must then give theirs (SCRAM), as on a team's server;
        without it this machine's connections are trusted. ``keep``: leave the server
        running when this Python process ends (else it is stopped then).
        """
        bindir = postgres_bindir()
        if bindir is None:
            msg = (
                "PostgreSQL's server programs (initdb, pg_ctl) are not installed; on Debian "
                "or Ubuntu: apt-get install postgresql (scripts/install does it as root)"
            )
            raise FileNotFoundError(msg)
        root = Path(folder) if folder else Path(tempfile.mkdtemp(prefix="evalnb-pg-"))
        as_user = _as_user()
        if (root / "data" / "PG_VERSION").is_file():
            return cls._reopen(bindir, root, as_user, password, keep=keep)
        if root.exists() and (not root.is_dir() or any(root.iterdir())):
            msg = (
                f"{root} is not empty and holds no evalnb server: a new server needs an empty "
                "folder (or none: one is made), or the folder of a server made before to "
                "reopen it"
            )
            raise LocalServerError(msg)
        try:
            root.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            msg = f"cannot make the server's folder {root}: {err.strerror}; choose another"
            raise LocalServerError(msg) from None
        if as_user:
            shutil.chown(root, "postgres", "postgres")
        auth = ["--auth=trust"]
        if password is not None:
            secret = root / "pwfile"
            secret.write_text(password + "\n", encoding="utf-8")
            secret.chmod(0o600)
            if as_user:
                shutil.chown(secret, "postgres", "postgres")
            auth = ["--auth-local=trust", "--auth-host=scram-sha-256", f"--pwfile={secret}"]
        try:
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
        except subprocess.CalledProcessError as err:
            hint = (
                " (as root PostgreSQL runs as the user 'postgres', who must be able to enter "
                "every folder above it: choose a folder under /tmp or one 'postgres' can reach)"
                if as_user
                else ""
            )
            msg = f"initdb could not create a server in {root}: {_said(err)}{hint}"
            raise LocalServerError(msg) from None
        finally:
            (root / "pwfile").unlink(missing_ok=True)
        server = cls(bindir, root, _free_port(), as_user, password)
        server._temporary = folder is None
        server._record()
        server._launch(keep=keep)
        return server

    @classmethod
    def at(cls, folder: str | Path) -> LocalServer | None:
        """Return the server made in ``folder`` before, as it is (not started); None when none is.

        For ``running()`` and ``stop()`` from another process (``evalnb review server``).
        """
        root = Path(folder)
        bindir = postgres_bindir()
        if bindir is None or not (root / "data" / "PG_VERSION").is_file():
            return None
        return cls(bindir, root, _recorded_port(root), _as_user())

    @classmethod
    def _reopen(
        cls,
        bindir: Path,
        root: Path,
        as_user: tuple[str, ...],
        password: str | None,
        *,
        keep: bool,
    ) -> LocalServer:
        server = cls(bindir, root, _recorded_port(root), as_user, password)
        if not server.running():
            server._record()
            server._launch(keep=keep)
        elif not keep:
            server._watch()
        return server

    def _record(self) -> None:
        record = {"port": self.port, "dsn": self.dsn()}
        if self.password:
            record["dsn"] = self.dsn().replace(quote(self.password, safe=""), "***")
        path = self.root / _RECORD
        path.write_text(json.dumps(record), encoding="utf-8")

    def _launch(self, *, keep: bool) -> None:
        try:
            self.ctl("start")
        except subprocess.CalledProcessError as err:
            log = self.root / "log"
            tail = (
                log.read_text(errors="replace").strip().splitlines()[-3:] if log.is_file() else []
            )
            msg = f"the server in {self.root} did not start: {_said(err)}" + (
                f" — its log: {' / '.join(tail)}" if tail else ""
            )
            raise LocalServerError(msg) from None
        if not keep:
            self._watch()

    def _watch(self) -> None:
        # Stopped at interpreter exit (a kernel restart) or when the object goes: a server
        # nobody holds any more has nobody to stop it.
        self._finalizer = weakref.finalize(
            self, _stop_quietly, self._ctl_command(), self.root if self._temporary else None
        )

    def running(self) -> bool:
        """Whether this folder's server is running (``pg_ctl status``)."""
        done = subprocess.run(
            [*self._ctl_command(), "status"], capture_output=True, check=False, timeout=60
        )
        return done.returncode == 0

    def dsn(self, user: str = "evalnb", password: str | None = None) -> str:
        """Return a connection string for ``user`` (the superuser ``evalnb`` by default)."""
        if password is None and user == "evalnb":
            password = self.password
        secret = f":{quote(password, safe='')}" if password else ""
        return f"postgresql://{user}{secret}@127.0.0.1:{self.port}/postgres"

    def _ctl_command(self) -> list[str]:
        return [*self.as_user, str(self.bindir / "pg_ctl"), "-D", str(self.root / "data")]

    def ctl(self, *args: str, check: bool = True) -> None:
        """Run ``pg_ctl`` on this cluster (``start``, ``stop``, ``restart`` ...)."""
        options = (
            f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c max_connections=200"
        )
        subprocess.run(
            [
                *self._ctl_command(),
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
        if self._finalizer is not None:
            self._finalizer.detach()
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


def _recorded_port(root: Path) -> int:
    """Return the port a folder's server was started on (any free one for a folder without a record)."""
    try:
        return int(json.loads((root / _RECORD).read_text(encoding="utf-8"))["port"])
    except (OSError, ValueError, KeyError, TypeError):
        return _free_port()


def _as_user() -> tuple[str, ...]:
    """Return the prefix that runs PostgreSQL's programs as ``postgres`` when this is root."""
    if os.geteuid() != 0:
        return ()
    runuser = shutil.which("runuser")
    if runuser is None:
        msg = "running as root without runuser: PostgreSQL cannot be started here"
        raise PermissionError(msg)
    return (runuser, "-u", "postgres", "--")
