"""LLM-judged agent metrics: goal accuracy (with or without a reference) and topic adherence.

The judge sees the whole run rendered compactly (:func:`render_trajectory`): each message on a
line, each tool call with its arguments, each result with its error, long texts cut. Replies
are JSON checked against a schema; a reply that is not is counted as a parse failure with the
raw text kept, as for every judge. These are our own prompts, not ragas': the names say what
is judged, not whose numbers they are.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, ClassVar

from evalnb.evaluation.base import MetricSpec, Param, register, threshold_param
from evalnb.evaluation.families.judges.framework import JudgeEvaluator, judge_params

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from evalnb.evaluation.base import Context
    from evalnb.evaluation.families.judges.prompts import Messages
    from evalnb.llm.parsed import Parsed

__all__ = ["AgentGoalAccuracy", "TopicAdherence", "render_trajectory"]

_TEXT_CHARS = 1_500  # of one message in the rendering
_RUN_CHARS = 40_000  # of the whole rendering (the start and the end are kept)
_SYSTEM = "You are a careful, impartial evaluator of AI agents. Follow the output format exactly."


def _cut(text: str | None, limit: int = _TEXT_CHARS) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def render_trajectory(steps: Sequence[Mapping[str, Any]] | None) -> str:
    """Render the run a line a step: messages, tool calls with arguments, results, errors."""
    lines = []
    for s in steps or ():
        role, name = s.get("role"), s.get("tool_name")
        if role == "tool":
            continue  # shown with the call it answers
        if name is not None:
            line = f"[{role} calls tool] {name}({_cut(s.get('tool_args'), 500)})"
            result = s.get("tool_result")
            line += f"\n  [tool result] {_cut(result)}" if result is not None else ""
            line += f"\n  [tool error] {_cut(s.get('error'), 300)}" if s.get("error") else ""
            if s.get("content"):
                line = f"[{role}] {_cut(s.get('content'))}\n" + line
        else:
            line = f"[{role}] {_cut(s.get('content'))}"
        lines.append(line)
    text = "\n".join(lines)
    if len(text) > _RUN_CHARS:
        half = _RUN_CHARS // 2
        text = text[:half] + "\n[… middle of the run left out …]\n" + text[-half:]
    return text


def _ask(text: str) -> Messages:
    return [{"role": "system", "content": _SYSTEM}, {"role": "user", "content": text}]


_GOAL_SCHEMA = {
    "type": "object",
    "required": ["user_goal", "end_state", "achieved"],
    "properties": {
        "user_goal": {"type": "string"},
        "end_state": {"type": "string"},
        "achieved": {"type": "boolean"},
        "reason": {"type": "string"},
    },
}

_GOAL_WITH_REFERENCE = """Below is a conversation between a user and an AI agent that can call tools.

{run}

The outcome the user should have reached (the reference):
{reference}

State the user's goal, then the end state the conversation actually reached (what was done,
answered or booked, judging by the tool results, not by what the agent claims). Then decide
whether that end state achieves the reference outcome.
Reply with one JSON object: {{"user_goal": "...", "end_state": "...", "achieved": true or false,
"reason": "one sentence"}}"""

_GOAL_WITHOUT_REFERENCE = """Below is a conversation between a user and an AI agent that can call tools.

{run}

