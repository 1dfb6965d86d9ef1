"""The format contract a judge's server honours, found by asking it, once per endpoint and model.

A judge asked in free text answers in free text; most servers can do better. This module
probes which constraint the server really applies, with tiny requests whose only
well-formed reply under the constraint (``{"probe": "kiwi-7"}``) no model would give to
the prompt sent with it ("Say hello in one word.") — so an ignored field and a model that
happened to write JSON cannot be mistaken for an honoured contract:

``json_schema``
    OpenAI's ``response_format={"type": "json_schema", "json_schema": {"strict": true, …}}``.
``structured_outputs``
    vLLM's ``structured_outputs={"json": schema}`` (its ``guided_*`` fields are gone).
``json_object_schema``
    llama.cpp's ``response_format={"type": "json_object", "schema": schema}``.
``ollama_format``
    Ollama's ``format: schema``.
``tool``
    a forced call of one function whose parameters are the schema (``tool_choice``).

and whether ``logprobs`` / ``top_logprobs`` come back, and whether the server takes an
image: a request with a small red square as an ``image_url`` part, asked for its colour. A
server that refuses the part (a text-only llama.cpp answers 400) takes no images; one that
answers is taken to accept them, and whether it named the colour is noted (whether a judge
really *looks* is the judge card's media-blind control, not a probe's business).
:class:`Capabilities` is what was
found; :meth:`evalnb.LLMClient.capabilities` keeps it in the client's DuckDB cache, per
endpoint and model, until asked to probe again. The contract in force for a judge is
:func:`negotiate`'s choice: under ``"auto"`` the strongest honoured (in the order above),
under ``"strict"`` the same or an error, under ``"free"`` none.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import struct
import zlib
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from evalnb.lab.errors import EvalnbError

if TYPE_CHECKING:
    from collections.abc import Mapping

    from evalnb.llm.reply_cache import ChatResult

__all__ = [
    "CONTRACTS",
    "IMAGE_PROBE_PROMPT",
    "MODES",
    "PROBE_SYSTEM",
    "Capabilities",
    "ContractError",
    "constraint_params",
    "image_probe",
    "negotiate",
    "probe_requests",
    "read_probes",
    "reply_text",
]

CONTRACTS = ("json_schema", "structured_outputs", "json_object_schema", "ollama_format", "tool")
MODES = ("auto", "strict", "free")
_PROBE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"probe": {"type": "string", "enum": ["kiwi-7"]}},
    "required": ["probe"],
    "additionalProperties": False,
}
_PROBE_MESSAGES = ({"role": "user", "content": "Say hello in one word."},)
# The token-count probe has a judge's shape (a system message, then the user's), so the
# tokens a chat template adds to such a conversation can be measured (see PROBE_SYSTEM).
PROBE_SYSTEM = "You answer briefly."
_PROBE_REPLY = {"probe": "kiwi-7"}
_TOOL_NAME = "reply"
IMAGE_PROBE_PROMPT = "What colour fills this image? Answer in one word."


class ContractError(EvalnbError, ValueError):
    """``contract="strict"`` asked of a server that honours no format constraint."""


@dataclass(frozen=True)
class Capabilities:
    """What one endpoint and model honoured when probed.

    Attributes
    ----------
    endpoint, model
        Whom was asked (the public endpoint: no credentials).
    honoured
        The contracts the server applied, strongest first.
    logprobs
        Whether replies carry token log-probabilities with alternatives.
    notes
        Why each contract not honoured was not: the server's error or "ignored".
    probed_at
        When (UTC, ISO 8601).
    """

    endpoint: str
    model: str
    honoured: tuple[str, ...] = ()
    logprobs: bool = False
    notes: dict[str, str] = field(default_factory=dict)
    probed_at: str = ""
    probe_prompt_tokens: int | None = None
    """The prompt tokens the server counted for the probe conversation (system + user)."""
    seconds_per_call: float | None = None
    """The mean time of a probe call (a short reply): the endpoint's measured pace."""
    images: bool | None = None
    """Whether the server took an image part (None: probed before images were asked)."""

    def best(self) -> str | None:
        """Return the strongest contract honoured, None when none is."""
        return next((c for c in CONTRACTS if c in self.honoured), None)

    def to_json(self) -> str:
        """Return the capabilities as JSON (what the cache stores)."""
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Capabilities:
        """Read what :meth:`to_json` wrote."""
        data = json.loads(text)
        return cls(
            endpoint=str(data["endpoint"]),
            model=str(data["model"]),
            honoured=tuple(c for c in data.get("honoured", ()) if c in CONTRACTS),
            logprobs=bool(data.get("logprobs")),
            notes={str(k): str(v) for k, v in dict(data.get("notes") or {}).items()},
            probed_at=str(data.get("probed_at", "")),
            probe_prompt_tokens=data.get("probe_prompt_tokens"),
            seconds_per_call=data.get("seconds_per_call"),
            images=data.get("images"),
        )


def constraint_params(
    kind: str, schema: Mapping[str, Any], name: str = _TOOL_NAME
) -> dict[str, Any]:
    """Return the request fields that put a reply under contract ``kind`` with ``schema``."""
    body = dict(schema)
    if kind == "json_schema":
        return {
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": name, "strict": True, "schema": body},
            }
        }
    if kind == "structured_outputs":
        return {"structured_outputs": {"json": body}}
    if kind == "json_object_schema":
        return {"response_format": {"type": "json_object", "schema": body}}
    if kind == "ollama_format":
        return {"format": body}
    if kind == "tool":
        return {
            "tools": [{"type": "function", "function": {"name": name, "parameters": body}}],
            "tool_choice": {"type": "function", "function": {"name": name}},
        }
    if kind == "free":
        return {}
    msg = f"unknown contract {kind!r}; expected one of {(*CONTRACTS, 'free')}"
    raise ValueError(msg)


