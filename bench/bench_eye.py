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
import resource
import statistics
import time

import numpy as np
import polars as pl

import evalnb
from evalnb.evaluation.catalog import get_evaluator
from evalnb.evaluation.engine import _merge_metrics
from evalnb.lab.schema import SCHEMAS

EVALUATORS = ("rouge", "pii_leakage", "groundedness", "context_mrr")


def build(n_cases: int, n_models: int, seed: int = 0) -> evalnb.Lab:
    rng = np.random.default_rng(seed)
    case_ids = [f"case-{i:07d}" for i in range(n_cases)]
    models = [f"model-{k}" for k in range(n_models)]
    topics = np.array(["loans", "cards", "travel", "security", "mortgages", "accounts"])
    qtypes = np.array(["factoid", "yes_no", "procedural", "comparison", "definition"])
    cases = pl.DataFrame({"case_id": case_ids, "prompt": [f"question {i}?" for i in range(n_cases)],
                          "expected": [[f"answer {i}."] for i in range(n_cases)],
                          "topic": topics[rng.integers(0, topics.size, n_cases)],
                          "question_type": qtypes[rng.integers(0, qtypes.size, n_cases)]})  # fmt: skip
    outputs = pl.DataFrame({
        "case_id": case_ids * n_models, "model": np.repeat(models, n_cases),
        "sample": np.zeros(n_cases * n_models, dtype=np.int64),
        "actual": [f"answer {i}. More text." for i in range(n_cases)] * n_models,
        "context": [[f"chunk about {i}."] for i in range(n_cases)] * n_models,
        "cost": rng.uniform(0, 0.01, n_cases * n_models),
        "duration_s": rng.uniform(0.2, 4, n_cases * n_models),
    })  # fmt: skip
    metrics = pl.DataFrame(schema=SCHEMAS["metrics"])
    parts = []
    for ev in EVALUATORS:
        cls = get_evaluator(ev)
        metrics = _merge_metrics(metrics, cls)
        for spec in cls.metrics:
            for k, model in enumerate(models):
                values = rng.beta(2 + k, 2, n_cases)
                parts.append(pl.DataFrame({
                    "case_id": case_ids, "model": model, "sample": 0, "evaluator": ev,
                    "metric": spec.key, "value": values, "detail": None, "params": "{}",
                }, schema_overrides={"detail": pl.String}))  # fmt: skip
    return evalnb.Lab({"cases": cases, "outputs": outputs, "scores": pl.concat(parts),
                       "metrics": metrics})  # fmt: skip


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
    print(f"lab: {lab.outputs.height:,} outputs, {lab.scores.height:,} scores "
          f"(built in {time.perf_counter() - start:.1f} s)")  # fmt: skip
    start = time.perf_counter()
    w = lab.eye()
    print(f"eye opened (index: verdicts, leaderboard, problems, partitions) in "
          f"{time.perf_counter() - start:.1f} s")  # fmt: skip
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
    resets = {"compare": lambda: setattr(w, "compare", []),
              "case panel": lambda: setattr(w, "selected_case", None)}  # fmt: skip
    for name, step in steps:
        reset = resets.get(name, lambda: setattr(w, "path", ["privacy"]))
        med, worst = timed(step, reset)
        sent = sum(len(getattr(w, t)) for t in ("_nodes", "_bars", "_dots", "_bins"))
        ok = "ok" if worst < 200 else "MISSED"
        print(f"{name:<14} {med:>10.1f} {worst:>9.1f} {sent:>11,}  {ok}")
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2
    print(f"peak RSS {rss:.1f} GB")


if __name__ == "__main__":
    main()
