"""What every LLM-judge evaluator shares: the base class, its parameters, its prompts' fields.

The judges themselves are H2O's one-word verdict judges
(:mod:`~evalnb.evaluation.families.judges.h2o_judges`), ragas' LLM metrics
(:mod:`~evalnb.evaluation.families.judges.ragas_judges`), the agent judges and the fact
check, all on the shared :class:`~evalnb.llm.client.LLMClient`.

Every row's prompt(s) go out in one concurrent batch through the judge client (cached and
resumable); each reply is parsed, and the row's ``detail`` keeps the raw reply, whether it
parsed, the judge error if the call failed, and tokens and cost — so parse-failure and cost
reports come from the scores table itself. Unparseable replies and failed calls give null
scores with the reason, never a default value.
"""

from __future__ import annotations

import json
from abc import abstractmethod
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from evalnb.evaluation.base import Evaluator, Param, result_frame
from evalnb.llm.judge import Parsed, parse_json
from evalnb.text.language import language_name, row_languages

if TYPE_CHECKING:
    from collections.abc import Mapping

    import polars as pl

    from evalnb.evaluation.base import Context
    from evalnb.llm.client import ChatResult

__all__ = [
    "JudgeEvaluator",
    "Messages",
    "aligned_system",
    "judge_conversation",
    "judge_params",
    "template_fields",
]

_SYSTEM = "You are a careful, impartial evaluator. Follow the output format exactly."
_JUDGE_MODEL = Param(
    "judge_model", str, default="", description="the judge's model name (set from the judge client)"
)
_EXAMPLES = Param(
    "judge_examples",
    str,
    default="",
    description="human-graded examples shown to the judge, JSON (set by Lab.align_judge)",
)
_GUIDANCE = Param(
    "judge_guidance",
    str,
    default="",
    description="extra grading rules for the judge (set by Lab.align_judge)",
)
_JUDGE = (_JUDGE_MODEL, _EXAMPLES, _GUIDANCE)
Messages = list[dict[str, str]]


def judge_params() -> tuple[Param, ...]:
    """Return the parameters every judge evaluator has (model, aligned examples, guidance)."""
    return _JUDGE


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


def judge_conversation(text: str) -> Messages:
    """Return a conversation asking ``text`` under the judges' system message."""
    return [{"role": "system", "content": _SYSTEM}, {"role": "user", "content": text}]


def aligned_system(params: Mapping[str, object]) -> str:
    """Return the system message with an aligned version's rules and human-graded examples."""
    parts = [_SYSTEM]
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


def _in_language(system: str, language: str | None) -> str:
    """Tell the system message the case's language when it is not English."""
    if language in (None, "en"):
        return system
    name = language_name(language)
    return (
        f"{system}\n\nThis case is in {name}. Judge it in {name}: an answer in {name} is "
        f"expected, and it is not a fault that it is not in English."
    )


def _with_system(conversation: Messages, system: str) -> Messages:
    if system == _SYSTEM:
        return conversation
    return [{**m, "content": system} if m["role"] == "system" else m for m in conversation]


class JudgeEvaluator(Evaluator):
    """Base of judge evaluators: prompts per row → one batch of calls → parsed values."""

    judge = True
    params: ClassVar[tuple[Param, ...]] = _JUDGE

    @abstractmethod
    def prompts(self, row: dict[str, Any], params: Mapping[str, object]) -> list[Messages]:
        """Return the conversations to send for one row (empty: the row cannot be judged)."""

    @abstractmethod
    def read(
        self, replies: list[Parsed], row: dict[str, Any], params: Mapping[str, object], ctx: Context
    ) -> dict[str, float | None] | str:
        """Return the metric values from the parsed replies, or why the row has none."""

    def parse(self, text: str | None) -> Parsed:
        """Read one reply (JSON by default)."""
        return parse_json(text)

    def score(self, rows: pl.DataFrame, params: Mapping[str, object], ctx: Context) -> pl.DataFrame:
        """Send every row's prompts in one batch, then parse and compute per row."""
        if ctx.judge is None:
            msg = (
                f"{self.id} needs an LLM judge: evalnb.evaluate(lab, [{self.id!r}], "
                "judge=evalnb.LLMClient(base_url=..., model=...))"
            )
            raise ValueError(msg)
        records = rows.to_dicts()
        aligned = aligned_system(params)
        # A judge told nothing grades a Chinese answer as if English were expected; an
        # English case's prompts stay exactly as they were (and their cached replies valid).
        # Latin-script cases are told only the language set on them: on such text the
        # detector can mistake English for Occitan, and telling a judge so would mislead it.
        languages = row_languages(rows, latin_is_enough=True).to_list()
        asks = [
            [_with_system(c, _in_language(aligned, lang)) for c in self.prompts(r, params)]
            if r["error"] is None
            else []
            for r, lang in zip(records, languages, strict=True)
        ]
        flat = [c for a in asks for c in a]
        results = ctx.judge.chat_many(flat, progress=False) if flat else []
        values: dict[str, list[float | None]] = {m.key: [] for m in self.metrics}
        details: list[str | None] = []
        at = 0
        for row, ask in zip(records, asks, strict=True):
            got = results[at : at + len(ask)]
            at += len(ask)
            out, detail = self._row(row, ask, got, params, ctx)
            for key, column in values.items():
                column.append(out.get(key))
            details.append(json.dumps(detail, ensure_ascii=False))
        return result_frame(rows, {k: np.array(v, dtype=float) for k, v in values.items()}, details)

    def _row(
        self,
        row: dict[str, Any],
        ask: list[Messages],
        got: list[ChatResult],
        params: Mapping[str, object],
        ctx: Context,
    ) -> tuple[dict[str, float | None], dict[str, Any]]:
        costs = [r.cost for r in got if r.cost is not None]
        accounting = {
            "cost": sum(costs) if costs else None,
            "prompt_tokens": sum(r.prompt_tokens or 0 for r in got),
            "completion_tokens": sum(r.completion_tokens or 0 for r in got),
        }
        if row["error"] is not None:
            return {}, {"reason": f"the model host failed to answer: {row['error']}", **accounting}
        if not ask:
            return {}, {"reason": "missing input the judge needs: " + ", ".join(self.requires)}
        errors = [r.error for r in got if r.error]
        if errors:
            return {}, {
                "reason": f"judge call failed: {errors[0]}",
                "judge_error": True,
                **accounting,
            }
        parsed = [self.parse(r.content) for r in got]
        raw = [p.raw for p in parsed]
        failed = [p for p in parsed if not p.ok]
        if failed:
            return self.on_parse_failure(), {
                "reason": f"judge reply not understood: {failed[0].note}",
                "parse_failed": True,
                "raw": raw,
                **accounting,
            }
        out = self.read(parsed, row, params, ctx)
        if isinstance(out, str):
            return self.on_parse_failure(), {
                "reason": out,
                "parse_failed": True,
                "raw": raw,
                **accounting,
            }
        return out, {"raw": raw, "parse_failed": False, **accounting}

    def on_parse_failure(self) -> dict[str, float | None]:
        """Values recorded when the reply cannot be read (none by default)."""
        return {}
