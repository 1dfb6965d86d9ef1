"""LLM-written test questions: plan the calls, send them once, read each reply strictly.

The plan is a pure function of the chunks, the kinds and the seed, so the same request
gives the same prompts, and :class:`~evalnb.llm.client.LLMClient`'s cache answers every
call completed before (a killed run resumes without repeating one). Calls go round the
topics and, within a topic, round the kinds; two-source kinds pair a chunk with another of
its topic.

A reply becomes a candidate only if it is one JSON object that matches its kind's schema
and, for answerable kinds, each evidence passage occurs in the source it is credited to
(case, whitespace and surrounding quotes aside). Anything else is a parse failure counted
by reason in the generation report, with the raw reply kept; nothing is repaired.
"""

from __future__ import annotations

import json
import random
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import polars as pl

from evalnb.generation.judge_free import Candidate, Chunk
from evalnb.generation.llm_kinds import LLM_KINDS, LLMKind, describe_keys
from evalnb.llm.parsed import Parsed, parse_json_schema
from evalnb.text.language import detect_languages, language_name

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from evalnb.llm.client import LLMClient

__all__ = [
    "REPORT_SCHEMA",
    "Call",
    "GenerationReport",
    "llm_candidates",
    "parse_reply",
    "plan_calls",
]

_SYSTEM = (
    "You write test questions for evaluating an assistant that answers from a document "
    "collection. Use only the sources given; never invent facts. Reply with one JSON object "
    "and nothing else."
)
_EXAMPLES_KEPT = 3  # raw replies kept per failure reason, to show what went wrong


@dataclass(frozen=True)
class Call:
    """One planned generator call: the kind, its chunks and its seeded choices."""

    kind: str
    chunks: tuple[Chunk, ...]
    choices: Mapping[str, str]

    def messages(self) -> list[dict[str, str]]:
        """Return the conversation sent for this call."""
        kind = LLM_KINDS[self.kind]
        task = kind.task.format_map(dict(self.choices)) if self.choices else kind.task
        parts = [f"Task: {task}", ""]
        for i, chunk in enumerate(self.chunks, 1):
            where = f'"{chunk.doc}"' + (f', section "{chunk.heading}"' if chunk.heading else "")
            parts += [f"Source {i} (from {where}):", "<<<", chunk.text, ">>>", ""]
        language = _language_of(self.chunks)
        if language not in (None, "en"):
            # A model asked in English about French sources tends to write English questions.
            name = language_name(language)
            parts += [f"Write the question and the answer in {name}, the sources' language.", ""]
        parts += ["Reply with a JSON object with exactly these keys:", describe_keys(kind)]
        return [
            {"role": "system", "content": _SYSTEM},
            {"role": "user", "content": "\n".join(parts)},
        ]


def _language_of(chunks: tuple[Chunk, ...]) -> str | None:
    text = "\n".join(chunk.text for chunk in chunks)
    found = detect_languages(pl.Series([text], dtype=pl.String)).to_list()[0]
    return None if found is None else str(found)


REPORT_SCHEMA = pl.Schema(
    {
        "generator": pl.String,
        "calls": pl.Int64,
        "failed_calls": pl.Int64,
        "parse_failures": pl.Int64,
        "parsed": pl.Int64,
        "used": pl.Int64,
        "failure_reasons": pl.String,
    }
)


@dataclass
class GenerationReport:
    """Per generator: calls sent, failed calls, parse failures by reason, candidates made."""

    calls: Counter[str] = field(default_factory=Counter)
    call_failures: Counter[str] = field(default_factory=Counter)
    parsed: Counter[str] = field(default_factory=Counter)
    failures: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    examples: dict[tuple[str, str], list[str]] = field(default_factory=lambda: defaultdict(list))

    def record(self, kind: str, parsed: Parsed | None, error: str | None) -> None:
        """Count one call's outcome (``error``: the call failed; ``parsed``: its reading)."""
        self.calls[kind] += 1
        if error is not None:
            self.call_failures[kind] += 1
            self._keep(kind, "call failed", error)
        elif parsed is not None and parsed.ok:
            self.parsed[kind] += 1
        elif parsed is not None:
            reason = parsed.note.split(":")[0]
            self.failures[kind][reason] += 1
            self._keep(kind, reason, parsed.raw)

    def _keep(self, kind: str, reason: str, raw: str) -> None:
        kept = self.examples[kind, reason]
        if len(kept) < _EXAMPLES_KEPT:
            kept.append(raw[:2000])

    def frame(self, used: Mapping[str, int]) -> pl.DataFrame:
        """One row per generator; ``used``: cases of each kept in the suite."""
        kinds = sorted(self.calls)
        return pl.DataFrame(
            {
                "generator": kinds,
                "calls": [self.calls[k] for k in kinds],
                "failed_calls": [self.call_failures[k] for k in kinds],
                "parse_failures": [sum(self.failures[k].values()) for k in kinds],
                "parsed": [self.parsed[k] for k in kinds],
                "used": [used.get(k, 0) for k in kinds],
                "failure_reasons": [
                    json.dumps(dict(self.failures[k]), sort_keys=True) for k in kinds
                ],
            },
            schema=REPORT_SCHEMA,
        )