def reply_text(result: ChatResult, kind: str) -> str | None:
    """Return the text to read of a reply under ``kind``: a forced tool call's arguments."""
    if kind == "tool" and result.tool_calls:
        return str(result.tool_calls[0].get("arguments", ""))
    return result.content


def probe_requests() -> list[tuple[str, list[dict[str, Any]], dict[str, Any]]]:
    """Return the probes: (what is probed, the conversation, the request fields)."""
    probes: list[tuple[str, list[dict[str, Any]], dict[str, Any]]] = [
        (kind, list(_PROBE_MESSAGES), {**constraint_params(kind, _PROBE_SCHEMA, "probe")})
        for kind in CONTRACTS
    ]
    measured = [{"role": "system", "content": PROBE_SYSTEM}, *_PROBE_MESSAGES]
    probes.append(("logprobs", measured, {"logprobs": True, "top_logprobs": 5}))
    probes.append(("images", [image_probe()], {}))
    return [(k, m, {**p, "max_tokens": 24, "temperature": 0}) for k, m, p in probes]


def image_probe() -> dict[str, Any]:
    """Return the image probe's message: a question and a 16-pixel red square (PNG)."""
    url = "data:image/png;base64," + base64.b64encode(_red_square()).decode("ascii")
    return {
        "role": "user",
        "content": [
            {"type": "text", "text": IMAGE_PROBE_PROMPT},
            {"type": "image_url", "image_url": {"url": url}},
        ],
    }


def _red_square(side: int = 16) -> bytes:
    """Return a PNG of one red square, written here (the probe needs no imaging library)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", side, side, 8, 2, 0, 0, 0)  # 8-bit RGB
    pixels = b"".join(b"\x00" + b"\xdc\x14\x14" * side for _ in range(side))
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(pixels))
        + chunk(b"IEND", b"")
    )


def read_probes(endpoint: str, model: str, results: Mapping[str, ChatResult]) -> Capabilities:
    """Decide what was honoured from the probes' results (see :func:`probe_requests`)."""
    honoured: list[str] = []
    notes: dict[str, str] = {}
    for kind in CONTRACTS:
        result = results[kind]
        if result.error is not None:
            notes[kind] = result.error[:200]
            continue
        text = reply_text(result, kind) or ""
        try:
            value = json.loads(text)
        except ValueError:
            value = None
        if value == _PROBE_REPLY:
            honoured.append(kind)
        else:
            notes[kind] = f"ignored (the reply was {text[:60]!r})"
    lp = results["logprobs"]
    has_logprobs = lp.error is None and bool(lp.logprobs) and any(t[2] for t in lp.logprobs or ())
    if not has_logprobs:
        notes["logprobs"] = lp.error[:200] if lp.error else "no token log-probabilities returned"
    seen = results.get("images")
    images = seen is not None and seen.error is None
    if seen is not None and seen.error is not None:
        notes["images"] = f"refused an image part ({seen.error[:160]})"
    elif seen is not None:
        said = (seen.content or "").strip().lower()
        notes["images"] = (
            "took an image and named its colour"
            if "red" in said
            else f"took an image; asked its colour (red) it said {said[:40]!r}"
        )
    durations = [r.duration_s for r in results.values() if r.error is None and r.duration_s]
    return Capabilities(
        endpoint,
        model,
        tuple(honoured),
        has_logprobs,
        notes,
        dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        probe_prompt_tokens=lp.prompt_tokens if lp.error is None else None,
        seconds_per_call=sum(durations) / len(durations) if durations else None,
        images=images if seen is not None else None,
    )


def negotiate(mode: str, capabilities: Capabilities | None, *, has_schema: bool) -> str:
    """Return the contract in force: one of :data:`CONTRACTS`, or ``"free"``.

    Parameters
    ----------
    mode
        ``"auto"`` (the strongest honoured, else free text), ``"strict"`` (the strongest
        honoured, else :class:`ContractError`) or ``"free"``.
    capabilities
        What the server honoured (None: not probed, only possible with ``"free"``).
    has_schema
        Whether the evaluator's reply has a schema; without one only free text is possible.
    """
    if mode not in MODES:
        msg = f"contract={mode!r}; expected one of {MODES}"
        raise ValueError(msg)
    if mode == "free":
        return "free"
    if not has_schema:
        if mode == "strict":
            msg = (
                "contract='strict' asked of an evaluator whose reply has no schema (a free-text "
                "judge): use contract='auto' or 'free'"
            )
            raise ContractError(msg)
        return "free"
    best = capabilities.best() if capabilities is not None else None
    if best is not None:
        return best
    if mode == "strict":
        where = f"{capabilities.endpoint} ({capabilities.model})" if capabilities else "the judge"
        why = "; ".join(
            f"{k}: {v}" for k, v in (capabilities.notes if capabilities else {}).items()
        )
        msg = (
            f"contract='strict': {where} honours none of {CONTRACTS} ({why}). Use a server that "
            "constrains its output (vLLM, llama.cpp, OpenAI, Ollama), or contract='auto' to read "
            "free text"
        )
        raise ContractError(msg)
    return "free"
