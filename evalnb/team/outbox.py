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
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import threading
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalnb.team.connection import ReviewError, ReviewUnavailable

if TYPE_CHECKING:
    from evalnb.team.queue import ReviewQueue

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

    def put(self, item_id: int, label: object, *, reviewer: str, note: str | None) -> str:
        """Write a label to the outbox (on disk before this returns); return its key."""
        key = uuid.uuid4().hex
        self._append(
            {
                "op": "label",
                "key": key,
                "item_id": item_id,
                "label": label,
                "note": note,
                "reviewer": reviewer,
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
        return [(str(e["key"]), str(e["reason"])) for e in self._read() if e["op"] == "refused"]

    def flush(self, queue: ReviewQueue) -> Flushed:
        """Send what waits, oldest first; stop at the first sign the server is away."""
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
        with self._lock, self.path.open("a", encoding="utf-8") as f:
            f.write(line)
            f.flush()
            os.fsync(f.fileno())

    def _read(self) -> list[dict[str, Any]]:
        if not self.path.is_file():
            return []
        out = []
        for line in self.path.read_text(encoding="utf-8").splitlines():
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                continue  # the last line of a writer killed mid-write: never acknowledged
        return out
