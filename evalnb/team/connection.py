"""Connecting to a review server: the pool, its errors, and nothing secret kept or shown.

A lost or unreachable server becomes :class:`ReviewUnavailable` (nothing was recorded; safe
to retry), and so does a refusal that passes: a server read-only for a moment (a standby, a
failover), a serialization failure or deadlock, a server shutting down or out of
connections. A statement the server refuses for good becomes :class:`ReviewError` with the
server's reason. A wrong password or a malformed connection string is said at once, as
such. Messages name the server by its connection string without any secret.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from evalnb.lab.errors import EvalnbError
from evalnb.team.schema import CREATE, GUARDS, REFUSED, SCHEMA_LOCK, VERSION

if TYPE_CHECKING:
    from psycopg import Connection
    from psycopg_pool import ConnectionPool

__all__ = [
    "MAX_NAME",
    "ReviewError",
    "ReviewUnavailable",
    "check_name",
    "clean_text",
    "connect",
    "guarded",
    "payload_json",
    "safe_dsn",
]

MAX_NAME = 200  # characters of a reviewer, role or queue name
# Connection parameters that are secrets (libpq's): never in a message or a repr.
_SECRETS = ("password", "sslpassword")
# SQLSTATE classes and codes of refusals that pass: the action may be tried again.
_TRANSIENT = ("08", "40", "53", "57P", "25006", "55P03", "55006")


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
    for secret in _SECRETS:
        parts.pop(secret, None)
    return make_conninfo(**{k: str(v) for k, v in parts.items() if v is not None})


def check_name(value: object, what: str) -> str:
    """Return a reviewer or queue name, or raise saying what a name may be."""
    if not isinstance(value, str) or not value.strip():
        msg = f"a {what} is a non-empty name; got {value!r:.80}"
        raise ReviewError(msg)
    if len(value) > MAX_NAME or "\x00" in value:
        msg = f"a {what} has at most {MAX_NAME} characters and no NUL; got {len(value)} characters"
        raise ReviewError(msg)
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as err:
        msg = (
            f"a {what} is valid Unicode text; {value!r:.80} holds a lone surrogate at "
            f"character {err.start}: fix the name's encoding"
        )
        raise ReviewError(msg) from None
    return value


def clean_text(text: str) -> str:
    """Return ``text`` as PostgreSQL can hold it: NUL and lone surrogates become U+FFFD."""
    if "\x00" in text:
        text = text.replace("\x00", "\ufffd")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in text)
    return text


def _clean(node: object) -> object:
    """``clean_text`` on every string of a JSON-like value (keys too)."""
    if isinstance(node, str):
        return clean_text(node)
    if isinstance(node, dict):
        return {clean_text(str(k)): _clean(v) for k, v in node.items()}
    if isinstance(node, list | tuple):
        return [_clean(v) for v in node]
    return node


def connect(dsn: str, *, max_size: int = 4, timeout_s: float = 10.0) -> ConnectionPool[Any]:
    """Return a connection pool to ``dsn`` with the queue tables in place (and up to date).

    One direct connection is tried first, so a malformed string, a wrong password or a
    server that is down is said at once, in its own words, not after the pool's timeout.
    """
    try:
        import psycopg  # noqa: PLC0415 - optional at import
        from psycopg_pool import ConnectionPool  # noqa: PLC0415 - optional at import
    except ImportError:
        msg = "review queues need psycopg: pip install 'psycopg[binary,pool]'"
        raise ImportError(msg) from None
    where = safe_dsn(dsn)
    try:
        psycopg.conninfo.conninfo_to_dict(dsn)
    except psycopg.ProgrammingError as err:
        msg = (
            f"the review server's connection string is malformed ({_scrub(str(err), dsn)}); "
            "expected e.g. postgresql://user@host:5432/dbname"
        )
        raise ReviewError(msg) from None
    try:
        with psycopg.connect(dsn, connect_timeout=max(1, int(timeout_s))) as probe:
            _ensure_schema(probe, where)
    except ReviewError:
        raise
    except Exception as exc:
        raise _unavailable(exc, where, dsn) from None
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
    except Exception as exc:
        pool.close()
        raise _unavailable(exc, where, dsn) from None
    return pool


def _ensure_schema(conn: Connection[Any], where: str) -> None:
    """Create the queue tables on a new server, or upgrade an older evalnb's in place."""
    found = conn.execute(
        "SELECT to_regclass('evalnb.labels') IS NOT NULL, to_regclass('evalnb.meta') IS NOT NULL"
    ).fetchone()
    if found is not None and found[0] and found[1]:
        row = conn.execute("SELECT value FROM evalnb.meta WHERE key = 'schema'").fetchone()
        if row is not None and row[0] == VERSION:
            return
    conn.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK,))
    try:
        conn.execute(CREATE)
        conn.execute(GUARDS)
        conn.commit()
    except Exception as exc:
        import psycopg  # noqa: PLC0415 - optional

        if isinstance(exc, psycopg.errors.InsufficientPrivilege):
            msg = (
                f"the review tables at {where} are an older evalnb's (or missing) and this "
                "role may not change them: the lead (the tables' owner) connects once with "
                "this evalnb to upgrade them"
            )
            raise ReviewError(msg) from None
        raise


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


def _scrub(text: str, dsn: str | None) -> str:
    """``text`` without the connection string's secrets, should a driver message quote them."""
    if dsn:
        from psycopg.conninfo import conninfo_to_dict  # noqa: PLC0415 - optional

        try:
            parts = conninfo_to_dict(dsn)
        except Exception:
            return text.replace(dsn, "<the connection string>")
        for secret in _SECRETS:
            value = parts.get(secret)
            if value:
                text = text.replace(str(value), "***")
    return text


def _unavailable(exc: BaseException, where: str, dsn: str | None = None) -> ReviewError:
    import psycopg  # noqa: PLC0415 - optional

    if isinstance(exc, ReviewError):
        return exc
    state = getattr(exc, "sqlstate", None) or ""
    said = _scrub(str(exc).strip(), dsn)
    if state == REFUSED:  # a queue rule, said for the reviewer by the server
        diag = getattr(exc, "diag", None)
        return ReviewError(str(getattr(diag, "message_primary", None) or said))
    if state.startswith("28") or "password authentication failed" in said:
        return ReviewError(
            f"the review server at {where} refused the login ({said[:200]}): check the user "
            "and its password (~/.pgpass or PGPASSWORD keep it out of notebooks)"
        )
    if state == "25006" or "read-only transaction" in said:
        return ReviewUnavailable(
            f"the review server at {where} is read-only now (a standby, or a failover under "
            "way); nothing was recorded: try again when it takes writes"
        )
    if state.startswith(_TRANSIENT):
        return ReviewUnavailable(
            f"the review server at {where} could not do it now ({said[:200]}); nothing was "
            "recorded: try again"
        )
    if isinstance(exc, psycopg.OperationalError | TimeoutError) or type(exc).__name__ == (
        "PoolTimeout"
    ):
        return ReviewUnavailable(
            f"the review server at {where} cannot be reached ({type(exc).__name__}); "
            "nothing was recorded: try again when it is back"
        )
    if isinstance(exc, psycopg.Error):
        return ReviewError(f"the review server at {where} refused: {said[:300]}")
    raise exc


def payload_json(content: dict[str, Any]) -> str:
    """JSON of an item's content for ``jsonb``: NUL and lone surrogates as U+FFFD.

    They are replaced in the strings, before encoding: replacing the escape of NUL in the JSON
    text would also break an answer holding those six characters as text.
    """
    return json.dumps(_clean(content), ensure_ascii=False, default=str)
