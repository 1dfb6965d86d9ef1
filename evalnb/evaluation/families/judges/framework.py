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

A row's media (the case's, the answer's, the contexts') go with its prompts as OpenAI
content parts on the last user message, by the rule of :mod:`evalnb.media.policy`; the
``media`` parameter says when: ``"auto"`` when the judge's server takes images (probed),
``"none"`` never, ``"required"`` or the row is not judged (a verdict on a text shadow of
the input is no verdict on the input). The detail names what was sent and what was left out
and why; the rule joins the fingerprint of every verdict that saw media.
"""

from __future__ import annotations

import hashlib
import json
from abc import abstractmethod
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from evalnb.evaluation.base import Evaluator, Param, result_frame
from evalnb.evaluation.families.judges.prompts import (
    REPAIR,
    Messages,
    aligned_system,
    in_language,
    with_hint,
    with_parts,
    with_system,
)
from evalnb.llm.batch import PENDING
from evalnb.llm.budget import REFUSED
from evalnb.llm.contract import MODES, constraint_params, negotiate, reply_text
from evalnb.llm.parsed import Parsed
from evalnb.llm.reader import READER_VERSION, read_object
from evalnb.llm.tokens import approximate_tokens
from evalnb.media.policy import DEFAULT_POLICY
from evalnb.text.language import row_languages

if TYPE_CHECKING:
    from collections.abc import Mapping

    import polars as pl

    from evalnb.evaluation.base import Context
    from evalnb.llm.client import ChatResult, LLMClient

__all__ = ["JudgeEvaluator", "judge_fingerprint", "judge_params"]

_JUDGE_MODEL = Param(
    "judge_model", str, default="", description="the judge's model name (set from the judge client)"
)
_EXAMPLES = Param(
    "judge_examples",
    str,
    default="",
    description="human-graded examples shown to the judge, JSON (set by lab.judges.align)",
)
_GUIDANCE = Param(
    "judge_guidance",
    str,
    default="",
    description="extra grading rules for the judge (set by lab.judges.align)",
)
_CONTRACT = Param(
    "contract",
    str,
    default="auto",
    choices=MODES,
    description=(
        "the reply format: 'auto' (the strongest constraint the server honours, else free "
        "text), 'strict' (a constraint or an error) or 'free' (free text, read tolerantly)"
    ),
)
MEDIA_MODES = ("auto", "none", "required")
_MEDIA = Param(
    "media",
    str,
    default="auto",
    choices=MEDIA_MODES,
    description=(
        "the rows' images and audio sent to the judge: 'auto' (when its server takes images), "
        "'none' (never), 'required' (or the row is not judged)"
    ),
    keyed_at_default=False,
)
_JUDGE = (_JUDGE_MODEL, _EXAMPLES, _GUIDANCE, _CONTRACT, _MEDIA)
# The rows' resolved media a judge sees (lab/media_rows.py), in this order.
_MEDIA_ITEMS = ("case_media_items", "context_media_items", "answer_media_items")


def judge_params() -> tuple[Param, ...]:
    """Return the parameters every judge evaluator has (model, aligned examples, guidance)."""
    return _JUDGE


class JudgeEvaluator(Evaluator):
    """Base of judge evaluators: prompts per row → one batch of calls → parsed values.

    Every reply goes out under the format contract negotiated with the judge's server
    (:mod:`evalnb.llm.contract`; the ``contract`` parameter), is read by the tolerant reader
    (:mod:`evalnb.llm.reader`; each salvage named in the row's detail), and a reply that
    still cannot be read gets one repair turn (the reply, the reason, the format asked
    again). A failure is a null value with the raw reply and the reason, never a default.
    """

    judge = True
    reads_media = True
    params: ClassVar[tuple[Param, ...]] = _JUDGE
    # The JSON field holding the verdict or score, for probabilities under a JSON contract.
    answer_field: ClassVar[str | None] = None
    # The reply's length in tokens, for cost estimates before a run (evalnb.judges.estimate) when
    # the lab holds no earlier run of this judge to measure it on.
    reply_tokens: ClassVar[int] = 150

    @abstractmethod
    def prompts(self, row: dict[str, Any], params: Mapping[str, object]) -> list[Messages]:
        """Return the conversations to send for one row (empty: the row cannot be judged)."""

    @abstractmethod
    def read(
        self, replies: list[Parsed], row: dict[str, Any], params: Mapping[str, object], ctx: Context
    ) -> dict[str, float | None] | str:
        """Return the metric values from the parsed replies, or why the row has none."""

    def reply_schema(self, params: Mapping[str, object]) -> dict[str, Any] | None:
        """Return the JSON schema of a reply, None for a free-text judge (no constraint)."""
        del params
        return None

    def format_hint(self, params: Mapping[str, object]) -> str:
        """Return what the model is told of the reply format under a JSON contract."""
        schema = self.reply_schema(params)
        if schema is None:
            return ""
        return (
            "Reply with one JSON object and nothing else, following this JSON schema: "
            + json.dumps(schema, ensure_ascii=False)
        )

    def parse(
        self, text: str | None, params: Mapping[str, object], *, contract_json: bool = False
    ) -> Parsed:
        """Read one reply: a JSON object checked against :meth:`reply_schema` by default."""
        del contract_json
        return read_object(text, self.reply_schema(params))

    def probability(
        self, result: ChatResult, text: str, params: Mapping[str, object], *, contract_json: bool
    ) -> float | None:
        """Return the reply's probability reading (P(pass), or the expected score), if any."""
        del result, text, params, contract_json
        return None

    def contract_for(self, judge: LLMClient, params: Mapping[str, object]) -> str:
        """Return the contract this evaluator's replies go out under with ``judge``."""
        mode = str(params.get("contract", "auto"))
        schema = self.reply_schema(params)
        wants_probe = mode != "free" and schema is not None
        capabilities = judge.capabilities() if wants_probe else None
        return negotiate(mode, capabilities, has_schema=schema is not None)

    def request_params(
        self, judge: LLMClient, params: Mapping[str, object], kind: str
    ) -> dict[str, Any]:
        """Return the request fields of every call: the contract's, and logprobs when used."""
        schema = self.reply_schema(params)
        request = constraint_params(kind, schema) if kind != "free" and schema else {}
        if params.get("score_mode") == "logprobs":
            if not judge.capabilities().logprobs:
                msg = (
                    f"{self.id}: score_mode='logprobs', but {judge.public_endpoint} "
                    f"({judge.model}) returns no token log-probabilities: use score_mode='parsed'"
                )
                raise ValueError(msg)
            request |= {"logprobs": True, "top_logprobs": 10}
        return request

    def score(self, rows: pl.DataFrame, params: Mapping[str, object], ctx: Context) -> pl.DataFrame:
        """Send every row's prompts in one batch, read them, repair once, compute per row."""
        if ctx.judge is None:
            msg = (
                f"{self.id} needs an LLM judge: evalnb.evaluate(lab, [{self.id!r}], "
                "judge=evalnb.LLMClient(base_url=..., model=...))"
            )
            raise ValueError(msg)
        judge = ctx.judge
        kind = self.contract_for(judge, params)
        request = self.request_params(judge, params, kind)
        records = rows.to_dicts()
        asks, seen = self.with_media(rows, self.conversations(rows, params, kind), params, judge)
        flat = [c for a in asks for c in a]
        _announce(ctx.progress, self.id, flat, judge)
        results = judge.chat_many(flat, params=request, progress=False) if flat else []
        readings = self._read_all(judge, flat, results, params, kind, request)
        values: dict[str, list[float | None]] = {m.key: [] for m in self.metrics}
        details: list[str | None] = []
        at = 0
        fingerprint = judge_fingerprint(judge, self, kind)
        looked = judge_fingerprint(judge, self, kind, media=DEFAULT_POLICY.name)
        for row, ask, media in zip(records, asks, seen, strict=True):
            got = readings[at : at + len(ask)]
            at += len(ask)
            out: dict[str, float | None]
            detail: dict[str, Any]
            if media is not None and "refused" in media:
                out, detail = {}, {"reason": media.pop("refused")}
            else:
                out, detail = self._row(row, ask, got, params, ctx, kind)
            if media is not None:
                detail["media"] = media
            detail["fingerprint"] = looked if media and media.get("sent") else fingerprint
            for key, column in values.items():
                column.append(out.get(key))
            details.append(json.dumps(detail, ensure_ascii=False))
        return result_frame(rows, {k: np.array(v, dtype=float) for k, v in values.items()}, details)

    def conversations(
        self, rows: pl.DataFrame, params: Mapping[str, object], kind: str
    ) -> list[list[Messages]]:
        """Return each row's conversations as sent under contract ``kind`` (none: not judged)."""
        hint = self.format_hint(params) if kind != "free" else ""
        aligned = aligned_system(params)
        # A judge told nothing grades a Chinese answer as if English were expected; an
        # English case's prompts stay exactly as they were (and their cached replies valid).
        # Latin-script cases are told only the language set on them: on such text the
        # detector can mistake English for Occitan, and telling a judge so would mislead it.
        languages = row_languages(rows, latin_is_enough=True).to_list()
        return [
            [
                with_hint(with_system(c, in_language(aligned, lang)), hint)
                for c in self.prompts(r, params)
            ]
            if r["error"] is None
            else []
            for r, lang in zip(rows.to_dicts(), languages, strict=True)
        ]

    def with_media(
        self,
        rows: pl.DataFrame,
        asks: list[list[Messages]],
        params: Mapping[str, object],
        judge: LLMClient,
    ) -> tuple[list[list[Messages]], list[dict[str, Any] | None]]:
        """Return the conversations with each row's media attached, and what each row sent.

        Per row: None (no media), or ``{"sent": [ids], "left_out": {id: why}}``, or
        ``{"refused": why, ...}`` for a row not judged (``media="required"`` and not all of
        its media can be seen).
        """
        columns = [c for c in _MEDIA_ITEMS if c in rows.columns]
        items = (
            [
                [i for c in columns for i in (r[c] or [])]
                for r in rows.select(columns).iter_rows(named=True)
            ]
            if columns
            else [[] for _ in asks]
        )
        if not any(items):
            return asks, [None] * len(asks)
        mode = str(params.get("media", "auto"))
        takes, why = True, ""
        if mode != "none":
            caps = judge.capabilities()
            if caps.images is None:  # probed before images were asked: ask now
                caps = judge.capabilities(refresh=True)
            takes = bool(caps.images)
            why = caps.notes.get("images", "")
        out_asks: list[list[Messages]] = []
        seen: list[dict[str, Any] | None] = []
        for ask, mine in zip(asks, items, strict=True):
            if not mine or not ask:
                out_asks.append(ask)
                seen.append(None if not mine else {"sent": []})
                continue
            if mode == "none" or not takes:
                reason = (
                    "media='none'"
                    if mode == "none"
                    else f"the judge's server takes no images ({why})"
                )
                left = {str(i["media_id"]): reason for i in mine}
                if mode == "required":
                    out_asks.append([])
                    seen.append(
                        {
                            "refused": f"not judged: {reason}, and media='required' never judges "
                            "a text shadow of the input",
                            "sent": [],
                            "left_out": left,
                        }
                    )
                else:
                    out_asks.append(ask)
                    seen.append({"sent": [], "left_out": left})
                continue
            prepared = DEFAULT_POLICY.prepare(mine)
            if mode == "required" and prepared.left_out:
                out_asks.append([])
                first = next(iter(prepared.left_out.values()))
                seen.append(
                    {
                        "refused": f"not judged: {len(prepared.left_out)} media item(s) cannot be "
                        f"sent ({first}), and media='required' never judges a text shadow",
                        **prepared.detail(),
                    }
                )
                continue
            out_asks.append([with_parts(c, prepared.parts) for c in ask])
            seen.append(prepared.detail())
        return out_asks, seen

    def _read_all(
        self,
        judge: LLMClient,
        conversations: list[Messages],
        results: list[ChatResult],
        params: Mapping[str, object],
        kind: str,
        request: dict[str, Any],
    ) -> list[_Reading]:
        readings = []
        for result in results:
            if result.error is not None:
                readings.append(_Reading(result, None))
                continue
            readings.append(_Reading(result, self._reading(result, params, kind, request)))
        readings = self._resend_truncated(judge, conversations, readings, params, kind, request)
        failed = [
            i
            for i, r in enumerate(readings)
            if r.parsed is not None and not r.parsed.ok and r.result.finish_reason != "length"
        ]
        if not failed:
            return readings
        hint = self.format_hint(params) or self.free_hint(params)
        repairs = [
            [
                *conversations[i],
                {"role": "assistant", "content": readings[i].parsed.raw},  # type: ignore[union-attr]
                {
                    "role": "user",
                    "content": REPAIR.format(reason=readings[i].parsed.note, hint=hint),  # type: ignore[union-attr]
                },
            ]
            for i in failed
        ]
        answers = judge.chat_many(repairs, params=request, progress=False)
        return self._second_tries(readings, failed, answers, params, kind, request)

    def _second_tries(
        self,
        readings: list[_Reading],
        rows: list[int],
        answers: list[ChatResult],
        params: Mapping[str, object],
        kind: str,
        request: dict[str, Any],
    ) -> list[_Reading]:
        """Return ``readings`` with the second try of each of ``rows`` (a repair or a resend)."""
        out = list(readings)
        for i, answer in zip(rows, answers, strict=True):
            first = out[i]
            if answer.error is not None:
                out[i] = replace(first, repair=answer, repaired=False)
                continue
            again = self._reading(answer, params, kind, request)
            out[i] = replace(
                first, parsed=again if again.ok else first.parsed, repair=answer, repaired=again.ok
            )
        return out

    def _resend_truncated(
        self,
        judge: LLMClient,
        conversations: list[Messages],
        readings: list[_Reading],
        params: Mapping[str, object],
        kind: str,
        request: dict[str, Any],
    ) -> list[_Reading]:
        """Ask once more, with twice the ``max_tokens``, for each reply the host cut off.

        A cut-off reply is never read (``{"score": 1`` is not a score of 1). Where no
        ``max_tokens`` was set the host's own limit cut it, and no larger one can be asked:
        the row stays a failure saying so.
        """
        cut = [i for i, r in enumerate(readings) if r.result.finish_reason == "length"]
        limit_key = next(
            (
                k
                for k in ("max_completion_tokens", "max_tokens")
                if k in request or k in judge.params
            ),
            None,
        )
        if not cut or limit_key is None:
            return readings
        current = request.get(limit_key, judge.params.get(limit_key))
        if not isinstance(current, int) or isinstance(current, bool) or current <= 0:
            return readings
        larger = {**request, limit_key: 2 * current}
        answers = judge.chat_many([conversations[i] for i in cut], params=larger, progress=False)
        return self._second_tries(readings, cut, answers, params, kind, request)

    def _reading(
        self, result: ChatResult, params: Mapping[str, object], kind: str, request: dict[str, Any]
    ) -> Parsed:
        """Read one answered call under ``kind``, with its probability when logprobs were asked."""
        if result.finish_reason == "length":
            return Parsed(
                None,
                False,
                result.content or "",
                "truncated: the host stopped the reply at its token limit (finish_reason "
                "'length'); a cut-off reply is never read",
            )
        text = reply_text(result, kind) or ""
        contract_json = kind != "free"
        parsed = self.parse(text, params, contract_json=contract_json)
        if parsed.ok and request.get("logprobs"):
            p = self.probability(result, text, params, contract_json=contract_json)
            parsed = replace(parsed, probability=p)
        return parsed

    def free_hint(self, params: Mapping[str, object]) -> str:
        """Return the format asked again in a repair turn of a free-text reply."""
        del params
        return "Follow the output format given above exactly, with nothing else."

    def _row(
        self,
        row: dict[str, Any],
        ask: list[Messages],
        got: list[_Reading],
        params: Mapping[str, object],
        ctx: Context,
        kind: str,
    ) -> tuple[dict[str, float | None], dict[str, Any]]:
        calls = [r.result for r in got] + [r.repair for r in got if r.repair is not None]
        costs = [r.cost for r in calls if r.cost is not None]
        accounting = {
            "cost": sum(costs) if costs else None,
            "prompt_tokens": sum(r.prompt_tokens or 0 for r in calls),
            "completion_tokens": sum(r.completion_tokens or 0 for r in calls),
        }
        if row["error"] is not None:
            return {}, {"reason": f"the model host failed to answer: {row['error']}", **accounting}
        if not ask:
            return {}, {"reason": "missing input the judge needs: " + ", ".join(self.requires)}
        judged: dict[str, Any] = {"contract": kind, **accounting}
        errors = [r.result.error for r in got if r.result.error]
        if errors:
            refused = {"reason": f"judge call failed: {errors[0]}", "judge_error": True, **judged}
            if any(e.startswith(REFUSED) for e in errors):
                refused["budget_exhausted"] = True  # not scored: a rerun with more budget asks
            if any(e.startswith((REFUSED, PENDING)) for e in errors):
                refused["asks_again"] = True  # the next evaluation of this lab asks these calls
            return {}, refused
        parsed = [r.parsed for r in got if r.parsed is not None]
        raw = [p.raw for p in parsed]
        repaired = [r.repaired for r in got if r.repair is not None]
        if repaired:
            judged["repair"] = "fixed" if all(repaired) else "failed"
        salvages = sorted({s for p in parsed for s in p.salvages})
        if salvages:
            judged["salvages"] = salvages
        probabilities = [p.probability for p in parsed if p.probability is not None]
        if probabilities:
            judged["probability"] = probabilities[0] if len(parsed) == 1 else probabilities
        if any(r.result.finish_reason == "length" for r in got):
            judged["truncated"] = True
        drifted = sum(_drifted(r.result, kind) for r in got if r.parsed is not None)
        if drifted:
            # The probe found the server honouring the contract; this reply did not (a bare
            # "Yes" under a JSON schema reads with no salvage, so only this says it).
            judged["contract_drift"] = (
                f"{drifted} of {len(got)} replies ignored the {kind!r} contract the server "
                "honoured when probed"
            )
        failed = [p for p in parsed if not p.ok]
        if failed:
            return self.on_parse_failure(), {
                "reason": f"judge reply not understood: {failed[0].note}",
                "parse_failed": True,
                "raw": raw,
                **judged,
            }
        out = self.read(parsed, row, params, ctx)
        if isinstance(out, str):
            return self.on_parse_failure(), {
                "reason": out,
                "parse_failed": True,
                "raw": raw,
                **judged,
            }
        return out, {"raw": raw, "parse_failed": False, **judged}

    def on_parse_failure(self) -> dict[str, float | None]:
        """Values recorded when the reply cannot be read (none by default)."""
        return {}


def judge_fingerprint(
    judge: LLMClient, evaluator: Evaluator, kind: str, *, media: str | None = None
) -> dict[str, Any]:
    """Return what decided a judged score, with an ``id`` that changes when any part does.

    The judge's model, server and decoding settings, the contract its replies went out
    under, the evaluator and its version (its prompt templates are part of its code), the
    reader's edition (:data:`~evalnb.llm.reader.READER_VERSION`), and for a verdict that saw
    media the rule they were sent by (``media``: :attr:`~evalnb.media.policy.MediaPolicy.name`).
    ``decide`` refuses to compare two systems' scores judged under different fingerprints
    unless told.
    """
    parts = {
        **judge.fingerprint,
        "contract": kind,
        "evaluator": f"{evaluator.id}@{evaluator.version}",
        "reader": READER_VERSION,
        **({"media": media} if media else {}),
    }
    digest = hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()
    return {"id": digest[:12], **parts}


def _drifted(result: ChatResult, kind: str) -> bool:
    """Whether a reply under a constraint came back without it (a server that stopped honouring it)."""
    if kind == "free" or result.error is not None:
        return False
    if kind == "tool":
        return not result.tool_calls
    text = (result.content or "").strip()
    return not (text.startswith("{") and text.endswith("}"))


def _announce(bar: object, evaluator: str, conversations: list[Messages], judge: LLMClient) -> None:
    """Put what the calls about to go out will take in the progress bar's header.

    A quick figure (four characters a token, the probe's pace); :func:`evalnb.judges.estimate`
    gives the exact one before a run.
    """
    describe = getattr(bar, "set_description", None)
    if describe is None or getattr(bar, "disable", True) or not conversations:
        return
    tokens = sum(
        approximate_tokens([str(m.get("content") or "") for c in conversations for m in c])
    )
    known = judge.known_capabilities
    pace = known.seconds_per_call if known is not None else None
    seconds = len(conversations) * (pace or 1.0) / max(1, judge.concurrency)
    describe(
        f"{evaluator}: {len(conversations):,} judge calls, ~{tokens:,} prompt tokens, "
        f"~{seconds / 60:.0f} min"
    )


@dataclass(frozen=True)
class _Reading:
    """One call's result, its reading, and the repair turn it needed, if any."""

    result: ChatResult
    parsed: Parsed | None
    repair: ChatResult | None = None
    repaired: bool = False
