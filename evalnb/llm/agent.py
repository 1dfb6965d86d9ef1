"""Agents through an OpenAI-compatible endpoint: tool calling in a loop, and its steps.

``run_agents(client, conversations, tools)`` gives the model the tools (Python callables;
their JSON schemas come from their signatures and their descriptions from their docstrings),
runs the tools it asks for, feeds their results back, and repeats until it answers without a
tool call or ``max_steps`` model calls are spent. All conversations advance together, one
model call each a round, through :meth:`LLMClient.chat_many` (concurrency, retries, the
cache: a rerun replays the model's replies from the cache and runs the tools again). Every
message is kept, with each model call's latency, tokens and cost.

:func:`steps_of` turns a transcript (this loop's, or one read from a file) into the rows of
the lab's ``steps`` table.
"""

from __future__ import annotations

import inspect
import json
import threading
import typing
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from evalnb.llm.client import LLMClient

__all__ = ["AgentRun", "Turn", "canonical_args", "run_agents", "steps_of", "tool_spec"]

# A tool's result goes back to the model and into the lab: bounded like any model input.
MAX_RESULT_CHARS = 20_000


@dataclass
class Turn:
    """One message of a transcript, checked: its role, text, tool calls and accounting."""

    role: str
    content: str | None = None
    tool_calls: list[tuple[str | None, str, Any]] = field(default_factory=list)
    tool_call_id: str | None = None
    error: str | None = None
    latency_s: float | None = None
    tokens: int | None = None
    cost: float | None = None


def canonical_args(args: Any) -> tuple[str, bool]:  # noqa: ANN401
    """Return arguments as canonical JSON text (sorted keys), and whether they were valid JSON.

    OpenAI sends arguments as a JSON string, ragas as an object; a string that does not
    parse is kept as it is, flagged, so a malformed call is scored rather than lost.
    """
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else {}
        except (ValueError, RecursionError):
            return storable(args), False
    try:
        text = json.dumps(args, sort_keys=True, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        return storable(str(args)), False
    if not _encodes(text):  # a lone surrogate ("\\ud800"): the same JSON, escaped
        text = json.dumps(args, sort_keys=True)
    return text, True


def storable(text: str) -> str:
    """Return ``text`` as UTF-8 can hold it: a lone surrogate becomes its escape, as text."""
    return text if _encodes(text) else text.encode("utf-8", "backslashreplace").decode("utf-8")


def _encodes(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def steps_of(
    turns: Sequence[Turn], case_id: str, model: str, sample: int
) -> tuple[list[dict[str, Any]], str]:
    """Return the ``steps`` rows of one run, and its answer (the last assistant text).

    A message is a row; an assistant message calling several tools is a row per call (its
    text, latency and cost on the first). A tool message answers the earliest call not
    answered yet that carries its ``tool_call_id`` (ids may repeat: calls sharing one are
    answered in order), else, with no id (ragas' messages carry none), the earliest call not
    answered yet; the call's row gets the result and any error. A result for a call already
    answered keeps its own row and leaves the call's first result as it was. Linear in the
    number of messages, whatever order the results come in.
    """
    steps: list[dict[str, Any]] = []
    by_id: dict[str, deque[dict[str, Any]]] = {}  # unanswered calls per id, in order
    last_of: dict[str, dict[str, Any]] = {}  # the latest call per id (for late results)
    unanswered: deque[dict[str, Any]] = deque()  # every call, in order; answered ones skipped
    answered: set[int] = set()  # ids (id()) of the call rows answered
    answer = ""
    for index, turn in enumerate(turns):
        base = {
            "case_id": case_id,
            "model": model,
            "sample": sample,
            "step": index,
            "role": turn.role,
            "content": turn.content,
            "tool_call_id": None,
            "tool_name": None,
            "tool_args": None,
            "args_valid": None,
            "tool_result": None,
            "error": turn.error,
            "latency_s": turn.latency_s,
            "tokens": turn.tokens,
            "cost": turn.cost,
        }
        if turn.role == "tool":
            call = _next_call(
                by_id.get(turn.tool_call_id) if turn.tool_call_id is not None else unanswered,
                answered,
            )
            if call is not None:
                answered.add(id(call))
                call["tool_result"] = turn.content
                call["error"] = call["error"] or turn.error
            elif turn.tool_call_id is not None:
                call = last_of.get(turn.tool_call_id)  # a second result for an answered call
            if call is not None:
                base["tool_call_id"], base["tool_name"] = call["tool_call_id"], call["tool_name"]
            steps.append(base)
            continue
        if not turn.tool_calls:
            steps.append(base)
            if turn.role == "assistant" and turn.content:
                answer = turn.content
            continue
        for k, (call_id, name, args) in enumerate(turn.tool_calls):
            row = dict(base)
            if k:
                row.update(content=None, latency_s=None, cost=None, tokens=None)
            key = call_id or f"call-{index}-{k}"
            row["tool_call_id"] = key
            row["tool_name"] = name
            row["tool_args"], row["args_valid"] = canonical_args(args)
            by_id.setdefault(key, deque()).append(row)
            last_of[key] = row
            unanswered.append(row)
            steps.append(row)
        if turn.content:
            answer = turn.content
    return steps, answer


def _next_call(queue: deque[dict[str, Any]] | None, answered: set[int]) -> dict[str, Any] | None:
    """Pop answered calls off the front of ``queue``; return its first unanswered one."""
    while queue:
        if id(queue[0]) not in answered:
            return queue.popleft()
        queue.popleft()
    return None


_JSON_TYPES = {
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
    list: "array",
    dict: "object",
}


def tool_spec(name: str, fn: Callable[..., Any]) -> dict[str, Any]:
    """Describe ``fn`` as an OpenAI function tool: its parameters from its signature.

    A parameter's JSON type comes from its annotation (str, int, float, bool, list, dict;
    anything else is a string); one without a default is required.
    """
    signature = inspect.signature(fn)
    hints = typing.get_type_hints(fn) if hasattr(fn, "__annotations__") else {}
    properties: dict[str, Any] = {}
    required = []
    for pname, param in signature.parameters.items():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        hint = hints.get(pname, str)
        origin = typing.get_origin(hint) or hint
        properties[pname] = {"type": _JSON_TYPES.get(origin, "string")}
        if param.default is inspect.Parameter.empty:
            required.append(pname)
    doc = inspect.getdoc(fn) or name
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": doc.splitlines()[0][:1000],
            "parameters": {"type": "object", "properties": properties, "required": required},
        },
    }


