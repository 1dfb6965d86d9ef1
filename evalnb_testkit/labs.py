"""Labs with known outcomes, built in memory for the calibration and widget tests."""

from __future__ import annotations

import numpy as np
import polars as pl

import evalnb

__all__ = ["calibrated_lab", "synthetic_lab"]


def synthetic_lab(
    n: int = 2000, seed: int = 0, higher: bool = True
) -> tuple[evalnb.Lab, dict[str, float]]:
    rng = np.random.default_rng(seed)
    values = rng.uniform(0, 1, n)
    ids = [f"c{i}" for i in range(n)]
    cases = pl.DataFrame({"case_id": ids, "prompt": [f"question {i} <b>?</b>" for i in range(n)]})
    outputs = pl.DataFrame(
        {
            "case_id": ids,
            "model": "m",
            "sample": 0,
            "actual": [f"answer {i} <script>x</script>" for i in range(n)],
        }
    )
    scores = pl.DataFrame(
        {
            "case_id": ids,
            "model": "m",
            "sample": 0,
            "evaluator": "ev",
            "metric": "score",
            "value": values,
            "params": "{}",
        }
    )
    metrics = pl.DataFrame(
        [
            {
                "evaluator": "ev",
                "metric": "score",
                "domain": "generation",
                "title": "Score",
                "description": "",
                "min": 0.0,
                "max": 1.0,
                "higher_is_better": higher,
                "default_threshold": 0.5,
                "primary": True,
            }
        ]
    )
    lab = evalnb.Lab({"cases": cases, "outputs": outputs, "scores": scores, "metrics": metrics})
    return lab, dict(zip(ids, values.tolist(), strict=True))


def calibrated_lab(seed: int = 4) -> evalnb.Lab:
    lab, values = synthetic_lab(1500, seed=seed)
    w = evalnb.labeler(lab, "ev", "score", reviewer="ann", n=40, strategy="random", seed=1)
    while w.remaining:
        w.label("pass" if values[w.item["case_id"]] >= 0.4 else "fail")
    lab.calibration.recalibrate("ev", "score")
    return lab
