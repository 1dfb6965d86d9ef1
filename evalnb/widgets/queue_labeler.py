"""The labeler served from a review queue: the same keyboard-first view, labels to the server.

A reviewer on their own machine labels the items the queue reserves for them. Each label
goes to a local outbox first (:mod:`evalnb.team.outbox`) and is sent from there, so when
the server is away the reviewer keeps labelling the items already reserved (the widget
reserves a few ahead) and the labels are sent, exactly once, when it is back. Sending and
reserving happen on a thread of the widget's own (woken by each label, and every
``retry_s`` seconds while anything waits), so a key press never waits for the network.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalnb.team.connection import ReviewError, ReviewUnavailable
from evalnb.team.outbox import Outbox, default_outbox
from evalnb.widgets.labeling import LabelingView

if TYPE_CHECKING:
    from evalnb.team.queue import ReviewItem, ReviewQueue

__all__ = ["QueueLabeler"]


class QueueLabeler(LabelingView):
    """Label a review queue's items as pass/fail from the keyboard (``evalnb.labeler(queue)``).

    Keys as in the lab's labeler: ``p``/``f`` pass/fail (``a``/``d`` in ``mode="agree"``),
    ``←``/``→`` move among the items reserved in this session (label one again to change
    it: the queue keeps both), ``n`` a note, ``u`` back to the last one labelled.

    Synced traits
    -------------
    position : int
        Index of the item shown among the items reserved in this session.
    reviewer : str
        Who is labelling (the queue records it with every label).
    mode : str
        ``"pass_fail"`` or ``"agree"``.
    """

    def __init__(
        self,
        queue: ReviewQueue,
        *,
        reviewer: str,
        outbox: str | Path | None = None,
        ahead: int = 3,
        retry_s: float = 5.0,
        mode: str = "pass_fail",
        blind: bool | None = None,
    ) -> None:
        if not reviewer:
            msg = "the labeler needs reviewer='<your name>': every label records who decided"
            raise ValueError(msg)
        self._queue = queue
        self._outbox = Outbox(Path(outbox) if outbox else default_outbox(queue, reviewer))
        self._ahead = max(1, ahead)
        self._items: list[ReviewItem] = []
        self._labels: dict[int, tuple[str, str | None]] = {}
        self._offline = False
        self._remaining: int | None = None
        self._lock = threading.RLock()
        # A queue published blind never sent the score: nothing to show, whatever is asked.
        published_blind = bool(queue.spec.get("blind", False))
        sighted = blind is False or (blind is None and mode == "agree")
        super().__init__(reviewer=reviewer, mode=mode, blind=published_blind or not sighted)
        for entry in self._outbox.pending():  # labels a killed kernel left unsent
            self._labels[int(entry["item_id"])] = (str(entry["label"]), entry.get("note"))
        self._sync()
        self.observe(lambda _c: self._show(), names=["position", "mode", "blind"])
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._sender = threading.Thread(target=self._send_loop, args=(retry_s,), daemon=True)
        self._sender.start()
        self._show()

    # -- actions (Python API; the browser sends the same as messages) ----------------------
    def label(self, verdict: str, note: str | None = None) -> None:
        """Label the item on screen (``pass``/``fail``, or ``agree``/``disagree``) and move on."""
        with self._lock:
            if not self._items:
                msg = "there is no item to label: the queue has nothing left for you"
                raise ValueError(msg)
            item = self._items[self.position]
            verdict = self.resolve(verdict, item.content.get("passed"))
            if verdict not in ("pass", "fail"):
                msg = f"a label is 'pass' or 'fail'; got {verdict!r}"
                raise ValueError(msg)
            self._outbox.put(item.item_id, verdict, reviewer=self.reviewer, note=note or None)
            self._labels[item.item_id] = (verdict, note or None)
            self._wake.set()  # the sender thread sends it and reserves the next items
            later = [
                i for i in range(len(self._items)) if self._items[i].item_id not in self._labels
            ]
            target = next((i for i in later if i > self.position), later[0] if later else None)
        if target is None or target == self.position:
            self._show()
        else:
            self.position = target

    def undo(self) -> None:
        """Go back to the last item labelled (label it again to change it)."""
        done = [i for i, it in enumerate(self._items) if it.item_id in self._labels]
        if not done:
            self._error = "nothing labelled in this session yet"
            return
        self.go(done[-1])

    def go(self, position: int) -> None:
        """Show item ``position`` of this session's items (clamped)."""
        self.position = max(0, min(position, max(len(self._items) - 1, 0)))

    def sync(self) -> None:
        """Send what waits in the outbox and reserve items ahead, now (blocking)."""
        self._sync()
        self._show()

    def next_batch(self) -> None:
        """Send and reserve now (the key ``b``: a queue has no batches)."""
        self.sync()

    def apply(self) -> None:
        """Refuse: thresholds are the lead's, from the pulled labels (the view says so)."""
        msg = (
            "the lead recalibrates thresholds after lab.calibration.pull_labels(queue); your labels are "
            "in the queue"
        )
        raise ValueError(msg)

    @property
    def waiting(self) -> int:
        """How many labels wait in the outbox for the server."""
        return len(self._outbox.pending())

    @property
    def item(self) -> dict[str, Any] | None:
        """The item on screen: prompt, expected, answer, contexts, steps, score, your label."""
        return None if self._item is None else dict(self._item)

    def stop(self) -> None:
        """Send what waits, then stop syncing; the widget stays on screen as it is.

        For a reviewer who is done (and a notebook run top to bottom): the view keeps its
        last state, where :meth:`close` would remove it from the output.
        """
        self.sync()
        self._stop.set()
        self._wake.set()

    def close(self) -> None:
        """Stop the sender thread and close the widget (what waits stays in the outbox)."""
        self._stop.set()
        self._wake.set()
        super().close()

    # -- the server ------------------------------------------------------------------------
    def _sync(self) -> None:
        """Flush the outbox and keep ``ahead`` unlabelled items reserved (when reachable).

        The network calls run without the widget's lock (a key press never waits on them);
        only the lists they change are updated under it.
        """
        try:
            flushed = self._outbox.flush(self._queue)
            for key, reason in flushed.refused:
                self._error = f"a label was not recorded ({key[:8]}): {reason}"
            if flushed.waiting:
                self._offline = True
                return
            while True:
                with self._lock:
                    open_ = sum(1 for it in self._items if it.item_id not in self._labels)
                if open_ >= self._ahead:
                    break
                item = self._queue.next(self.reviewer)
                if item is None:
                    break
                with self._lock:
                    self._items.append(item)
            self._remaining = self._queue.remaining()
            self._offline = False
            self._advance()
        except ReviewUnavailable:
            self._offline = True
        except ReviewError as err:
            self._error = str(err)

    def _advance(self) -> None:
        """Move off a labelled item when an unlabelled one has arrived (the reviewer waits)."""
        with self._lock:
            if not self._items:
                return
            here = self._items[min(self.position, len(self._items) - 1)]
            if here.item_id not in self._labels:
                return
            open_ = [i for i, it in enumerate(self._items) if it.item_id not in self._labels]
        if open_:
            self.position = open_[0]

    def _send_loop(self, every: float) -> None:
        while not self._stop.is_set():
            self._wake.wait(every)
            self._wake.clear()
            if self._stop.is_set():
                return
            self._sync()
            self._show()

    # -- view ------------------------------------------------------------------------------
    def _show(self) -> None:
        with self._lock, self.hold_sync():
            waiting = self.waiting
            state = (
                f"offline: {waiting} label(s) wait to be sent"
                if self._offline
                else f"{waiting} label(s) waiting"
                if waiting
                else "all labels sent"
            )
            self._progress = {
                "done": sum(1 for it in self._items if it.item_id in self._labels),
                "total": len(self._items),
                "batch_id": f"queue {self._queue.name} · {state}",
                "evaluator": self._queue.evaluator,
                "metric": self._queue.metric,
                "remaining": self._remaining,
                "offline": self._offline,
                "waiting": waiting,
            }
            if not self._items:
                self.set_trait("_item", None)
                return
            item = self._items[min(self.position, len(self._items) - 1)]
            c = item.content
            human, note = self._labels.get(item.item_id, (None, None))
            self.set_trait(
                "_item",
                self.shown(
                    {
                        "case_id": item.case_id,
                        "model": item.model,
                        "sample": item.sample,
                        "prompt": c.get("prompt"),
                        "expected": c.get("expected") or [],
                        "actual": c.get("answer"),
                        "context": c.get("contexts") or [],
                        "steps": c.get("steps") or [],
                        "value": c.get("value"),
                        "threshold": c.get("threshold"),
                        "passed": c.get("passed"),
                        "metric_title": self._queue.metric,
                        "human": human,
                        "note": note,
                    }
                ),
            )