@dataclass
class AgentRun:
    """One conversation run by the agent loop: its transcript and how it ended."""

    turns: list[Turn]
    content: str | None
    error: str | None = None
    model_calls: int = 0
    duration_s: float = 0.0
    cost: float | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


def _api_message(turn: Turn) -> dict[str, Any]:
    """Return a transcript turn as the endpoint expects it (no bookkeeping fields)."""
    if turn.role == "tool":
        return {"role": "tool", "tool_call_id": turn.tool_call_id, "content": turn.content or ""}
    message: dict[str, Any] = {"role": turn.role, "content": turn.content}
    if turn.tool_calls:
        message["tool_calls"] = [
            {"id": cid, "type": "function", "function": {"name": name, "arguments": args}}
            for cid, name, args in turn.tool_calls
        ]
    return message


def _run_tool(
    tools: Mapping[str, Callable[..., Any]], name: str, arguments: str, timeout_s: float
) -> tuple[str, str | None]:
    """Run one requested tool: (its result as text, an error or None). Never raises.

    The tool runs in a thread of its own, waited on for ``timeout_s``: a tool that never
    returns costs its run that long, and an error, never the whole suite. Whatever it
    returns becomes text that UTF-8 can hold; a result that cannot be written as text is an
    error of that call.
    """
    if name not in tools:
        error = f"no tool named {name!r}; the tools are {sorted(tools)}"
        return f"error: {error}", error
    try:
        args = json.loads(arguments) if arguments.strip() else {}
    except (ValueError, RecursionError) as exc:
        error = f"the arguments are not valid JSON ({exc})"
        return f"error: {error}", error
    if not isinstance(args, dict):
        error = f"the arguments are {type(args).__name__}, expected a JSON object"
        return f"error: {error}", error
    outcome: list[tuple[str, str | None]] = []

    def call() -> None:
        try:
            outcome.append((_as_text(tools[name](**args)), None))
        except Exception as exc:
            try:
                error = f"{type(exc).__name__}: {exc}"[:2000]
            except Exception:
                error = type(exc).__name__
            outcome.append((f"error: {storable(error)}", storable(error)))

    worker = threading.Thread(target=call, name=f"evalnb-tool-{name}"[:60], daemon=True)
    worker.start()
    worker.join(timeout_s)
    if not outcome:
        error = f"the tool {name!r} did not return within tool_timeout_s={timeout_s:g} s"
        return f"error: {error}", error
    text, failed = outcome[0]
    return text[:MAX_RESULT_CHARS], failed


