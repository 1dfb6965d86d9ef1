"""Connecting to a review server: the pool, its errors, and nothing secret kept or shown.

A lost or unreachable server becomes :class:`ReviewUnavailable` (nothing was recorded; safe
to retry); a statement the server refuses becomes :class:`ReviewError` with the server's
reason. Messages name the server by its connection string without the password.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from evalnb.lab.errors import EvalnbError
from evalnb.team.schema import CREATE, SCHEMA_LOCK

if TYPE_CHECKING:
    from psycopg import Connection
    from psycopg_pool import ConnectionPool

__all__ = [
    "MAX_NAME",
    "ReviewError",
    "ReviewUnavailable",
    "check_name",
    "connect",
    "guarded",
    "payload_json",
    "safe_dsn",
]

MAX_NAME = 200  # characters of a reviewer, role or queue name


class ReviewError(EvalnbError):
    """A review action the queue refuses (an unknown item, a lease given to others, ...)."""


class ReviewUnavailable(ReviewError):
    """The queue's server cannot be reached; the action was not done (safe to retry)."""


def safe_dsn(dsn: str) -> str:
    """Return the connection string without its password (for messages and reprs)."""
    from psycopg.conninfo import conninfo_to_dict, make_conninfo  # noqa: PLC0415 - optional

    try:
        parts = conninfo_to_dict(dsn)
    except Exception:
        return "<a connection string psycopg cannot parse>"
    parts.pop("password", None)
    return make_conninfo(**{k: str(v) for k, v in parts.items() if v is not None})


def check_name(value: object, what: str) -> str:
    """Return a reviewer or queue name, or raise saying what a name may be."""
    if not isinstance(value, str) or not value.strip():
        msg = f"a {what} is a non-empty name; got {value!r:.80}"
        raise ReviewError(msg)
    if len(value) > MAX_NAME or "\x00" in value:
        msg = f"a {what} has at most {MAX_NAME} characters and no NUL; got {len(value)} characters"
        raise ReviewError(msg)
    return value


def connect(dsn: str, *, max_size: int = 4, timeout_s: float = 10.0) -> ConnectionPool[Any]:
    """Return a connection pool to ``dsn`` with the queue tables in place."""
    try:
        from psycopg_pool import ConnectionPool  # noqa: PLC0415 - optional at import
    except ImportError:
        msg = "review queues need psycopg: pip install 'psycopg[binary,pool]'"
        raise ImportError(msg) from None
    pool: ConnectionPool[Any] = ConnectionPool(
        dsn,
        min_size=1,
        max_size=max_size,
        timeout=timeout_s,
        kwargs={"connect_timeout": max(1, int(timeout_s))},
        open=False,
        name="evalnb-review",
    )
    try:
        pool.open(wait=True, timeout=timeout_s)
        with pool.connection() as conn:
            found = conn.execute("SELECT to_regclass('evalnb.labels')").fetchone()
            if found is None or found[0] is None:  # a new server: the lead's first call
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK,))
                conn.execute(CREATE)
    except Exception as exc:
        pool.close()
        raise _unavailable(exc, safe_dsn(dsn)) from None
    return pool


def guarded(pool: ConnectionPool[Any], where: str) -> _Guarded:
    """Return a context manager: a pooled connection in a transaction, errors translated."""
    return _Guarded(pool, where)


class _Guarded:
    """A pooled connection in a transaction; a lost server becomes :class:`ReviewUnavailable`."""

    def __init__(self, pool: ConnectionPool[Any], where: str) -> None:
        self._pool, self._where = pool, where
        self._cm: Any = None

    def __enter__(self) -> Connection[Any]:
        try:
            self._cm = self._pool.connection()
            return self._cm.__enter__()  # type: ignore[no-any-return]
        except Exception as exc:
            raise _unavailable(exc, self._where) from None

    def __exit__(self, kind: object, exc: BaseException | None, tb: object) -> None:
        try:
            self._cm.__exit__(kind, exc, tb)
        except Exception as err:
            if exc is None:
                raise _unavailable(err, self._where) from None
        if exc is not None and not isinstance(exc, EvalnbError):
            raise _unavailable(exc, self._where) from None


def _unavailable(exc: BaseException, where: str) -> ReviewError:
    import psycopg  # noqa: PLC0415 - optional

    if isinstance(exc, ReviewError):
        return exc
    if isinstance(exc, psycopg.OperationalError | TimeoutError) or type(exc).__name__ == (
        "PoolTimeout"
    ):
        return ReviewUnavailable(
            f"the review server at {where} cannot be reached ({type(exc).__name__}); "
            "nothing was recorded: try again when it is back"
        )
    if isinstance(exc, psycopg.Error):
        return ReviewError(f"the review server at {where} refused: {str(exc).strip()[:300]}")
    raise exc


def payload_json(content: dict[str, Any]) -> str:
    """JSON of an item's content for ``jsonb`` (which holds no NUL: shown as U+FFFD)."""
    return json.dumps(content, ensure_ascii=False, default=str).replace("\\u0000", "\ufffd")
