"""A scripted OpenAI-compatible Batch API on loopback: files, batches, their replies.

``POST /v1/files`` takes the multipart upload (``purpose=batch``), ``POST /v1/batches``
creates a batch of an uploaded file, ``GET /v1/batches/{id}`` reports ``in_progress`` for
the first ``polls_before_done`` polls of it and then ``completed`` (while ``hold`` is set it
stays in progress: a batch a restart must find again), and ``GET /v1/files/{id}/content``
gives the output JSONL, each line answered by ``responder(prompt)`` (a reply text, or the
whole body as bytes). Counts what was submitted, so tests can check nothing is sent twice.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from email.parser import BytesParser
from email.policy import default
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

__all__ = ["LoopbackBatches"]


def _chat_body(reply: str, model: str) -> dict[str, object]:
    return {
        "object": "chat.completion",
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": reply},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 20, "completion_tokens": 1},
    }


class LoopbackBatches:
    """Start with ``with LoopbackBatches(responder) as server: server.base_url``."""

    def __init__(
        self, responder: Callable[[str], str | bytes], *, polls_before_done: int = 2
    ) -> None:
        self.responder = responder
        self.polls_before_done = polls_before_done
        self.hold = False
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, dict[str, object]] = {}
        self.polls: dict[str, int] = {}
        self.chat_calls = 0
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> LoopbackBatches:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def _output(self, input_id: str) -> bytes:
        lines = []
        for text in self.files[input_id].decode().splitlines():
            request = json.loads(text)
            body = request["body"]
            prompt = next(
                (m["content"] for m in reversed(body["messages"]) if m["role"] == "user"), ""
            )
            reply = self.responder(prompt)
            answer = (
                json.loads(reply) if isinstance(reply, bytes) else _chat_body(reply, body["model"])
            )
            lines.append(
                json.dumps(
                    {
                        "id": f"line-{len(lines)}",
                        "custom_id": request["custom_id"],
                        "response": {"status_code": 200, "body": answer},
                        "error": None,
                    }
                )
            )
        return ("\n".join(lines) + "\n").encode()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:  # quiet
                pass

            def _send(self, status: int, body: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self) -> None:
                data = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with owner.lock:
                    if self.path.endswith("/files"):
                        head = f"Content-Type: {self.headers['Content-Type']}\r\n\r\n".encode()
                        message = BytesParser(policy=default).parsebytes(head + data)
                        parts = {
                            p.get_param("name", header="content-disposition"): p
                            for p in message.iter_parts()
                        }
                        file_id = f"file-{len(owner.files)}"
                        owner.files[file_id] = parts["file"].get_payload(decode=True)
                        return self._send(
                            200, json.dumps({"id": file_id, "purpose": "batch"}).encode()
                        )
                    if self.path.endswith("/batches"):
                        body = json.loads(data)
                        batch_id = f"batch-{len(owner.batches)}"
                        owner.batches[batch_id] = {
                            "id": batch_id,
                            "input_file_id": body["input_file_id"],
                        }
                        owner.polls[batch_id] = 0
                        return self._send(
                            200, json.dumps({"id": batch_id, "status": "validating"}).encode()
                        )
                    owner.chat_calls += 1
                    return self._send(404, b'{"error": "this server takes batches only"}')

            def do_GET(self) -> None:
                with owner.lock:
                    parts = self.path.rstrip("/").split("/")
                    if "batches" in parts:
                        batch_id = parts[-1]
                        batch = owner.batches.get(batch_id)
                        if batch is None:
                            return self._send(404, b'{"error": "no such batch"}')
                        owner.polls[batch_id] += 1
                        if owner.hold or owner.polls[batch_id] <= owner.polls_before_done:
                            state = {**batch, "status": "in_progress"}
                        else:
                            out_id = f"out-{batch_id}"
                            owner.files[out_id] = owner._output(str(batch["input_file_id"]))
                            state = {**batch, "status": "completed", "output_file_id": out_id}
                        return self._send(200, json.dumps(state).encode())
                    if parts[-1] == "content":
                        content = owner.files.get(parts[-2])
                        if content is None:
                            return self._send(404, b'{"error": "no such file"}')
                        return self._send(200, content)
                    return self._send(404, b'{"error": "not found"}')

        return Handler