State the user's goal, then the end state the conversation actually reached (what was done,
answered or booked, judging by the tool results, not by what the agent claims). Then decide
whether that end state achieves the user's goal.
Reply with one JSON object: {{"user_goal": "...", "end_state": "...", "achieved": true or false,
"reason": "one sentence"}}"""


@register
class AgentGoalAccuracy(JudgeEvaluator):
    """Whether the run reached the user's goal (or the reference outcome), as a judge sees it."""

    id = "agent_goal_accuracy"
    title = "Agent goal accuracy (judge)"
    domain = "agents"
    description = (
        "An LLM judge reads the whole run (messages, tool calls, results), states the user's "
        "goal and the end state reached, and decides whether the end state achieves the "
        "expected outcome (with_reference) or the goal: 1 or 0."
    )
    requires = ("actual",)
    trajectory = True
    metrics = (
        MetricSpec(
            "agent_goal_accuracy",
            "Agent goal accuracy",
            "1 when the run reached the goal.",
            threshold=0.5,
            primary=True,
        ),
    )
    params: ClassVar[tuple[Param, ...]] = (
        *judge_params(),
        Param(
            "with_reference",
            bool,
            default=True,
            description="compare the end state with the case's expected answer",
        ),
        threshold_param(0.5, "agent_goal_accuracy"),
    )

    def prompts(self, row: dict[str, Any], params: Mapping[str, object]) -> list[Messages]:
        """One conversation: the rendered run (and the reference outcome)."""
        run = (
            render_trajectory(row.get("steps"))
            or f"[user] {_cut(row.get('prompt'))}\n[assistant] {_cut(row.get('actual'))}"
        )
        if not params["with_reference"]:
            return [_ask(_GOAL_WITHOUT_REFERENCE.format(run=run))]
        reference = "\n".join(row.get("expected") or [])
        if not reference:
            return []
        return [_ask(_GOAL_WITH_REFERENCE.format(run=run, reference=_cut(reference, 4000)))]

    def reply_schema(self, params: Mapping[str, object]) -> dict[str, Any] | None:
        """Return the schema of the JSON reply (the judge's reply is read against it)."""
        del params
        return _GOAL_SCHEMA

    def read(
        self, replies: list[Parsed], row: dict[str, Any], params: Mapping[str, object], ctx: Context
    ) -> dict[str, float | None] | str:
        """1.0 when achieved."""
        return {"agent_goal_accuracy": float(bool(replies[0].value["achieved"]))}


_TOPIC_SCHEMA = {
    "type": "object",
    "required": ["answers"],
    "properties": {
        "answers": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["topic", "on_topic"],
                "properties": {"topic": {"type": "string"}, "on_topic": {"type": "boolean"}},
            },
        }
    },
}

_TOPICS = """Below is a conversation between a user and an AI agent that can call tools. The
agent may only talk about these topics: {topics}.

{run}

For each answer the agent gave the user (each [assistant] line with text), name its topic and
say whether it stays within the allowed topics (a polite refusal of an off-topic request stays
within them).
Reply with one JSON object: {{"answers": [{{"topic": "...", "on_topic": true or false}}, ...]}}"""


@register
class TopicAdherence(JudgeEvaluator):
    """The share of the agent's answers that keep to the allowed topics."""

    id = "topic_adherence"
    title = "Topic adherence (judge)"
    domain = "agents"
    description = (
        "An LLM judge labels each answer the agent gave with its topic and whether it keeps to "
        "the allowed topics (the case's reference_topics, else the topics parameter); the "
        "score is the share that does."
    )
    requires = ("actual",)
    trajectory = True
    metrics = (
        MetricSpec(
            "topic_adherence",
            "Topic adherence",
            "Share of the agent's answers within the allowed topics.",
            threshold=0.75,
            primary=True,
        ),
    )
    params: ClassVar[tuple[Param, ...]] = (
        *judge_params(),
        Param(
            "topics",
            str,
            default="",
            description="allowed topics, comma-separated, for cases without reference_topics",
        ),
        threshold_param(0.75, "topic_adherence"),
    )

    def prompts(self, row: dict[str, Any], params: Mapping[str, object]) -> list[Messages]:
        """One conversation: the run and the allowed topics (none known: not judged)."""
        topics = _case_topics(row) or [
            t.strip() for t in str(params["topics"]).split(",") if t.strip()
        ]
        run = render_trajectory(row.get("steps"))
        if not topics or not run:
            return []
        return [_ask(_TOPICS.format(topics="; ".join(topics), run=run))]

    def reply_schema(self, params: Mapping[str, object]) -> dict[str, Any] | None:
        """Return the schema of the JSON reply (the judge's reply is read against it)."""
        del params
        return _TOPIC_SCHEMA

    def read(
        self, replies: list[Parsed], row: dict[str, Any], params: Mapping[str, object], ctx: Context
    ) -> dict[str, float | None] | str:
        """Return the share on topic; a reply listing no answer is not understood."""
        answers = replies[0].value["answers"]
        if not answers:
            return "the judge listed no answer of the agent"
        return {"topic_adherence": sum(bool(a["on_topic"]) for a in answers) / len(answers)}


def _case_topics(row: Mapping[str, Any]) -> list[str]:
    """Return the case's ``reference_topics`` (ragas' field, kept in the case's extra)."""
    try:
        extra = json.loads(row.get("case_extra") or "{}")
    except ValueError:
        return []
    topics = extra.get("reference_topics") if isinstance(extra, dict) else None
    return [str(t) for t in topics] if isinstance(topics, list) else []
