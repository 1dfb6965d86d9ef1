"""Write spans to files as the OpenTelemetry Collector's file exporter does, without a Collector.

An application traced with the OpenTelemetry Python SDK adds :class:`OTLPJsonFileExporter`
to its tracer provider; each export appends one line to a file: the OTLP JSON encoding of an
``ExportTraceServiceRequest`` (the SDK's protobuf encoder, then protobuf's JSON mapping with
the ids in hex, as OTLP/JSON requires). Past ``rotate_lines`` lines the file is renamed with
a sequence number and a new one begun, so a monitor reading the folder sees rotated files
and one being written, as with the Collector. Needs ``opentelemetry-sdk`` and
``opentelemetry-exporter-otlp-proto-common`` (``pip install 'evalnb[otel]'``).
"""

from __future__ import annotations

import base64
import json
import threading
from pathlib import Path
from typing import TYPE_CHECKING

try:
    from google.protobuf.json_format import MessageToDict
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
except ImportError as err:  # pragma: no cover - the extra is missing
    _MSG = (
        "the OTLP file exporter needs the OpenTelemetry SDK: pip install 'evalnb[otel]' "
        "(opentelemetry-sdk, opentelemetry-exporter-otlp-proto-common)"
    )
    raise ImportError(_MSG) from err

if TYPE_CHECKING:
    from collections.abc import Sequence

    from opentelemetry.sdk.trace import ReadableSpan

__all__ = ["OTLPJsonFileExporter"]


def _hex_ids(node: object) -> None:
    """Turn protobuf JSON's base64 ids into OTLP/JSON's hex ids, in place."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("traceId", "spanId", "parentSpanId") and isinstance(value, str):
                node[key] = base64.b64decode(value).hex()
            else:
                _hex_ids(value)
    elif isinstance(node, list):
        for item in node:
            _hex_ids(item)


class OTLPJsonFileExporter(SpanExporter):
    """A span exporter writing OTLP JSON lines into ``folder/name``; see the module docstring.

    Parameters
    ----------
    folder
        Where the files go (created).
    name
        The file being written; rotated ones become ``<stem>-<n>.json``.
    rotate_lines
        Export requests per file before it is rotated (None: never).
    """

    def __init__(
        self, folder: str | Path, name: str = "traces.json", *, rotate_lines: int | None = None
    ) -> None:
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.path = self.folder / name
        self.rotate_lines = rotate_lines
        self._lines = 0
        self._rotated = 0
        self._lock = threading.Lock()

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        """Append one export request (a line) holding ``spans``."""
        request = MessageToDict(encode_spans(spans))
        _hex_ids(request)
        line = json.dumps(request, ensure_ascii=False, separators=(",", ":")) + "\n"
        with self._lock:
            with self.path.open("a", encoding="utf-8") as fh:
                fh.write(line)
            self._lines += 1
            if self.rotate_lines is not None and self._lines >= self.rotate_lines:
                self._rotated += 1
                self.path.rename(
                    self.folder / f"{self.path.stem}-{self._rotated}{self.path.suffix}"
                )
                self._lines = 0
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        """Nothing to release: every export closes its file."""

    def force_flush(self, timeout_millis: int = 30000) -> bool:  # noqa: ARG002 - the SDK's signature
        """Nothing is buffered here."""
        return True
