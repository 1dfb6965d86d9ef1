"""Ongoing monitoring at a busy service's scale (issue 45): 1M spans ingested and scored.

Usage: .venv/bin/python bench/bench_monitor.py [--spans 1000000] [--out out/bench-monitor]

1. A calibration lab of an FAQ bot is scored with text matching (each request's H2O
   condition), PII leakage and ROUGE; a reviewer's labels calibrate one metric of each, and
   the bundle is exported.
2. The bot serves ``--spans`` / 4 requests under the OpenTelemetry SDK (4 spans a trace: the
   CHAIN root, a RETRIEVER, an LLM call, a tool), written as OTLP JSON by
   ``OTLPJsonFileExporter`` in rotated files (made once, kept in ``--out``).
3. Cold, whole process: ``evalnb monitor ingest`` into a new store: seconds and peak RSS.
   Then the same command again with nothing new.
4. Warm, one process: ``Monitor.ingest`` of a frame of the same requests against
   ``evalnb.evaluate`` of them as a lab (the monitor's bookkeeping: dedup, transactions,
   checkpoints, on top of scoring). No other tool applies calibrated thresholds to live
   traffic, so the comparison is with our own plain scoring.
"""

from __future__ import annotations

import argparse
import random
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evalnb_testkit.monitor_traffic import WORDS  # noqa: E402 - the test traffic's vocabulary

QUESTIONS = ["how do I pay my invoice", "how do I file a claim", "is lost luggage covered"]
PII = "my SSN is 123-45-6789 and my card 4111 1111 1111 1111"


def _answer(rng: random.Random, expected: str, pii: float = 0.03) -> str:
    text = " ".join(w if rng.random() > 0.15 else rng.choice(WORDS) for w in expected.split())
    return text + (f" {PII}" if rng.random() < pii else "")


def bundle(out: Path) -> Path:
    """Calibrate text matching, PII leakage and ROUGE-L on 400 labelled cases."""
    import polars as pl  # noqa: PLC0415

    import evalnb  # noqa: PLC0415

    rng = random.Random(0)
    rows = []
    for i in range(400):
        q = rng.choice(QUESTIONS)
        expected = f"{q} the policy " + " ".join(rng.choice(WORDS) for _ in range(10))
        rows.append(
            {
                "case_id": f"c{i}",
                "prompt": q,
                "expected": expected,
                "actual": _answer(rng, expected, pii=0.2),  # enough leaks to calibrate on
                "condition": '"policy"',
            }
        )
    lab = evalnb.evaluate(
        evalnb.load(pl.DataFrame(rows)), ["text_matching", "pii_leakage", "rouge"], progress=False
    )
    for ev, metric in [
        ("rouge", "rouge_l"),
        ("text_matching", "model_passes"),
        ("pii_leakage", "model_passes"),
    ]:
        scores = dict(
            lab.scores.filter((pl.col("evaluator") == ev) & (pl.col("metric") == metric))
            .select("case_id", "value")
            .iter_rows()
        )
        w = evalnb.labeler(lab, ev, metric, reviewer="ann", n=60, strategy="random", seed=1)
        while w.remaining:
            value = scores[w.item["case_id"]] or 0.0
            w.label("pass" if value >= (0.6 if ev == "rouge" else 0.5) else "fail")
        lab.calibration.recalibrate(ev, metric)
    return lab.calibration.export(out / "calibration.json", approved_by="bench")


