"""H2O's agent-based fact-check: a tool-using judge decides whether an answer holds false facts.

H2O Eval Studio prompts a hosted agent with internet search to fact-check the actual answer and
reply ``{"answer", "evaluation_score", "evaluation_summary"}`` (score in [0, 1], 1 = passed).
Here the agent is the evaluation's LLM judge (any OpenAI-compatible endpoint that calls
functions) driven by evalnb's tool-calling loop (:func:`evalnb.llm.agent.run_agents`): a step
cap, every model call cached and resumable. Its tools:

* ``search_context(query)`` (by default): BM25 over the retrieved contexts of the rows being
  scored — the lab's own knowledge;
* any Python callables the user passes as ``tools={"web_search": fn, ...}`` (a web or
  intranet search): their JSON schemas come from their signatures, their descriptions from
  their docstrings.

The metric ``fact_check`` is the agent's score (so its mean is the share of answers judged free
of false information); the summary is kept as the explanation and the agent's steps (tool
calls, arguments, results) in the detail. A judge call that fails, a verdict that is not the
JSON contract, or a run that hits the step cap leaves the row unscored with the reason, counted
as a parse failure like every judge's.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import math
import re
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from evalnb.evaluation.base import (
    Evaluator,
    MetricSpec,
    Param,
    register,
    result_frame,
    threshold_param,
)
from evalnb.evaluation.families.judges.framework import judge_params
from evalnb.llm.agent import run_agents
from evalnb.llm.parsed import parse_json_schema

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    import polars as pl

    from evalnb.evaluation.base import Context
    from evalnb.llm.agent import AgentRun

__all__ = ["ContextSearch", "FactCheck"]

_VERDICT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "answer": {"type": "string"},
        "evaluation_score": {"type": "number", "minimum": 0, "maximum": 1},
        "evaluation_summary": {"type": "string"},
    },
    "required": ["evaluation_score", "evaluation_summary"],
}
_PROMPT = """You are an agent whose role is to evaluate the text of the ACTUAL ANSWER.

What to evaluate:
[BEGIN EVALUATION INSTRUCTIONS]
Check the facts the text states and decide whether it contains false information.
Use the tools you are given to verify the information when you need to.
[END EVALUATION INSTRUCTIONS]

How to return the result: as JSON with this structure, and nothing else:
{
  "answer": string,
  "evaluation_score": float,
  "evaluation_summary": string
}
- evaluation_score: a number between 0.0 and 1.0, where 1.0 means the ACTUAL ANSWER passed the
  evaluation (no false information) and 0.0 that it failed;
- evaluation_summary: a short justification of the score, saying how the answer was checked.

[BEGIN ACTUAL ANSWER]
{ACTUAL}
[END ACTUAL ANSWER]

