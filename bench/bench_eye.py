"""Eval eye interaction latency on a large lab (issue 5 target: < 200 ms per interaction).

Usage: .venv/bin/python bench/bench_eye.py [--cases 250000] [--models 4]

Builds a lab of cases × models outputs (1M by default) whose scores are drawn at random for
the metrics of real evaluators (ROUGE, PII leakage, groundedness, context MRR: the specs,
thresholds and domains are the catalog's), then times, in one process, what one click
costs in the kernel: computing the level's tables and encoding them as the Arrow IPC bytes
the browser receives. The one-time index build is reported separately. There is no peer
tool with a drill-down to compare against; the figure is checked against the target.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import evalnb
from bench.common import peak_rss_gb
from evalnb.evaluation.catalog import get_evaluator
from evalnb.evaluation.engine import merge_metrics
from evalnb.lab.schema import SCHEMAS

EVALUATORS = ("rouge", "pii_leakage", "groundedness", "context_mrr")


def build(n_cases: int, n_models: int, seed: int = 0) -> evalnb.Lab:
    """The lab, built column by column in Polars (no Python lists of a million strings).

    So the peak memory this script reports is the eye's and the lab's, not the builder's.
    """
    rng = np.random.default_rng(seed)
    topics = pl.Series(["loans", "cards", "travel", "security", "mortgages", "accounts"])
    qtypes = pl.Series(["factoid", "yes_no", "procedural", "comparison", "definition"])
    index = pl.int_range(n_cases, eager=True).alias("i")
    case_id = pl.format("case-{}", pl.col("i").cast(pl.String).str.zfill(7))
    cases = pl.DataFrame(index).select(
        case_id.alias("case_id"),
        pl.format("question {}?", "i").alias("prompt"),
        pl.concat_list(pl.format("answer {}.", "i")).alias("expected"),
        topic=topics.gather(rng.integers(0, topics.len(), n_cases)),
        question_type=qtypes.gather(rng.integers(0, qtypes.len(), n_cases)),
    )
    models = [f"model-{k}" for k in range(n_models)]
    outputs = pl.concat(
        [
            pl.DataFrame(index).select(
                case_id.alias("case_id"),
                model=pl.lit(model),
                sample=pl.lit(0, pl.Int64),
                actual=pl.format("answer {}. More text.", "i"),
                context=pl.concat_list(pl.format("chunk about {}.", "i")),
                cost=rng.uniform(0, 0.01, n_cases),
                duration_s=rng.uniform(0.2, 4, n_cases),
            )
            for model in models
        ]
    )
    metrics = pl.DataFrame(schema=SCHEMAS["metrics"])
    parts = []
    for ev in EVALUATORS:
        cls = get_evaluator(ev)
        metrics = merge_metrics(metrics, cls)
        for spec in cls.metrics:
            for k, model in enumerate(models):
                parts.append(
                    cases.select("case_id").with_columns(
                        model=pl.lit(model),
                        sample=pl.lit(0, pl.Int64),
                        evaluator=pl.lit(ev),
                        metric=pl.lit(spec.key),
                        value=rng.beta(2 + k, 2, n_cases),
                        detail=pl.lit(None, pl.String),
                        params=pl.lit("{}"),
                    )
                )
    return evalnb.Lab(
        {"cases": cases, "outputs": outputs, "scores": pl.concat(parts), "metrics": metrics}
    )


def timed(step: object, reset: object, repeat: int = 5) -> tuple[float, float]:
    """Median and worst milliseconds of ``step`` over ``repeat`` runs, ``reset`` untimed.

    Each run must really change the state, or traitlets skips the observers.
    """
    runs = []
    for _ in range(repeat):
        reset()  # type: ignore[operator]
        start = time.perf_counter()
        step()  # type: ignore[operator]
        runs.append((time.perf_counter() - start) * 1000)
    return statistics.median(runs), max(runs)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=250_000)
    parser.add_argument("--models", type=int, default=4)
    args = parser.parse_args()
    start = time.perf_counter()
    lab = build(args.cases, args.models)
    print(
        f"lab: {lab.outputs.height:,} outputs, {lab.scores.height:,} scores "
        f"(built in {time.perf_counter() - start:.1f} s)"
    )
    before = peak_rss_gb()
    start = time.perf_counter()
    w = lab.eye()
    print(
        f"eye opened (index: verdicts, leaderboard, problems) in "
        f"{time.perf_counter() - start:.1f} s (target ≤ 3 s); peak RSS {before:.2f} GB before, "
        f"{peak_rss_gb():.2f} GB after (target ≤ 2 GB)"
    )
    worst_case = lab.outputs["case_id"][args.cases // 2]
    model = "model-1"
    steps = [
        ("top level", lambda: setattr(w, "path", [])),
        ("domain", lambda: setattr(w, "path", ["generation"])),
        ("evaluator", lambda: setattr(w, "path", ["summarization", "rouge"])),
        ("metric", lambda: setattr(w, "path", ["summarization", "rouge", "rouge_l"])),
        ("model (dots)", lambda: setattr(w, "path", ["summarization", "rouge", "rouge_l", model])),
        ("compare", lambda: setattr(w, "compare", ["groundedness", "groundedness"])),
        (
            "case panel",
            lambda: setattr(w, "selected_case", {"case_id": worst_case, "model": model}),
        ),
    ]
    print(
        f"{'interaction':<14} {'median ms':>10} {'worst ms':>9} {'bytes sent':>11}  target < 200 ms"
    )
    resets = {
        "compare": lambda: setattr(w, "compare", []),
        "case panel": lambda: setattr(w, "selected_case", None),
    }
    for name, step in steps:
        reset = resets.get(name, lambda: setattr(w, "path", ["privacy"]))
        med, worst = timed(step, reset)
        sent = sum(len(getattr(w, t)) for t in ("_nodes", "_bars", "_dots", "_bins"))
        ok = "ok" if worst < 200 else "MISSED"
        print(f"{name:<14} {med:>10.1f} {worst:>9.1f} {sent:>11,}  {ok}")
    print(f"peak RSS {peak_rss_gb():.2f} GB")


if __name__ == "__main__":
    main()
