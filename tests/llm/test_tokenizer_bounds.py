"""The judge server's tokenizer is asked under a chat call's bounds (issue 71, 10)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

import evalnb
from evalnb.llm.tokens import token_counter

_CHAT = {
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hello"}}],
    "usage": {"prompt_tokens": 20, "completion_tokens": 1},
}


class _Tokenizer(BaseHTTPRequestHandler):
    mode = "ok"
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        if self.path.startswith("/v1/chat"):
            return self._send(json.dumps(_CHAT).encode())
        text = str(body.get("content") or body.get("input") or "")
        if self.mode == "drip" and text != "hello":
            self.send_response(200)
            self.send_header("Content-Length", "100000")
            self.end_headers()
            for _ in range(60):
                self.wfile.write(b" ")
                self.wfile.flush()
                time.sleep(0.5)
            return None
        if self.mode == "flood" and text != "hello":
            return self._send(json.dumps({"tokens": [1] * 2_000_000}).encode())
        if self.mode == "html":
            return self._send(b"<html><body>tokenize</body></html>")
        if self.mode == "list":
            return self._send(b"[1, 2, 3]")
        return self._send(json.dumps({"tokens": list(range(len(text.split())))}).encode())

    def _send(self, data: bytes) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def server() -> Iterator[ThreadingHTTPServer]:
    http = ThreadingHTTPServer(("127.0.0.1", 0), _Tokenizer)
    http.daemon_threads = True
    threading.Thread(target=http.serve_forever, daemon=True).start()
    yield http
    _Tokenizer.mode = "ok"
    http.shutdown()
    http.server_close()


def _judge(http: ThreadingHTTPServer, **kw: object) -> evalnb.LLMClient:
    url = f"http://127.0.0.1:{http.server_address[1]}/v1"
    return evalnb.LLMClient(url, "judge", cache=False, max_retries=0, **kw)  # type: ignore[arg-type]


def test_a_dripping_tokenizer_is_cut_at_the_clients_deadline(server: ThreadingHTTPServer) -> None:
    counter = token_counter(_judge(server, timeout_s=2))
    assert counter.method == "server"
    _Tokenizer.mode = "drip"
    start = time.monotonic()
    with pytest.raises(ValueError, match="timeout_s=2"):
        counter.conversations([[{"role": "user", "content": "a b c"}]])
    assert time.monotonic() - start < 6  # was 25 s and more for timeout_s=2


def test_a_flooding_tokenizer_is_refused_past_the_size_cap(server: ThreadingHTTPServer) -> None:
    counter = token_counter(_judge(server, max_reply_bytes=1_000_000))
    _Tokenizer.mode = "flood"
    with pytest.raises(ValueError, match="max_reply_bytes=1,000,000"):
        counter.conversations([[{"role": "user", "content": "a b c"}]])


@pytest.mark.parametrize("mode", ["html", "list"])
def test_a_route_that_answers_no_token_list_is_not_a_tokenizer(
    server: ThreadingHTTPServer, mode: str
) -> None:
    _Tokenizer.mode = mode
    assert token_counter(_judge(server)).method != "server"


def test_a_sound_tokenizer_counts(server: ThreadingHTTPServer) -> None:
    counter = token_counter(_judge(server))
    got = counter.conversations([[{"role": "user", "content": "one two three four"}]])
    assert counter.method == "server" and got[0] >= 4
