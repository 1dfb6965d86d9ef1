"""Model hosts → test lab: send every case to every model and record the answers.

``run_suite(lab, client, models=[...])`` asks each model (through one OpenAI-compatible
client; the model name changes per call) for each case's prompt — with the case's system
prompt and earlier messages when it has them — ``n`` times, and fills ``outputs`` with the
answer, the retrieved passages when the endpoint returns them, duration, cost and tokens.
``answer_with(lab, f, name)`` does the same with a Python function as the system. A call that fails after its retries is recorded as an
output with ``error`` set, never dropped; answers already in the lab are not asked again.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import polars as pl
from tqdm.auto import tqdm

from evalnb.lab.core import LabCore
from evalnb.lab.schema import SCHEMAS
from evalnb.llm.agent import run_agents, steps_of
from evalnb.llm.callables import ask_callable

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from pathlib import Path

    from evalnb.llm.client import LLMClient

__all__ = ["StopRule", "answer_with", "run_suite"]

# The lab comes back as the class it came in (a user's evalnb.Lab stays one).
L = TypeVar("L", bound=LabCore)


class StopRule(Protocol):
    """What ``run_suite(until=...)`` takes: :class:`evalnb.analysis.sequential.Sequential`."""

    def order(self, cases: pl.DataFrame) -> list[list[str]]:
        """Return the case ids to ask, batch by batch."""
        ...

    def check(self, lab: L, *, asked: int, total: int, calls_per_case: int) -> tuple[L, bool]:
        """Score what has arrived; return the scored lab and whether the run may stop."""
        ...

    def explain(self) -> str:
        """Return what the rule decided, and what stopping saved."""
        ...


def _conversation(case: dict[str, Any]) -> list[dict[str, str]]:
    messages: list[dict[str, str]] = []
    if case.get("system"):
        messages.append({"role": "system", "content": case["system"]})
    if case.get("messages"):
        try:
            earlier = json.loads(case["messages"])
        except ValueError:
            earlier = []
        # the stored chat ends with the question itself: keep the turns before it
        messages += [
            {"role": m["role"], "content": m["content"]}
            for m in earlier
            if isinstance(m, dict) and m.get("role") in ("system", "user", "assistant")
        ]
        if messages and messages[-1]["role"] == "user":
            return messages
    messages.append({"role": "user", "content": case.get("prompt") or ""})
    return messages


def run_suite(
    lab: L,
    client: LLMClient,
    models: Sequence[str],
    *,
    n: int = 1,
    progress: bool = True,
    cases: Sequence[str] | None = None,
    tools: Mapping[str, Callable[..., Any]] | None = None,
    max_steps: int = 8,
    tool_timeout_s: float = 60.0,
    until: StopRule | None = None,
    **params: Any,  # noqa: ANN401
) -> L:
    """Ask every model every case ``n`` times; return the lab with the answers in ``outputs``.

    ``params`` go with every call (e.g. ``temperature=0.7`` to sample ``n`` answers). With
    ``n > 1`` and ``temperature`` 0, a cached reply would repeat: each sample index is sent
    as a distinct request (``"sample"`` in the parameters) so they are independent.
    ``cases``: ask only these case ids.

    With ``tools`` (name → Python callable) each model runs as an agent: it may call the
    tools, up to ``max_steps`` model calls a case (:func:`evalnb.llm.agent.run_agents`); every
    message and tool call goes to the lab's ``steps`` table and the final answer to
    ``outputs``, ready for the agent evaluators. A tool call taking longer than
    ``tool_timeout_s`` seconds is an error of its step; the run goes on.

    ``until``: a stopping rule (``evalnb.decisions.sequential(...)`` or ``lab.decisions.rule(...)``). The
    cases are then asked a batch at a time in the rule's seeded random order; after each
    batch the rule scores the answers and the run stops once its verdict is settled. The lab
    comes back scored by the rule's evaluator; ``print(rule)`` says what was decided and how
    many calls stopping saved.
    """
    if until is not None:
        return _run_until(
            lab,
            client,
            models,
            until,
            n=n,
            progress=progress,
            cases=cases,
            tools=tools,
            max_steps=max_steps,
            tool_timeout_s=tool_timeout_s,
            params=params,
        )
    if tools is not None:
        return _run_agents(
            lab,
            client,
            models,
            tools,
            max_steps=max_steps,
            tool_timeout_s=tool_timeout_s,
            n=n,
            progress=progress,
            cases=cases,
            params=params,
        )
    asked = _asked(lab, cases)
    have = set(lab.outputs.select("case_id", "model", "sample").iter_rows())
    rows: list[dict[str, Any]] = []
    for model in models:
        asker = client.with_settings(model=model)
        todo = [(c, s) for c in asked for s in range(n) if (c["case_id"], model, s) not in have]
        convs = [_conversation(c) for c, _ in todo]
        per_sample: dict[int, list[int]] = {}
        for i, (_, s) in enumerate(todo):
            per_sample.setdefault(s, []).append(i)
        results: list[Any] = [None] * len(todo)
        for s, idx in per_sample.items():
            extra = {**params, "sample": s} if n > 1 else dict(params)
            got = asker.chat_many([convs[i] for i in idx], params=extra, progress=progress)
            for i, r in zip(idx, got, strict=True):
                results[i] = r
        rows += _rows(todo, model, results)
    return _with_outputs(lab, rows, models)


def _run_until(
    lab: L,
    client: LLMClient,
    models: Sequence[str],
    until: StopRule,
    *,
    n: int,
    progress: bool,
    cases: Sequence[str] | None,
    params: dict[str, Any],
    **agents: Any,  # noqa: ANN401 (tools, max_steps, tool_timeout_s as run_suite takes them)
) -> L:
    asked = lab.cases if cases is None else lab.cases.filter(pl.col("case_id").is_in(list(cases)))
    done = 0
    with tqdm(total=asked.height, disable=not progress, desc="run_suite until settled") as bar:
        for batch in until.order(asked):
            lab = run_suite(
                lab, client, models, n=n, progress=False, cases=batch, **agents, **params
            )
            done += len(batch)
            lab, stop = until.check(
                lab, asked=done, total=asked.height, calls_per_case=len(models) * n
            )
            bar.update(len(batch))
            bar.set_postfix_str(until.explain().partition(": ")[2][:80])
            if stop:
                break
    return lab


def _run_agents(
    lab: L,
    client: LLMClient,
    models: Sequence[str],
    tools: Mapping[str, Callable[..., Any]],
    *,
    max_steps: int,
    tool_timeout_s: float,
    n: int,
    progress: bool,
    cases: Sequence[str] | None,
    params: dict[str, Any],
) -> L:
    asked = _asked(lab, cases)
    have = set(lab.outputs.select("case_id", "model", "sample").iter_rows())
    rows: list[dict[str, Any]] = []
    steps: list[dict[str, Any]] = []
    for model in models:
        asker = client.with_settings(model=model)
        for s in range(n):
            todo = [c for c in asked if (c["case_id"], model, s) not in have]
            extra = {**params, "sample": s} if n > 1 else dict(params)
            runs = run_agents(
                asker,
                [_conversation(c) for c in todo],
                tools,
                max_steps=max_steps,
                progress=progress,
                tool_timeout_s=tool_timeout_s,
                **extra,
            )
            for case, run in zip(todo, runs, strict=True):
                run_steps, _ = steps_of(run.turns, case["case_id"], model, s)
                steps += run_steps
                rows.append(
                    {
                        "case_id": case["case_id"],
                        "model": model,
                        "sample": s,
                        "actual": run.content,
                        "context": [],
                        "duration_s": run.duration_s,
                        "cost": run.cost,
                        "error": run.error,
                        "extra": json.dumps(
                            {
                                "prompt_tokens": run.prompt_tokens,
                                "completion_tokens": run.completion_tokens,
                                "model_calls": run.model_calls,
                            }
                        ),
                    }
                )
    new = pl.DataFrame(steps, schema=SCHEMAS["steps"])
    # Answers and their steps land in one transaction: never answers without their steps.
    return _with_outputs(lab, rows, models, also={"steps": pl.concat([lab.table("steps"), new])})


def _rows(
    todo: list[tuple[dict[str, Any], int]], model: str, results: list[Any]
) -> list[dict[str, Any]]:
    return [
        {
            "case_id": case["case_id"],
            "model": model,
            "sample": s,
            "actual": r.content,
            "context": list(r.contexts or []),
            "duration_s": r.duration_s,
            "cost": r.cost,
            "error": r.error,
            "extra": json.dumps(
                {"prompt_tokens": r.prompt_tokens, "completion_tokens": r.completion_tokens}
            ),
        }
        for (case, s), r in zip(todo, results, strict=True)
    ]


def _with_outputs(
    lab: L,
    rows: list[dict[str, Any]],
    models: Sequence[str],
    *,
    also: Mapping[str, pl.DataFrame] | None = None,
) -> L:
    new = (
        pl.DataFrame(rows, schema=SCHEMAS["outputs"])
        if rows
        else pl.DataFrame(schema=SCHEMAS["outputs"])
    )
    outputs = pl.concat([lab.outputs, new])
    models_table = pl.concat(
        [
            lab.model_table,
            pl.DataFrame(
                {"model": [m for m in models if m not in set(lab.model_table["model"])]},
                schema={"model": pl.String},
            ).with_columns(key=pl.col("model"), meta=pl.lit(None, pl.String)),
        ]
    )
    return lab.with_tables({"outputs": outputs, "models": models_table, **(also or {})})


def _asked(lab: LabCore, ids: Sequence[str] | None) -> list[dict[str, Any]]:
    cases = lab.cases if ids is None else lab.cases.filter(pl.col("case_id").is_in(list(ids)))
    return cases.to_dicts()


def answer_with(
    lab: L,
    system: Callable[[str], Any],
    name: str,
    *,
    cache: Path | None = None,
    concurrency: int = 8,
    max_retries: int = 2,
    progress: bool = True,
    cases: Sequence[str] | None = None,
) -> L:
    """Ask a Python function every case's prompt; return the lab with its answers as ``name``'s.

    ``system(prompt)`` returns the answer, ``(answer, contexts)`` or a dict of them, plain
    or ``async``; see :func:`evalnb.llm.callables.ask_callable` for concurrency, retries and
    the ``cache`` file that makes a rerun ask no case twice. Answers already in the lab are
    not asked again; a case whose calls all failed gets an output row with its ``error``.
    ``cases``: ask only these case ids.
    """
    have = set(lab.outputs.filter(pl.col("model") == name)["case_id"].to_list())
    todo = [(c, 0) for c in _asked(lab, cases) if c["case_id"] not in have]
    results = ask_callable(
        system,
        [c.get("prompt") or "" for c, _ in todo],
        name=name,
        cache=cache,
        concurrency=concurrency,
        max_retries=max_retries,
        progress=progress,
    )
    return _with_outputs(lab, _rows(todo, name, results), [name])
