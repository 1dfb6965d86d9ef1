"""A model that is not cached fails at once, saying why, when the hub cannot answer.

The hub is played by loopback sockets: one that accepts connections and never answers (a
network that swallows packets), one that answers every request with 404 (a hub that is up).
"""

from __future__ import annotations

import contextlib
import http.server
import socket
import threading
import time
from typing import TYPE_CHECKING

import polars as pl
import pytest

import evalnb
from evalnb.models import hub
from evalnb.models.encoder import TextEncoder
from evalnb.models.hf import ModelUnavailable

if TYPE_CHECKING:
    from collections.abc import Iterator


class _Silent:
    """Accepts TCP connections, notes each one's request line, never sends a byte."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.accepted: list[socket.socket] = []
        self.requests: list[str] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted.append(conn)
            threading.Thread(target=self._note, args=(conn,), daemon=True).start()

    def _note(self, conn: socket.socket) -> None:
        with contextlib.suppress(OSError):
            self.requests.append(conn.makefile("rb").readline().decode().strip())

    def asked(self) -> list[str]:
        """Requests other than huggingface_hub's own once-a-process agent-registry lookup."""
        time.sleep(0.2)  # the request lines arrive on their own threads
        return [r for r in self.requests if "/api/agent-harnesses" not in r]


@pytest.fixture
def silent_hub(monkeypatch: pytest.MonkeyPatch) -> Iterator[_Silent]:
    server = _Silent()
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    monkeypatch.setenv("HF_ENDPOINT", server.url)
    monkeypatch.setattr(hub, "PROBE_SECONDS", 0.5)
    yield server
    server.sock.close()
    for conn in server.accepted:
        conn.close()


def _lab() -> evalnb.Lab:
    return evalnb.load(pl.DataFrame({"prompt": ["Is it safe?"], "actual": ["No."], "model": ["m"]}))


def test_an_unreachable_hub_is_asked_once_and_the_error_says_what_to_do(
    silent_hub: _Silent,
) -> None:
    with pytest.raises(ModelUnavailable) as raised:
        evalnb.evaluate(_lab(), ["toxicity"], model="org/not-cached-anywhere", progress=False)
    msg = str(raised.value)
    assert f"the hub at {silent_hub.url} did not answer within 0.5 s" in msg
    assert "model='<local folder>'" in msg and "hf download org/not-cached-anywhere" in msg
    assert silent_hub.asked() == ["HEAD / HTTP/1.1"]  # the probe; no download, no retries
    # a second model-backed load in the same minute trusts the first probe
    with pytest.raises(ModelUnavailable, match="did not answer"):
        TextEncoder("org/another-uncached-encoder", cache_dir=None)
    assert silent_hub.asked() == ["HEAD / HTTP/1.1"]


def test_hf_hub_offline_is_respected_without_a_probe(
    silent_hub: _Silent, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelUnavailable, match=r"is not available .*HF_HUB_OFFLINE is set"):
        evalnb.evaluate(_lab(), ["toxicity"], model="org/not-cached-anywhere", progress=False)
    with pytest.raises(ModelUnavailable, match=r"not in the local .* HF_HUB_OFFLINE is set"):
        TextEncoder("org/another-uncached-encoder", cache_dir=None)
    assert silent_hub.asked() == []


def test_a_hub_that_answers_is_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    class NotFound(http.server.BaseHTTPRequestHandler):
        def do_HEAD(self) -> None:
            self.send_response(404)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), NotFound)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
        monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{server.server_port}")
        assert hub.hub_blocker() is None
    finally:
        server.shutdown()
        server.server_close()