def plan_calls(
    by_topic: Mapping[str, Sequence[Chunk]], kinds: Sequence[str], n_calls: int, seed: int
) -> list[Call]:
    """Plan up to ``n_calls`` calls: topics in turn, kinds in turn within each.

    Each call takes its topic's least used chunk that has not met its kind yet (ties go
    by a seeded shuffle of the topic's chunks). A two-source kind pairs its chunk with
    another of the topic (of the corpus when the topic has one chunk); with a one-chunk
    corpus it is left out. A call identical to one planned already is left out, so a small
    corpus gets fewer.
    """
    topics = sorted(by_topic)
    everything = [c for t in topics for c in by_topic[t]]
    order = {t: list(by_topic[t]) for t in topics}
    for t in topics:
        random.Random(f"{seed}:order:{t}").shuffle(order[t])
    usable = [k for k in kinds if LLM_KINDS[k].sources == 1 or len(everything) > 1]
    if not usable or not topics:
        return []
    uses: Counter[str] = Counter()
    paired: set[tuple[str, str]] = set()
    planned: set[tuple[str, tuple[str, ...], tuple[tuple[str, str], ...]]] = set()
    calls = []
    for i in range(n_calls):
        t_index, rounds = i % len(topics), i // len(topics)
        topic = topics[t_index]
        # Offset by topic so the first round already spreads every kind over the topics.
        kind = usable[(rounds + t_index) % len(usable)]
        # The topic's least used chunk not yet asked this kind (ties: the shuffled order),
        # so chunks are used evenly and one chunk is asked one kind once while it can be.
        fresh = [c for c in order[topic] if (kind, c.chunk_id) not in paired] or order[topic]
        chunk = min(fresh, key=lambda c: uses[c.chunk_id])
        uses[chunk.chunk_id] += 1
        paired.add((kind, chunk.chunk_id))
        rng = random.Random(f"{seed}:{i}:{kind}:{chunk.chunk_id}")
        chunks: tuple[Chunk, ...] = (chunk,)
        if LLM_KINDS[kind].sources == 2:
            pool = [c for c in order[topic] if c.chunk_id != chunk.chunk_id] or [
                c for c in everything if c.chunk_id != chunk.chunk_id
            ]
            chunks = (chunk, rng.choice(pool))
        draw = LLM_KINDS[kind].draw
        choices = draw(rng) if draw else {}
        key = (kind, tuple(c.chunk_id for c in chunks), tuple(sorted(choices.items())))
        if key not in planned:  # the same call twice would get the same reply (the cache)
            planned.add(key)
            calls.append(Call(kind, chunks, choices))
    return calls


_QUOTES = "\"'“”‘’«»…. "


def _norm(text: str) -> str:
    return " ".join(text.lower().split()).strip(_QUOTES)


def _evidence_problem(kind: LLMKind, evidence: Sequence[str], sources: Sequence[str]) -> str:
    """Say which quoted passage is not in its source ("" when every one is)."""
    texts = [_norm(s) for s in sources]
    for i, quote in enumerate(evidence):
        q = _norm(quote)
        if not q:
            return f"evidence not in the source: passage {i + 1} is empty"
        where = [texts[i]] if kind.evidence_per_source else texts
        if not any(q in t for t in where):
            credited = f"Source {i + 1}" if kind.evidence_per_source else "the sources"
            return (
                f"evidence not in the source: passage {i + 1} is not in {credited}: {quote[:80]!r}"
            )
    return ""


def parse_reply(kind_name: str, text: str | None, sources: Sequence[str]) -> Parsed:
    """Read one reply of ``kind_name`` against its schema and its sources.

    Returns
    -------
    Parsed
        ``value`` is the reply object when ``ok``; otherwise ``note`` says why, starting
        with the reason counted in the report: ``no JSON object``, ``invalid JSON``,
        ``JSON is not an object``, ``schema`` or ``evidence not in the source``.
    """
    kind = LLM_KINDS[kind_name]
    parsed = parse_json_schema(text, kind.schema)
    if not parsed.ok:
        return parsed
    if kind.answerable:
        problem = _evidence_problem(kind, parsed.value["evidence"], sources)
        if problem:
            return Parsed(None, False, parsed.raw, problem)
    return parsed


def llm_candidates(
    calls: Sequence[Call], llm: LLMClient, *, json_mode: bool = True, report: GenerationReport
) -> list[Candidate]:
    """Send ``calls`` in one concurrent batch and turn the replies that pass into candidates.

    ``json_mode`` asks the endpoint for a JSON reply (``response_format``); turn it off
    for servers that reject that parameter.
    """
    params = {"response_format": {"type": "json_object"}} if json_mode else {}
    results = llm.chat_many([c.messages() for c in calls], params=params)
    out = []
    for call, result in zip(calls, results, strict=True):
        if result.error is not None or result.content is None:
            report.record(call.kind, None, result.error or "empty reply")
            continue
        parsed = parse_reply(call.kind, result.content, [c.text for c in call.chunks])
        report.record(call.kind, parsed, None)
        if not parsed.ok:
            continue
        kind = LLM_KINDS[call.kind]
        prompt, expected = kind.render(parsed.value)
        evidence = tuple(parsed.value.get("evidence", ()))
        out.append(
            Candidate(
                prompt.strip(),
                expected.strip(),
                call.kind,
                tuple(c.chunk_id for c in call.chunks),
                evidence,
                answerable=kind.answerable,
            )
        )
    return out
