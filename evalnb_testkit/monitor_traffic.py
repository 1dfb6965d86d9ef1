"""A calibrated FAQ bot and its live traffic, written by the real OpenTelemetry SDK.

``calibrated_bundle`` builds a lab of questions with expected answers and answers, scores it
with ROUGE, has a reviewer label a random sample (the truth: whether the answer was made
good), recalibrates and exports the bundle. ``write_traffic`` runs the same bot under a
tracer provider whose exporter writes OTLP JSON lines (evalnb.monitoring.otlp_file), in
rotated files: one trace per request, a CHAIN root with the question and answer, a
RETRIEVER and an LLM span under it.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import polars as pl
from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

import evalnb
from evalnb.monitoring.otlp_file import OTLPJsonFileExporter

WORDS = [
    "the",
    "policy",
    "covers",
    "water",
    "damage",
    "fire",
    "theft",
    "storm",
    "claims",
    "within",
    "thirty",
    "days",
    "of",
    "the",
    "event",
    "and",
    "requires",
    "a",
    "receipt",
    "from",
    "the",
    "insured",
    "person",
]
TOPICS = {
    "billing": ["how do I pay my invoice", "when is my premium due", "can I pay by card"],
    "claims": [
        "how do I file a claim",
        "what does a water damage claim need",
        "how long does a claim take",
    ],
    "travel": [
        "does my policy cover travel abroad",
        "am I insured on a ski trip",
        "is lost luggage covered",
    ],
}
OTHER = ["write me a poem about cats", "what is the capital of France", "translate hello to German"]
DAY_NS = 86_400 * 10**9
T0_NS = 1_793_491_200 * 10**9  # 2026-11-01 00:00 UTC


def _answer(rng: random.Random, expected: str, good: bool) -> str:
    words = expected.split()
    if good:
        return " ".join(w if rng.random() > 0.1 else rng.choice(WORDS) for w in words)
    return " ".join(rng.choice(WORDS) for _ in words)


def _question(rng: random.Random, drifted: bool) -> tuple[str, str]:
    if drifted:
        return "other", rng.choice(OTHER)
    topic = rng.choice(list(TOPICS))
    return topic, rng.choice(TOPICS[topic])


def calibrated_bundle(path: Path, *, n: int = 300, seed: int = 0) -> Path:
    """Write the bundle of a calibrated lab (ROUGE-L on an FAQ bot) to ``path``."""
    rng = random.Random(seed)
    rows, truth = [], {}
    for i in range(n):
        topic, question = _question(rng, drifted=False)
        expected = f"{question} answer {' '.join(rng.choice(WORDS) for _ in range(8))}"
        good = rng.random() < 0.85
        rows.append(
            {
                "case_id": f"c{i}",
                "prompt": question,
                "expected": expected,
                "actual": _answer(rng, expected, good),
                "topic": topic,
            }
        )
        truth[f"c{i}"] = good
    lab = evalnb.evaluate(evalnb.load(pl.DataFrame(rows)), ["rouge"], progress=False)
    w = evalnb.labeler(lab, "rouge", "rouge_l", reviewer="ann", n=60, strategy="random", seed=1)
    while w.remaining:
        w.label("pass" if truth[w.item["case_id"]] else "fail")
    lab.calibration.recalibrate("rouge", "rouge_l")
    return lab.calibration.export(path, approved_by="risk-owner", accepted=0.8)


def write_traffic(
    folder: Path,
    *,
    days: int = 3,
    per_day: int = 200,
    good_rate: float | list[float] = 0.85,
    drifted_days: tuple[int, ...] = (),
    seed: int = 1,
    rotate_lines: int | None = 7,
    first_day: int = 0,
) -> dict[str, bool]:
    """Trace ``per_day`` requests a day into OTLP JSON files; return each trace's truth."""
    rng = random.Random(seed)
    provider = TracerProvider(resource=Resource.create({"service.name": "faq-bot"}))
    exporter = OTLPJsonFileExporter(folder, rotate_lines=rotate_lines)
    provider.add_span_processor(
        BatchSpanProcessor(
            exporter, max_queue_size=10**7, max_export_batch_size=60, schedule_delay_millis=10**7
        )
    )
    tracer = provider.get_tracer("faq-bot")
    truth: dict[str, bool] = {}
    for day in range(first_day, first_day + days):
        rate = good_rate[day] if isinstance(good_rate, list) else good_rate
        for k in range(per_day):
            start = T0_NS + day * DAY_NS + k * (DAY_NS // per_day)
            _, question = _question(rng, drifted=day in drifted_days)
            expected = f"{question} answer {' '.join(rng.choice(WORDS) for _ in range(8))}"
            good = rng.random() < rate
            attrs: dict[str, Any] = {
                "openinference.span.kind": "CHAIN",
                "input.value": question,
                "output.value": _answer(rng, expected, good),
                "evalnb.expected": expected,
            }
            root = tracer.start_span("faq", start_time=start, attributes=attrs)
            ctx = trace.set_span_in_context(root)
            docs = {
                "openinference.span.kind": "RETRIEVER",
                "retrieval.documents.0.document.content": expected,
            }
            tracer.start_span("retrieve", context=ctx, start_time=start + 10, attributes=docs).end(
                start + 20
            )
            llm = {"openinference.span.kind": "LLM", "llm.model_name": "gpt-faq"}
            tracer.start_span("llm", context=ctx, start_time=start + 30, attributes=llm).end(
                start + 40
            )
            root.end(end_time=start + 50)
            truth[format(root.get_span_context().trace_id, "032x")] = good
    provider.force_flush(timeout_millis=600_000)  # every span written before this returns
    provider.shutdown()
    return truth