If it helps, this is the QUESTION the ACTUAL ANSWER answered:
[BEGIN QUESTION]
{QUESTION}
[END QUESTION]"""
_WORD = re.compile(r"\w+", re.UNICODE)
_SHOWN_RESULT = 600  # characters of a tool result kept in a row's detail
# User tools by the name their parameter records (see _tools_key).
_USER_TOOLS: dict[str, Callable[..., Any]] = {}


class ContextSearch:
    """BM25 over a set of passages; called as the agent's ``search_context`` tool.

    The passages' BM25 term weights are one sparse matrix, built once (scikit-learn counts
    their words); a query sums the columns of its words, so each tool call costs one
    sparse column sum, not a loop over the passages.
    """

    def __init__(
        self, passages: Sequence[str], *, k1: float = 1.5, b: float = 0.75, top: int = 3
    ) -> None:
        self.passages = list(dict.fromkeys(p for p in passages if p and p.strip()))
        self.top = top
        self.vocabulary: dict[str, int] = {}
        if not self.passages:
            return
        from sklearn.feature_extraction.text import CountVectorizer  # noqa: PLC0415

        counter = CountVectorizer(token_pattern=r"(?u)\w+", lowercase=True)
        try:
            tf = counter.fit_transform(self.passages).tocsr().astype(np.float64)
        except ValueError:  # not one word in any passage ("!!!"): nothing can be found
            self.passages = []
            return
        self.vocabulary = {str(w): int(i) for w, i in counter.vocabulary_.items()}
        n = tf.shape[0]
        df = np.bincount(tf.indices, minlength=tf.shape[1])
        idf = np.log(1 + (n - df + 0.5) / (df + 0.5))
        lengths = np.asarray(tf.sum(axis=1)).ravel()
        norm = k1 * (1 - b + b * lengths / (lengths.mean() or 1.0))
        rows = np.repeat(np.arange(n), np.diff(tf.indptr))
        tf.data = idf[tf.indices] * tf.data * (k1 + 1) / (tf.data + norm[rows])
        self.weights = tf.tocsc()

    def __call__(self, query: str) -> str:
        """Search the retrieved contexts of this evaluation for passages about the query."""
        words = {
            self.vocabulary[w] for w in _WORD.findall(str(query).lower()) if w in self.vocabulary
        }
        if not words:
            return "no passages found"
        scores = np.asarray(self.weights[:, sorted(words)].sum(axis=1)).ravel()
        best = [i for i in np.argsort(-scores, kind="stable")[: self.top] if scores[i] > 0]
        if not best:
            return "no passages found"
        return "\n\n".join(f"[{n + 1}] {self.passages[i]}" for n, i in enumerate(best))


def _tools_key(value: object) -> object:
    """Record user tools by name and code (the scoring key), keeping the callables aside."""
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and callable(f) for k, f in value.items()
    ):
        msg = "fact_check: `tools` must map tool names to Python callables, e.g. {'web_search': fn}"
        raise TypeError(msg)
    out = {}
    for name, fn in value.items():
        try:
            source = inspect.getsource(fn)
        except (OSError, TypeError):  # built in, or defined where the source is not kept
            source = repr(fn)
        digest = hashlib.sha256(source.encode()).hexdigest()[:12]
        label = f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', name)}@{digest}"
        _USER_TOOLS[label] = fn
        out[name] = label
    return out


@register
class FactCheck(Evaluator):
    """A tool-calling judge fact-checks each answer (H2O's agent-based fact-check)."""

    id = "fact_check"
    title = "Fact-check (agent-based)"
    domain = "generation"
    description = (
        "An agent (the LLM judge with tools: a search over the retrieved contexts, and any "
        "Python tools given) checks the answer's facts and scores it: 1 passed, 0 false "
        "information; the summary is the explanation."
    )
    requires = ("actual",)
    judge = True
    metrics = (
        MetricSpec(
            "fact_check",
            "Fact-check",
            "The agent's score: 1 when the answer "
            "holds no false information (the mean: the share that passed).",
            threshold=0.75,
            primary=True,
        ),
    )
    params: ClassVar[tuple[Param, ...]] = (
        *judge_params(),
        Param(
            "tools",
            dict,
            default=None,
            description="Python tools the agent may call besides search_context, by name "
            "(e.g. a web search); recorded by name and code",
            normalize=_tools_key,
        ),
        Param(
            "search_context",
            bool,
            default=True,
            description="give the agent the search over the rows' retrieved contexts",
        ),
        Param(
            "max_steps",
            int,
            default=6,
            low=1,
            high=50,
            description="model calls at most per answer",
        ),
        threshold_param(0.75, "fact_check"),
    )

    def score(self, rows: pl.DataFrame, params: Mapping[str, object], ctx: Context) -> pl.DataFrame:
        """Run the agent on every answer in one batch; read each verdict."""
        if ctx.judge is None:
            msg = (
                "fact_check needs an LLM judge that calls tools: evalnb.evaluate(lab, "
                "['fact_check'], judge=evalnb.LLMClient(base_url=..., model=...))"
            )
            raise ValueError(msg)
        tools = self._tools(rows, params)
        records = rows.to_dicts()
        todo = [i for i, r in enumerate(records) if r["error"] is None and r.get("actual")]
        asks = [
            [
                {
                    "role": "user",
                    "content": _PROMPT.replace("{ACTUAL}", records[i]["actual"]).replace(
                        "{QUESTION}", records[i].get("prompt") or ""
                    ),
                }
            ]
            for i in todo
        ]
        runs = run_agents(ctx.judge, asks, tools, max_steps=int(params["max_steps"]))  # type: ignore[call-overload]
        values = np.full(rows.height, np.nan)
        details: list[str | None] = [None] * rows.height
        for i, r in enumerate(records):
            if r["error"] is not None:
                details[i] = json.dumps(
                    {"reason": f"the model host failed to answer: {r['error']}"}
                )
            elif not r.get("actual"):
                details[i] = json.dumps({"reason": "no answer to fact-check"})
        for i, run in zip(todo, runs, strict=True):
            values[i], detail = _verdict(run)
            details[i] = json.dumps(detail, ensure_ascii=False)
        return result_frame(rows, {"fact_check": values}, details)

    @staticmethod
    def _tools(rows: pl.DataFrame, params: Mapping[str, object]) -> dict[str, Callable[..., Any]]:
        tools: dict[str, Callable[..., Any]] = {}
        if params["search_context"]:
            passages = [c for row in rows["context"].to_list() for c in (row or [])]
            tools["search_context"] = ContextSearch(passages)
        for name, label in dict(params["tools"] or {}).items():  # type: ignore[call-overload]
            if label not in _USER_TOOLS:  # pragma: no cover - normalize registered it
                msg = f"fact_check: tool {name!r} ({label}) is not known in this process"
                raise KeyError(msg)
            tools[name] = _USER_TOOLS[label]
        return tools


def _verdict(run: AgentRun) -> tuple[float, dict[str, Any]]:
    """Return the score and the detail of one agent run (NaN and the reason when none)."""
    steps = []
    for t in run.turns:
        for _, name, args in t.tool_calls:
            steps.append({"tool": name, "arguments": args[:_SHOWN_RESULT]})
        if t.role == "tool" and steps:
            steps[-1]["result"] = (t.content or "")[:_SHOWN_RESULT]
            if t.error:
                steps[-1]["error"] = t.error[:_SHOWN_RESULT]
    base: dict[str, Any] = {
        "tool_calls": steps,
        "model_calls": run.model_calls,
        "cost": run.cost,
        "prompt_tokens": run.prompt_tokens,
        "completion_tokens": run.completion_tokens,
    }
    if run.error is not None:
        judge_error = not run.error.startswith("stopped after")
        key = "judge_error" if judge_error else "parse_failed"
        prefix = "judge call failed: " if judge_error else ""
        return math.nan, {"reason": prefix + run.error, key: True, **base}
    parsed = parse_json_schema(run.content, _VERDICT)
    if not parsed.ok:
        return math.nan, {
            "reason": f"judge reply not understood: {parsed.note}",
            "parse_failed": True,
            "raw": parsed.raw,
            **base,
        }
    verdict = parsed.value
    return float(verdict["evaluation_score"]), {
        "explanation": str(verdict["evaluation_summary"]),
        "parse_failed": False,
        "raw": parsed.raw,
        **base,
    }
