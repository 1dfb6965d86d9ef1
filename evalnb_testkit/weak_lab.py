"""A synthetic lab with one planted weak cell (topic × question type) for weakness tests."""

from __future__ import annotations

import numpy as np
import polars as pl

import evalnb

TOPICS = {
    "loans": ("personal loan", "APR", "repayment term"),
    "cards": ("credit card", "annual fee", "cashback rate"),
    "travel": ("travel insurance", "baggage cover", "trip cancellation"),
    "security": ("online banking", "passcode", "two-factor login"),
    "mortgages": ("fixed mortgage", "deposit", "early repayment penalty"),
}
QTYPES = {
    "factoid": "What is the {b} of the {a}?",
    "yes_no": "Is the {b} of the {a} higher than last year?",
    "procedural": "How do I change the {c} of my {a}?",
    "comparison": "Which has the better {b}, the {a} or the basic {a}?",
}
PLANTED = ("travel", "procedural")


def weak_lab(per_cell: int = 12, seed: int = 0) -> evalnb.Lab:
    """ROUGE-like scores: high everywhere, low in the planted cell; answers say why."""
    rng = np.random.default_rng(seed)
    cases, outputs, scores = [], [], []
    i = 0
    for topic, (a, b, c) in TOPICS.items():
        for qtype, template in QTYPES.items():
            for k in range(per_cell):
                cid = f"c{i:04d}"
                i += 1
                planted = (topic, qtype) == PLANTED
                value = rng.beta(2, 6) if planted else rng.beta(8, 2)
                answer = (
                    f"I could not find how to change the {c}; the documents do not cover it."
                    if planted
                    else f"The {b} of the {a} is listed in the product sheet ({k})."
                )
                cases.append(
                    {
                        "case_id": cid,
                        "prompt": template.format(a=a, b=b, c=c) + f" (#{k})",
                        "expected": [f"answer about {b}"],
                        "topic": topic,
                        "question_type": qtype,
                    }
                )
                outputs.append({"case_id": cid, "model": "m", "sample": 0, "actual": answer})
                scores.append(
                    {
                        "case_id": cid,
                        "model": "m",
                        "sample": 0,
                        "evaluator": "rouge",
                        "metric": "rouge_l",
                        "value": float(value),
                        "params": "{}",
                    }
                )
    metrics = pl.DataFrame(
        [
            {
                "evaluator": "rouge",
                "metric": "rouge_l",
                "domain": "summarization",
                "title": "ROUGE-L",
                "description": "LCS F-measure",
                "min": 0.0,
                "max": 1.0,
                "higher_is_better": True,
                "default_threshold": 0.5,
                "primary": True,
            }
        ]
    )
    return evalnb.Lab(
        {
            "cases": pl.DataFrame(cases),
            "outputs": pl.DataFrame(outputs),
            "scores": pl.DataFrame(scores),
            "metrics": metrics,
        }
    )
