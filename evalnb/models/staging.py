"""One host-to-device copy a batch, from pinned buffers used in turn.

Measured on an H100 machine, pinning each batch's arrays anew (``Tensor.pin_memory()``) took
12 ms a call: 6.5 of the 8.2 s that 400k sentences took end to end. The model engine
(:mod:`evalnb.models.engine`) sends its CUDA batches through :class:`Staging` instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import torch

__all__ = ["Staging"]


class Staging:
    """Pinned host buffers, used in turn, for one host-to-device copy a batch.

    A batch's int64 arrays are packed into one buffer and sent with one ``non_blocking`` copy;
    the tensors returned are views of the one device tensor. An event recorded after each
    copy tells when its buffer may be written again: with ``slots`` buffers the host is at
    most that many batches ahead of the copies, which also bounds the memory in flight. A
    buffer grows (pinned anew) only when a batch needs more than it has.

    Parameters
    ----------
    device
        A CUDA device (``"cuda"``, ``"cuda:N"``); on ``"cpu"`` the buffers are not pinned and
        no event is kept, for tests of the packing.
    slots
        Buffers used in turn.
    """

    def __init__(self, device: str, slots: int = 4) -> None:
        self.device = device
        self.cuda = device.startswith("cuda")
        self._buffers: list[torch.Tensor | None] = [None] * max(1, slots)
        self._events: list[Any] = [None] * max(1, slots)
        self._next = 0

    def send(self, arrays: dict[str, np.ndarray]) -> dict[str, torch.Tensor]:
        """Copy ``arrays`` to the device in one transfer; the same keys, as int64 tensors."""
        import torch  # noqa: PLC0415

        total = sum(int(a.size) for a in arrays.values())
        slot = self._next
        self._next = (slot + 1) % len(self._buffers)
        event = self._events[slot]
        if event is not None:
            event.synchronize()  # the copy that last read this buffer has finished
        buffer = self._buffers[slot]
        if buffer is None or buffer.numel() < total:
            size = max(total, 1 << 16, 0 if buffer is None else 2 * buffer.numel())
            buffer = torch.empty(size, dtype=torch.int64, pin_memory=self.cuda)
            self._buffers[slot] = buffer
        host = buffer.numpy()
        spans = []
        at = 0
        for key, value in arrays.items():
            host[at : at + value.size] = value.reshape(-1)
            spans.append((key, at, value.shape))
            at += value.size
        sent = buffer[:total].to(self.device, non_blocking=self.cuda)
        if self.cuda:
            event = torch.cuda.Event()  # type: ignore[no-untyped-call]
            event.record(torch.cuda.current_stream(torch.device(self.device)))
            self._events[slot] = event
        else:  # a CPU "copy" is the buffer itself: detach it from the next batch's data
            sent = sent.clone()
        return {
            key: sent[start : start + int(np.prod(shape))].view(shape)
            for key, start, shape in spans
        }