def _as_text(result: object) -> str:
    """Write a tool's result as storable text: a string as it is, else JSON, else its repr."""
    if isinstance(result, str):
        return storable(result)
    try:
        text = json.dumps(result, ensure_ascii=False, default=str)
    except Exception:
        try:
            text = repr(result)
        except Exception:
            text = f"<a {type(result).__name__} that cannot be written as text>"
    return storable(text)


def run_agents(
    client: LLMClient,
    conversations: Sequence[Sequence[dict[str, Any]]],
    tools: Mapping[str, Callable[..., Any]],
    *,
    max_steps: int = 8,
    progress: bool = False,
    tool_timeout_s: float = 60.0,
    **params: Any,  # noqa: ANN401
) -> list[AgentRun]:
    """Run every conversation through the tool-calling loop (see the module docstring).

    Parameters
    ----------
    client
        The endpoint and model.
    conversations
        Each a list of chat messages (``role``, ``content``) to start from.
    tools
        Tool name → Python callable, called with the model's arguments as keywords.
    max_steps
        Model calls at most per conversation; a run still calling tools then ends with an
        error saying so (its transcript is kept).
    progress
        Show the client's progress bar.
    tool_timeout_s
        Seconds one tool call may take; past them the call is an error of its step.
    params
        Request parameters for every model call (``temperature``, ...).
    """
    if max_steps < 1:
        msg = f"max_steps must be at least 1, got {max_steps}"
        raise ValueError(msg)
    specs = [tool_spec(name, fn) for name, fn in tools.items()]
    runs = [
        AgentRun([Turn(str(m["role"]), m.get("content")) for m in conv], None)
        for conv in conversations
    ]
    active = list(range(len(runs)))
    for _ in range(max_steps):
        if not active:
            break
        replies = client.chat_many(
            [[_api_message(t) for t in runs[i].turns] for i in active],
            params={**params, "tools": specs},
            progress=progress,
        )
        still = []
        for i, reply in zip(active, replies, strict=True):
            run = runs[i]
            run.model_calls += 1
            run.duration_s += reply.duration_s or 0.0
            _account(run, reply.cost, reply.prompt_tokens, reply.completion_tokens)
            if reply.error is not None:
                run.error = reply.error
                run.turns.append(
                    Turn("assistant", None, error=reply.error, latency_s=reply.duration_s)
                )
                continue
            calls = [(c["id"], c["name"], c["arguments"]) for c in reply.tool_calls or ()]
            tokens = (reply.prompt_tokens or 0) + (reply.completion_tokens or 0)
            run.turns.append(
                Turn(
                    "assistant",
                    reply.content or None,
                    calls,
                    latency_s=reply.duration_s,
                    cost=reply.cost,
                    tokens=tokens or None,
                )
            )
            if not calls:
                run.content = reply.content
                continue
            for call_id, name, arguments in calls:
                result, error = _run_tool(tools, name, arguments, tool_timeout_s)
                run.turns.append(Turn("tool", result, tool_call_id=call_id, error=error))
            still.append(i)
        active = still
    for i in active:
        runs[
            i
        ].error = (
            f"stopped after max_steps={max_steps} model calls, still calling tools; no final answer"
        )
    return runs


def _account(run: AgentRun, cost: float | None, prompt: int | None, completion: int | None) -> None:
    if cost is not None:
        run.cost = (run.cost or 0.0) + cost
    if prompt is not None:
        run.prompt_tokens = (run.prompt_tokens or 0) + prompt
    if completion is not None:
        run.completion_tokens = (run.completion_tokens or 0) + completion
