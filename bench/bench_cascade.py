"""A calibrated cascade against the strong judge alone: cost, coverage, agreement, κ with the truth.

Run: ``python bench/bench_cascade.py [N] [LABELS]`` (default 1,000 answers, 300 labels).
Two scripted judges on loopback servers (``evalnb_testkit.tiered_judges``): a cheap one
(free, a local model's price) that is right 75 % of the time and knows when it is unsure,
and a strong one at a hosted model's prices (US$2.50 / 10 per 1M tokens) that is right 97 %
of the time. A random ``LABELS`` of the answers carry the truth as reviewers' labels; the
cascade is calibrated on them (target 0.9, δ 0.1) and judges every answer. Printed, for the
cascade and for the strong judge alone on the same answers: cost, strong calls, coverage
(answers given a verdict), agreement with the truth on the verdicts given and Cohen's κ.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import evalnb  # noqa: E402
from evalnb.calibration.labels import cohen_kappa  # noqa: E402
from evalnb_testkit.llm_server import LoopbackLLM  # noqa: E402
from evalnb_testkit.tiered_judges import cheap_judge, strong_judge, tiered_lab  # noqa: E402


def _verdicts(lab: evalnb.Lab, truth: dict[str, bool]) -> tuple[float, float, float]:
    scores = lab.scores.filter(pl.col("metric") == "binary_judge")
    given = scores.filter(pl.col("value").is_not_null())
    said = (given["value"] >= 0.5).to_numpy()
    real = np.array([truth[c] for c in given["case_id"]])
    return given.height / scores.height, float((said == real).mean()), cohen_kappa(said, real)


def main(n: int = 1000, labels: int = 300) -> None:
    frame, truth = tiered_lab(n, seed=1)
    lab = evalnb.load(frame)
    rng = np.random.default_rng(2)
    for case_id in rng.choice(sorted(truth), size=labels, replace=False):
        verdict = "pass" if truth[case_id] else "fail"
        lab.calibration.add_label(
            case_id, lab.models[0], "binary_judge", "binary_judge", verdict, reviewer="truth"
        )
    cache = Path(tempfile.mkdtemp())
    with LoopbackLLM(raw=cheap_judge) as low, LoopbackLLM(raw=strong_judge) as high:
        cheap = evalnb.LLMClient(low.base_url, "cheap", prices=(0.0, 0.0), cache=cache / "a")
        strong = evalnb.LLMClient(
            high.base_url, "strong", prices=(2.5, 10.0), cache=cache / "b", concurrency=32
        )
        started = time.monotonic()
        judge = evalnb.cascade([cheap, strong], target=0.9, delta=0.1)
        judge = judge.calibrate(lab, "binary_judge", assume_random=True)
        calibrated = time.monotonic() - started
        # calibration included: its strong calls are the labelled answers it escalated,
        # whose replies scoring then finds in the cache
        scored = evalnb.evaluate(lab, "binary_judge", judge=judge, progress=False)
        cascade_cost, cascade_calls = strong.stats.cost, high.total_calls
        alone = strong.with_settings(cache=cache / "c")
        cost1, calls1 = strong.stats.cost, high.total_calls
        only = evalnb.evaluate(lab, "binary_judge", judge=alone, progress=False)
        alone_cost, alone_calls = strong.stats.cost - cost1, high.total_calls - calls1
    cal = judge.calibration or {}
    print(
        f"{n} answers, {labels} random labels; target 0.9, delta 0.1 (calibrated in {calibrated:.1f} s)"
    )
    for tier in cal.get("tiers", []):
        print(
            f"  tier {tier['tier']} ({tier['model']}): threshold {tier['threshold']}, kept "
            f"{tier['kept']} of {tier['reached']} labelled (agreement {tier['agreement']:.3f})"
        )
    print(scored.judges.cascade_report("binary_judge"))
    paid = cascade_cost
    for name, data, cost, calls in (
        ("cascade", scored, paid, cascade_calls),
        ("strong alone", only, alone_cost, alone_calls),
    ):
        coverage, agreement, kappa = _verdicts(data, truth)
        print(
            f"  {name:<13} cost ${cost:.4f}  strong calls {calls:>5}  coverage {coverage:.3f}  "
            f"agreement {agreement:.3f}  kappa {kappa:.3f}"
        )
    print(f"  cascade cost (calibration included) / strong alone: {paid / alone_cost:.2f}")


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3]))
