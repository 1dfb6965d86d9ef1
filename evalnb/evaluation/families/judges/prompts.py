"""What a judge is told: the system message, the reply formats asked for, the row's fields.

Pure functions of text and parameters, shared by every judge family and by judge alignment
(:mod:`evalnb.calibration.alignment`, whose aligned versions add rules and human-graded
examples to the system message). The base class that sends them is
:mod:`~evalnb.evaluation.families.judges.framework`.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from evalnb.text.language import language_name

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = [
    "REPAIR",
    "SYSTEM",
    "Messages",
    "aligned_system",
    "in_language",
    "judge_conversation",
    "require_placeholder",
    "score_property",
    "score_schema",
    "template_fields",
    "verdict_hint",
    "verdict_schema",
    "with_hint",
    "with_parts",
    "with_system",
]

SYSTEM = "You are a careful, impartial evaluator. Follow the output format exactly."
# A chat: each message's content is text, or (a message with media) a list of content parts.
Messages = list[dict[str, Any]]


def verdict_schema(classes: tuple[str, ...], field: str = "verdict") -> dict[str, Any]:
    """Return the JSON schema of a one-word verdict given as ``{field: <class word>}``."""
    return {
        "type": "object",
        "properties": {field: {"type": "string", "enum": list(classes)}},
        "required": [field],
        "additionalProperties": False,
    }


def verdict_hint(classes: tuple[str, ...], field: str = "verdict") -> str:
    """Return the words asking for a verdict as ``{field: <class word>}``."""
    options = " or ".join(json.dumps(c) for c in classes)
    return (
        f'Give that word as the value of "{field}" in one JSON object, and nothing else: '
        f'{{"{field}": {options}}}'
    )


def score_property(low: float, high: float) -> dict[str, Any]:
    """Return the JSON schema of one score in ``[low, high]``.

    Whole-number scales list their values (``enum``): grammar-constrained servers enforce an
    enumeration exactly, while some ignore ``minimum`` / ``maximum`` (llama.cpp let an 11 on
    a 1–10 scale through).
    """
    if float(low).is_integer() and float(high).is_integer() and high - low <= 100:
        return {"type": "integer", "enum": list(range(int(low), int(high) + 1))}
    return {"type": "number", "minimum": low, "maximum": high}


def score_schema(low: float, high: float, field: str = "score") -> dict[str, Any]:
    """Return the JSON schema of a score in ``[low, high]`` given as ``{field: <number>}``."""
    return {
        "type": "object",
        "properties": {field: score_property(low, high)},
        "required": [field],
        "additionalProperties": False,
    }


def template_fields(row: dict[str, Any]) -> dict[str, Any]:
    """Template fields of a row: H2O's placeholder names, ours, and user-defined fields."""
    extra: dict[str, Any] = {}
    for blob in (row.get("case_extra"), row.get("output_extra")):
        if blob:
            try:
                parsed = json.loads(blob)
            except ValueError:
                parsed = None
            if isinstance(parsed, dict):
                extra.update(
                    {str(k): v if isinstance(v, str) else json.dumps(v) for k, v in parsed.items()}
                )
    expected = "\n".join(row.get("expected") or [])
    context = "\n".join(row.get("context") or [])
    return {
        **extra,
        "INPUT": row.get("prompt") or "",
        "EXPECTED_OUTPUT": expected,
        "ACTUAL_OUTPUT": row.get("actual") or "",
        "CONTEXT": context,
        "question": row.get("prompt") or "",
        "expected": expected,
        "answer": row.get("actual") or "",
        "context": context,
    }


def require_placeholder(template: str, what: str, example: str) -> None:
    """Refuse a user's prompt template without a ``{field}``: it would judge nothing of the row."""
    if not re.search(r"\{[A-Za-z_]\w*\}", template):
        msg = f"{what} needs at least one placeholder of the row's fields, e.g. '{example}'"
        raise ValueError(msg)


def judge_conversation(text: str) -> Messages:
    """Return a conversation asking ``text`` under the judges' system message."""
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": text}]


def aligned_system(params: Mapping[str, object]) -> str:
    """Return the system message with an aligned version's rules and human-graded examples."""
    parts = [SYSTEM]
    guidance = str(params.get("judge_guidance") or "")
    if guidance:
        parts.append("Grading rules agreed with the human reviewers:\n" + guidance)
    examples = json.loads(str(params.get("judge_examples") or "[]"))
    if examples:
        shown = "\n\n".join(
            f"[Example {i}]\n[Question]\n{e['question']}\n[Answer]\n{e['answer']}\n"
            f"[Human reviewers' verdict] {e['verdict']}"
            for i, e in enumerate(examples, 1)
        )
        parts.append("Answers graded by human reviewers, to grade like them:\n\n" + shown)
    return "\n\n".join(parts)


def in_language(system: str, language: str | None) -> str:
    """Tell the system message the case's language when it is not English."""
    if language in (None, "en"):
        return system
    name = language_name(language)
    return (
        f"{system}\n\nThis case is in {name}. Judge it in {name}: an answer in {name} is "
        f"expected, and it is not a fault that it is not in English."
    )


def with_system(conversation: Messages, system: str) -> Messages:
    """Return the conversation under ``system`` instead of the judges' own system message."""
    if system == SYSTEM:
        return conversation
    return [{**m, "content": system} if m["role"] == "system" else m for m in conversation]


# Asked once of a judge whose reply could not be read: the reason, then the format again.
REPAIR = "Your reply could not be read ({reason}). Answer the same question again. {hint}"


def with_hint(conversation: Messages, hint: str) -> Messages:
    """Append the format hint to the last user message (the contract's words to the model)."""
    if not hint:
        return conversation
    last = max(i for i, m in enumerate(conversation) if m["role"] == "user")
    return [
        {**m, "content": f"{m['content']}\n\n{hint}"} if i == last else m
        for i, m in enumerate(conversation)
    ]


def with_parts(conversation: Messages, parts: list[dict[str, Any]]) -> Messages:
    """Attach media ``parts`` to the last user message (its text first, as a text part)."""
    if not parts:
        return conversation
    last = max(i for i, m in enumerate(conversation) if m["role"] == "user")
    return [
        {**m, "content": [{"type": "text", "text": m["content"]}, *parts]} if i == last else m
        for i, m in enumerate(conversation)
    ]