def traffic(folder: Path, spans: int) -> int:
    """Write ``spans`` spans (a quarter of them requests) with the OpenTelemetry SDK."""
    from opentelemetry import trace  # noqa: PLC0415
    from opentelemetry.sdk.resources import Resource  # noqa: PLC0415
    from opentelemetry.sdk.trace import TracerProvider  # noqa: PLC0415
    from opentelemetry.sdk.trace.export import BatchSpanProcessor  # noqa: PLC0415

    from evalnb.monitoring.otlp_file import OTLPJsonFileExporter  # noqa: PLC0415

    rng = random.Random(1)
    provider = TracerProvider(resource=Resource.create({"service.name": "faq-bot"}))
    provider.add_span_processor(
        BatchSpanProcessor(
            OTLPJsonFileExporter(folder, rotate_lines=200),
            max_queue_size=2_000_000,  # the exporter trails the tracer: nothing dropped
            max_export_batch_size=512,
        )
    )
    tracer = provider.get_tracer("faq-bot")
    t0, day = 1_793_491_200 * 10**9, 86_400 * 10**9
    requests = spans // 4
    for k in range(requests):
        start = t0 + k * (day // requests)
        q = rng.choice(QUESTIONS)
        expected = f"{q} the policy " + " ".join(rng.choice(WORDS) for _ in range(10))
        root = tracer.start_span(
            "faq",
            start_time=start,
            attributes={
                "openinference.span.kind": "CHAIN",
                "input.value": q,
                "output.value": _answer(rng, expected),
                "evalnb.expected": expected,
                "evalnb.condition": '"policy"',
            },
        )
        inside = trace.set_span_in_context(root)
        docs = {
            "openinference.span.kind": "RETRIEVER",
            "retrieval.documents.0.document.content": expected,
        }
        tracer.start_span("retrieve", context=inside, start_time=start + 10, attributes=docs).end(
            start + 20
        )
        llm = {
            "openinference.span.kind": "LLM",
            "llm.model_name": "gpt-faq",
            "llm.token_count.total": 120,
        }
        tracer.start_span("llm", context=inside, start_time=start + 30, attributes=llm).end(
            start + 40
        )
        tool = {"openinference.span.kind": "TOOL", "tool.name": "lookup_policy"}
        tracer.start_span("tool", context=inside, start_time=start + 50, attributes=tool).end(
            start + 60
        )
        root.end(end_time=start + 70)
    # The exporter trails the tracer: wait for every span (shutdown alone gives up at 30 s).
    provider.force_flush(timeout_millis=3_600_000)
    provider.shutdown()
    return requests


def _cli(args: list[str]) -> tuple[float, float, str]:
    """Run ``evalnb`` in a fresh process: seconds, the child's peak RSS (MiB), its output."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "evalnb.cli", *args], capture_output=True, text=True, check=True
    )
    seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return seconds, max(peak, before) / 1024, done.stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spans", type=int, default=1_000_000)
    parser.add_argument("--out", type=Path, default=ROOT / "out" / "bench-monitor")
    args = parser.parse_args()
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    folder = out / f"otlp-{args.spans}"
    cal = out / "calibration.json"
    if not cal.exists():
        bundle(out)
    if not folder.exists():
        started = time.perf_counter()
        n = traffic(folder, args.spans)
        print(f"wrote {n:,} traces ({args.spans:,} spans) in {time.perf_counter() - started:.0f} s")
    size = sum(p.stat().st_size for p in folder.iterdir()) / 2**20
    print(f"{len(list(folder.iterdir()))} OTLP files, {size:,.0f} MiB")
    store = out / "monitor.duckdb"
    for p in out.glob("monitor.duckdb*"):
        p.unlink()
    common = ["--bundle", str(cal), "--store", str(store)]
    cold, rss, said = _cli(["monitor", "ingest", str(folder), *common])
    print(f"cold ingest, whole process: {cold:.1f} s, peak RSS {rss:,.0f} MiB\n  {said}")
    again, _, said = _cli(["monitor", "ingest", str(folder), *common])
    print(f"rerun with nothing new, whole process: {again:.2f} s\n  {said}")
    warm_compare(store, cal)


def warm_compare(store: Path, cal: Path) -> None:
    """The monitor's ingest of a frame against plain evaluate, both warm, in this process."""
    import polars as pl  # noqa: PLC0415

    import evalnb  # noqa: PLC0415
    from evalnb.monitoring.monitor import Monitor  # noqa: PLC0415

    mon = Monitor(cal, store)
    requests = mon.store.read(
        'SELECT trace_id, "at", model, prompt, actual, context, expected, condition, error '
        "FROM traces ORDER BY trace_id LIMIT 50000"
    )
    lab_frame = requests.select(
        pl.col("trace_id").alias("case_id"), "prompt", "actual", "context", "expected", "condition"
    )
    evaluators = list(mon.spec.evaluators)
    evalnb.evaluate(evalnb.load(lab_frame.head(100)), evaluators, progress=False)  # warm
    started = time.perf_counter()
    evalnb.evaluate(evalnb.load(lab_frame), evaluators, progress=False, **mon.spec.evaluators)
    plain = time.perf_counter() - started
    fresh = store.with_name("warm.duckdb")
    for p in store.parent.glob("warm.duckdb*"):
        p.unlink()
    warm = Monitor(cal, fresh)
    started = time.perf_counter()
    warm.ingest(requests)
    monitored = time.perf_counter() - started
    print(
        f"warm, {requests.height:,} requests: evaluate {plain:.2f} s, Monitor.ingest "
        f"{monitored:.2f} s (ratio {monitored / plain:.2f}: the bookkeeping's cost)"
    )


if __name__ == "__main__":
    main()
