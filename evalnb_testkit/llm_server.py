"""A scripted OpenAI-compatible chat server on loopback, for tests, benchmarks and notebooks.

It is a real HTTP server (``ThreadingHTTPServer``) that answers ``POST /v1/chat/completions``.
Markers in the last user message script trouble: ``[[429x2]]`` (the first two calls get
429), ``[[500x1]]``, ``[[dropx1]]`` (connection closed without a reply), ``[[badbodyx1]]``
(200 with a body that is not JSON), ``[[slow:0.5]]`` (delay), ``[[fail]]`` (always 500),
``[[401echo]]`` (401 whose body echoes the credentials it got, as some hosts do),
``[[drip:S]]`` (a 200 whose body comes a byte every 0.2 s for S seconds). ``raw(prompt)``,
when given and not None, is the whole body of a 200 reply (odd usage, tool calls, huge),
or a (status, body) pair. ``agent(messages)``, when given, answers requests that offer
``tools``: a final text, or the tool calls to make (``[{"name", "arguments"}]``).
Otherwise the reply comes from ``per_model(model, prompt) -> str`` when given (two systems
behind one endpoint), else ``responder(prompt) -> str``. ``by_request(body)``, when given
and not None, answers from the whole request (its ``max_tokens``, say) with the reply text
and its ``finish_reason``. Every call is counted per
prompt, so tests can check that a resumed run repeats nothing.

Messages may carry content parts: their text parts are the prompt, and their media (image
URLs, audio payloads) are kept per call in ``media_seen``. A server made with
``vision=False`` refuses a request with an image part as a text-only llama.cpp does (400);
with ``seeing(prompt, media) -> str`` the reply reads the media too (a judge that looks).
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import Counter
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PROBE_PROMPT = "Say hello in one word."
IMAGE_PROBE_PROMPT = "What colour fills this image? Answer in one word."
_MARK = re.compile(r"\[\[(429|500|drop|badbody)x(\d+)\]\]")


class LoopbackLLM:
    """Start with ``with LoopbackLLM(responder) as server: server.base_url``."""

    def __init__(
        self,
        responder: Callable[[str], str] | None = None,
        *,
        latency_s: float = 0.0,
        extra: Callable[[str], dict[str, object]] | None = None,
        whole: bool = False,
        raw: Callable[[str], bytes | tuple[int, bytes] | None] | None = None,
        agent: Callable[[list[dict[str, object]]], str | list[dict[str, object]]] | None = None,
        per_model: Callable[[str, str], str] | None = None,
        by_request: Callable[[dict[str, object]], tuple[str, str] | None] | None = None,
        vision: bool = True,
        seeing: Callable[[str, list[str]], str] | None = None,
    ) -> None:
        self.vision = vision
        self.seeing = seeing
        self.media_seen: list[list[str]] = []  # per call with media: the URLs / payloads sent
        self.responder = responder or (lambda _prompt: "1")
        self.extra = extra  # more top-level keys of the reply (a RAG server's contexts)
        self.whole = whole  # the responder reads every message, the system one included
        self.raw = raw
        # A tool-calling model: given the messages of a request that offers tools, a final
        # answer (text) or the calls to make ([{"name", "arguments"}]).
        self.agent = agent
        self.latency_s = latency_s
        self.per_model = per_model  # (model, prompt) -> reply: systems that answer differently
        self.by_request = by_request  # request body -> (reply, finish_reason)
        self.calls: Counter[str] = Counter()
        self.probes = 0
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.server.request_queue_size = 256
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    @property
    def total_calls(self) -> int:
        return sum(self.calls.values())

    def __enter__(self) -> LoopbackLLM:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:  # quiet
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length))
                messages = [{**m, "content": _text(m.get("content"))} for m in body["messages"]]
                media = [u for m in body["messages"] for u in _media(m.get("content"))]
                prompt = (
                    "\n\n".join(m["content"] or "" for m in messages)
                    if owner.whole
                    else next((m["content"] for m in reversed(messages) if m["role"] == "user"), "")
                )
                if media and not owner.vision:
                    refusal = {"error": {"message": "image input is not supported", "code": 400}}
                    return self._send(400, json.dumps(refusal).encode())
                if prompt == IMAGE_PROBE_PROMPT:  # the image probe: a server that sees says so
                    with owner.lock:
                        owner.probes += 1
                    return self._reply(body, "Red", 0)
                if media:
                    with owner.lock:
                        owner.media_seen.append(media)
                with owner.lock:
                    # A judge's format probe (evalnb.llm.contract) is not one of the calls a
                    # test counts: kept apart, and answered as a server without constraints
                    # would (the responder's rules are for the test's own prompts).
                    if prompt == PROBE_PROMPT or prompt.endswith("\n\n" + PROBE_PROMPT):
                        owner.probes += 1
                    else:
                        owner.calls[prompt] += 1
                    n = owner.calls[prompt]
                if owner.latency_s:
                    time.sleep(owner.latency_s)
                slow = re.search(r"\[\[slow:([\d.]+)\]\]", prompt)
                if slow:
                    time.sleep(float(slow.group(1)))
                for kind, times in _MARK.findall(prompt):
                    if n <= int(times):
                        return self._trouble(kind)
                if "[[fail]]" in prompt:
                    return self._trouble("500")
                drip = re.search(r"\[\[drip:([\d.]+)\]\]", prompt)
                if drip:
                    return self._drip(float(drip.group(1)))
                scripted = owner.raw(prompt) if owner.raw else None
                if scripted is not None:
                    status, data = scripted if isinstance(scripted, tuple) else (200, scripted)
                    return self._send(status, data)
                if "[[401echo]]" in prompt:
                    sent = (
                        self.headers.get("Authorization", "")
                        + " "
                        + self.headers.get("api-key", "")
                    )
                    echo = {
                        "error": {
                            "message": f"Incorrect API key provided: {sent.strip()}. "
                            f"Request: {self.path}"
                        }
                    }
                    return self._send(401, json.dumps(echo).encode())
                probe = n == 0 and owner.raw is None
                if body.get("tools") and owner.agent is not None and not probe:
                    decided = owner.agent(messages)
                    if not isinstance(decided, str):
                        calls = [
                            {
                                "id": f"call-{n}-{k}",
                                "type": "function",
                                "function": {"name": c["name"], "arguments": c["arguments"]},
                            }
                            for k, c in enumerate(decided)
                        ]
                        payload = {
                            "model": body.get("model"),
                            "choices": [
                                {
                                    "index": 0,
                                    "finish_reason": "tool_calls",
                                    "message": {
                                        "role": "assistant",
                                        "content": None,
                                        "tool_calls": calls,
                                    },
                                }
                            ],
                            "usage": {"prompt_tokens": 10, "completion_tokens": 5},
                        }
                        return self._send(200, json.dumps(payload).encode())
                    reply = decided
                elif probe:  # a format probe: a plain "hello"
                    reply = "Hello!"
                elif owner.seeing is not None:
                    reply = owner.seeing(prompt, media)
                else:
                    reply = (
                        owner.per_model(str(body.get("model")), prompt)
                        if owner.per_model is not None
                        else owner.responder(prompt)
                    )
                finish = "stop"
                answered = owner.by_request(body) if owner.by_request and not probe else None
                if answered is not None:
                    reply, finish = answered
                usage = {
                    "prompt_tokens": len(prompt.split()),
                    "completion_tokens": len(reply.split()),
                    "total_tokens": len(prompt.split()) + len(reply.split()),
                }
                extra = owner.extra(prompt) if owner.extra else {}
                return self._reply(body, reply, n, finish=finish, usage=usage, extra=extra)

            def _reply(
                self,
                body: dict[str, object],
                reply: str,
                n: int,
                *,
                finish: str = "stop",
                usage: dict[str, int] | None = None,
                extra: dict[str, object] | None = None,
            ) -> None:
                payload = {
                    "id": f"cmpl-{n}",
                    "object": "chat.completion",
                    "model": body.get("model"),
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": reply},
                            "finish_reason": finish,
                        }
                    ],
                    "usage": usage
                    or {"prompt_tokens": 20, "completion_tokens": 1, "total_tokens": 21},
                    **(extra or {}),
                }
                self._send(200, json.dumps(payload).encode())

            def _trouble(self, kind: str) -> None:
                if kind == "drop":
                    self.close_connection = True
                    self.connection.close()
                elif kind == "badbody":
                    self._send(200, b'{"choices": [oops')
                else:
                    self._send(int(kind), b'{"error": "scripted"}', retry_after="0")

            def _drip(self, seconds: float) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", "100000")
                self.end_headers()
                end = time.monotonic() + seconds
                try:
                    while time.monotonic() < end:
                        self.wfile.write(b" ")
                        self.wfile.flush()
                        time.sleep(0.2)
                except OSError:  # the client gave up: as it should
                    pass
                self.close_connection = True

            def _send(self, status: int, data: bytes, retry_after: str | None = None) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                if retry_after is not None:
                    self.send_header("Retry-After", retry_after)
                self.end_headers()
                self.wfile.write(data)

        return Handler


def _text(content: object) -> object:
    """A message's text: a string as is, content parts' text parts joined."""
    if not isinstance(content, list):
        return content
    return "".join(
        str(p.get("text") or "") for p in content if isinstance(p, dict) and p.get("type") == "text"
    )


def _media(content: object) -> list[str]:
    """The media a message's content parts carry: image URLs, audio payloads, file data."""
    if not isinstance(content, list):
        return []
    out = []
    for part in content:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "image_url":
            out.append(str(part["image_url"]["url"]))
        elif kind == "input_audio":
            out.append("audio:" + str(part["input_audio"]["data"]))
        elif kind == "file":
            out.append(str(part["file"].get("file_data")))
    return out
