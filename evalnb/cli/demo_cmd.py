"""``evalnb demo``: the bundled demo lab evaluated offline, reported and archived."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from evalnb.api.demo import build_demo_lab
from evalnb.api.lab import Lab, load
from evalnb.cli.show import describe, say
from evalnb.evaluation.engine import evaluate

if TYPE_CHECKING:
    import argparse

    from evalnb.analysis.decide import Decision

__all__ = ["DEMO_EVALUATORS", "add_demo_parser", "run_demo"]

DEMO_EVALUATORS = (
    "text_matching",
    "pii_leakage",
    "sensitive_data_leakage",
    "bleu",
    "rouge",
    "answer_similarity",
    "answer_sentence_similarity",
    "answer_relevancy_similarity",
    "groundedness",
    "context_mrr",
    "context_relevancy",
    "looping_detection",
)
_DEMO_FILE = Path(__file__).resolve().parents[2] / "data" / "demo_lab.json"


def add_demo_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``demo``: the bundled demo lab evaluated, reported and archived."""
    demo = sub.add_parser(
        "demo", help="evaluate the bundled demo lab; write its store, HTML report and archive"
    )
    demo.add_argument("--out", type=Path, default=Path("out/demo"), help="output folder")
    demo.add_argument(
        "--local-judge",
        type=int,
        metavar="N",
        default=0,
        help="also judge N answers with the local llama.cpp judge (pip install 'evalnb[local-judge]')",
    )


_DEMO_JUDGES = ("binary_judge", "sexism")


def _judge_answers(lab: Lab, n: int, out: Path) -> None:
    """Judge the first ``n`` answers with the local judge: the estimate, the run, its report."""
    from evalnb.analysis.estimate import estimate  # noqa: PLC0415 - only with --local-judge
    from evalnb.llm.local_judge import local_judge  # noqa: PLC0415

    judge = local_judge()
    part = Lab({"cases": lab.cases, "outputs": lab.outputs.head(n)})
    say(f"local judge {judge.model}: {estimate(part, list(_DEMO_JUDGES), judge=judge)}")
    judged = evaluate(part, list(_DEMO_JUDGES), judge=judge, progress=sys.stderr.isatty())
    for old in (out / "demo_judged.duckdb", out / "demo_judged.duckdb.wal"):
        old.unlink(missing_ok=True)
    store = judged.save(out / "demo_judged.duckdb")
    say(f"{judged.judges.report()}\njudged answers: {store}")


def _top_two(lab: Lab) -> Decision | None:
    """Decide the leaderboard's first model against its second (the question a team asks)."""
    board = lab.leaderboard().filter(pl.col("primary") & pl.col("pass_rate").is_not_null())
    ranked = (
        board.group_by("model")
        .agg(pl.col("pass_rate").mean())
        .sort(["pass_rate", "model"], descending=[True, False])["model"]
        .to_list()
    )
    if len(ranked) < 2:
        return None
    return lab.decisions.decide(ranked[1], ranked[0], margin=0.02)


def run_demo(out: Path, judged: int = 0) -> int:
    """Evaluate the bundled demo lab into ``out``: its store, report, archive and summary."""
    source = _DEMO_FILE
    out.mkdir(parents=True, exist_ok=True)
    if not source.is_file():  # installed without the source tree: build the same lab
        source = build_demo_lab().export(out / "demo_lab.json")
    lab = load(source)
    # The demo's store is its own output: rebuilt from scratch on every run, so a store left
    # by an older evalnb (or an earlier demo's scores) never blocks or leaks into this one.
    for old in (out / "demo_lab.duckdb", out / "demo_lab.duckdb.wal"):
        old.unlink(missing_ok=True)
    store = lab.save(out / "demo_lab.duckdb")
    # The judge-free evaluators that fit a RAG question-answering lab and run offline with
    # what evalnb installs (the model-backed ones need models from the hub, the demo has no
    # JSON answers or class labels); scores are written to the store.
    lab = evaluate(
        lab, list(DEMO_EVALUATORS), model="all-MiniLM-L6-v2", progress=sys.stderr.isatty()
    )
    if judged:
        _judge_answers(lab, judged, out)
    report = out / "demo_report.html"
    decision = _top_two(lab)
    lab.report(
        report,
        title="evalnb demo: RAG question answering",
        decisions=[decision] if decision is not None else (),
    )
    archive = lab.archive(out / "demo_archive.zip")
    problems = lab.problems()
    say(
        f"demo lab {source} → {store}\n{describe(lab)}\n"
        f"{problems.height} problem(s) ({(problems['severity'] == 'HIGH').sum()} HIGH), "
        f"{lab.insights().height} insight(s)\nreport:  {report}\narchive: {archive}"
    )
    return 0
