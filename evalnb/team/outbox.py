"""Labels that wait for the server: a local outbox, sent exactly once when it is back.

A reviewer's widget writes each label here first (one JSON line, flushed and fsync'd), then
sends it. Each label has its own idempotency key, which the server keeps unique, so a label
sent twice — the reply lost, the kernel killed between the server's commit and the outbox's
note — is recorded once. A label the server refuses for good (the lease ended and others
took the item) is kept in the file with the reason, never retried, and reported.

The file is JSON Lines of three kinds: ``{"op": "label", "key", "item_id", "label",
"note", "reviewer", "at"}``, ``{"op": "sent", "key"}`` and ``{"op": "refused", "key",
"reason"}``. When nothing is pending it is emptied. One outbox per queue, reviewer and
machine: two kernels of one reviewer on one machine should not share a file.

A writer killed mid-line leaves a line without its newline: the next entry starts a line of
its own, so the torn one never swallows it (the torn line was never acknowledged: ``put``
returns only after its line is on disk). Lines that are not entries (torn, edited, another
program's) are skipped and counted (:meth:`Outbox.damaged`). A refusal that passes (the
server read-only for a moment, a serialization failure) leaves the label waiting; only a
refusal for good is recorded as one. Flushes of one file take turns, across threads and
processes (an ``flock`` on a lock file beside it).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import hashlib
import json
import os
import threading
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalnb.team.connection import ReviewError, ReviewUnavailable, clean_text

if TYPE_CHECKING:
    from collections.abc import Iterator

    from evalnb.team.queue import ReviewQueue

_OPS = {"label": ("key", "item_id", "label", "reviewer"), "sent": ("key",), "refused": ("key",)}

__all__ = ["Flushed", "Outbox", "default_outbox"]


def default_outbox(queue: ReviewQueue, reviewer: str) -> Path:
    """Return the outbox file of ``reviewer`` on ``queue`` (under ``~/.cache/evalnb``)."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    digest = hashlib.sha256(f"{queue.where}\x00{queue.name}\x00{reviewer}".encode()).hexdigest()
    return base / "evalnb" / "outbox" / f"{digest[:24]}.jsonl"


@dataclass(frozen=True)
class Flushed:
    """What one flush did: labels sent, still waiting (server away), refused for good."""

    sent: int
    waiting: int
    refused: list[tuple[str, str]]


class Outbox:
    """A reviewer's labels on their way to the server (see the module's description)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        # A widget writes from the kernel's thread and sends from its own: appends and the
        # final emptying take turns, so no label is written into a file being emptied.
        self._lock = threading.Lock()
        self._flush_lock = threading.Lock()

    def put(self, item_id: int, label: object, *, reviewer: str, note: str | None) -> str:
        """Write a label to the outbox (on disk before this returns); return its key."""
        key = uuid.uuid4().hex
        self._append(
            {
                "op": "label",
                "key": key,
                "item_id": item_id,
                "label": label,
                "note": None if note is None else clean_text(str(note)),
                "reviewer": clean_text(reviewer),
                "at": dt.datetime.now(dt.UTC).isoformat(),
            }
        )
        return key

    def pending(self) -> list[dict[str, Any]]:
        """Labels not yet acknowledged by the server nor refused, oldest first."""
        labels: dict[str, dict[str, Any]] = {}
        for entry in self._read():
            if entry.get("op") == "label":
                labels[str(entry["key"])] = entry
            else:
                labels.pop(str(entry.get("key")), None)
        return list(labels.values())

    def refused(self) -> list[tuple[str, str]]:
        """Keys and reasons of the labels the server refused."""
        return [
            (str(e["key"]), str(e.get("reason", ""))) for e in self._read() if e["op"] == "refused"
        ]

    def damaged(self) -> int:
        """Lines of the file that are not entries (torn by a kill, edited): skipped."""
        return self._scan()[1]

    def flush(self, queue: ReviewQueue) -> Flushed:
        """Send what waits, oldest first; stop at the first sign the server is away."""
        with self._flushing():
            return self._flush(queue)

    @contextlib.contextmanager
    def _flushing(self) -> Iterator[None]:
        # Two flushes at once would send one label twice: the second would find the key
        # taken. Threads take turns on the lock, processes on the lock file's flock.
        with self._flush_lock, self.path.with_suffix(".lock").open("a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def _flush(self, queue: ReviewQueue) -> Flushed:
        sent = 0
        refused: list[tuple[str, str]] = []
        waiting = self.pending()
        for entry in list(waiting):
            try:
                queue.submit(
                    int(entry["item_id"]),
                    entry["label"],
                    reviewer=str(entry["reviewer"]),
                    note=entry.get("note"),
                    key=str(entry["key"]),
                )
            except ReviewUnavailable:
                break
            except ReviewError as err:
                self._append({"op": "refused", "key": entry["key"], "reason": str(err)})
                refused.append((str(entry["key"]), str(err)))
            else:
                self._append({"op": "sent", "key": entry["key"]})
                sent += 1
            waiting.remove(entry)
        with self._lock:
            if not self.pending() and not self.refused():
                self.path.write_text("", encoding="utf-8")  # all acknowledged: start clean
        return Flushed(sent, len(waiting), refused)

    def _append(self, entry: dict[str, Any]) -> None:
        line = json.dumps(entry, ensure_ascii=False) + "\n"
        with self._lock, self.path.open("a+b") as f:
            # A writer killed mid-line left no newline: end that line first, or this entry
            # would be glued to it and lost with it.
            size = f.seek(0, os.SEEK_END)
            if size:
                f.seek(size - 1)
                if f.read(1) != b"\n":
                    f.write(b"\n")
            f.write(line.encode("utf-8"))
            f.flush()
            os.fsync(f.fileno())

    def _read(self) -> list[dict[str, Any]]:
        return self._scan()[0]

    def _scan(self) -> tuple[list[dict[str, Any]], int]:
        if not self.path.is_file():
            return [], 0
        out, bad = [], 0
        for raw in self.path.read_bytes().split(b"\n"):
            if not raw.strip():
                continue
            try:
                entry = json.loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
                bad += 1  # a line torn by a kill: never acknowledged
                continue
            if not _is_entry(entry):
                bad += 1
                continue
            out.append(entry)
        return out, bad


def _is_entry(entry: object) -> bool:
    """Whether a parsed line is one of the outbox's entries (not any JSON)."""
    if not isinstance(entry, dict):
        return False
    fields = _OPS.get(entry.get("op"))  # type: ignore[arg-type]
    if fields is None or any(name not in entry for name in fields):
        return False
    if not isinstance(entry["key"], str):
        return False
    return entry["op"] != "label" or (
        isinstance(entry["item_id"], int) and isinstance(entry["reviewer"], str)
    )
