"""The tests' PostgreSQL: a :class:`~evalnb.team.local_server.LocalServer` per session.

Debian's ``postgresql`` package (``scripts/install`` installs it); without it the tests
that need a server are skipped with the reason.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from evalnb.team.local_server import LocalServer, postgres_bindir

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = ["PgServer", "pg_server", "start_server"]

PgServer = LocalServer


def start_server() -> LocalServer:
    """Start a fresh server (skips the test when PostgreSQL is not installed)."""
    if postgres_bindir() is None:
        pytest.skip("PostgreSQL is not installed (Debian's postgresql; scripts/install)")
    return LocalServer.start()


@pytest.fixture(scope="session")
def pg_server() -> Iterator[LocalServer]:
    """One server for the session (each test names its own queues)."""
    server = start_server()
    yield server
    server.stop(remove=True)
