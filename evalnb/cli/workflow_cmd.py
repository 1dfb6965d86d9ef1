"""``evalnb workflow status|run|approve PATH``: the MRM workflow from a shell."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from evalnb.workflow.core import Workflow
from evalnb.workflow.steps import STEPS, StepWaiting
from evalnb.workflow.system import from_spec

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable

    import polars as pl

__all__ = ["add_workflow_parser", "run_workflow_command"]

WAITING = 3  # exit status: the workflow waits for people (labels), nothing failed


def add_workflow_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``workflow status|run|approve`` to the command line."""
    wf = sub.add_parser("workflow", help="the MRM workflow: status, run, approve")
    wf_sub = wf.add_subparsers(dest="workflow_command", required=True)
    status = wf_sub.add_parser("status", help="each step's status, last run and approval")
    status.add_argument("path", type=Path, help="the workflow's DuckDB store")
    run = wf_sub.add_parser("run", help="run the next step (or --step S, or --all)")
    run.add_argument("path", type=Path, help="the workflow's DuckDB store (created when missing)")
    run.add_argument("--step", choices=[s.name for s in STEPS], help="the step to run")
    run.add_argument("--all", action="store_true", help="run every step not done, in order")
    run.add_argument("--corpus", type=Path, help="the documents' folder (first run)")
    run.add_argument("--system", help="module:function, or 'retrieval-baseline' (default: stored)")
    run.add_argument("--who", help="who runs it (recorded)")
    run.add_argument("--artifacts", type=Path, help="then write report and artifacts here")
    approve = wf_sub.add_parser("approve", help="sign off a step's last run")
    approve.add_argument("path", type=Path, help="the workflow's DuckDB store")
    approve.add_argument("step", choices=[s.name for s in STEPS], help="the step to sign off")
    approve.add_argument("--reviewer", required=True, help="who approves (recorded)")
    approve.add_argument("--note", help="the approval's note")


def _open(args: argparse.Namespace) -> Workflow:
    wf = Workflow(args.path, corpus=getattr(args, "corpus", None))
    system = from_spec(wf.config.get("system", {}), getattr(args, "system", None))
    if system is not None:
        wf = Workflow(args.path, system=system.target, system_name=system.name)
    return wf


def run_workflow_command(
    args: argparse.Namespace, show: Callable[[pl.DataFrame | str], None]
) -> int:
    """Run one ``workflow`` subcommand; ``show`` prints a table or text."""
    if args.workflow_command == "status":
        if not args.path.exists():
            msg = f"{args.path}: no workflow store; start one with `evalnb workflow run {args.path} --corpus DIR --system ...`"
            raise ValueError(msg)
        show(
            _open(args)
            .status()
            .select("step", "status", "why", "duration_s", "ran_by", "approved_by")
        )
        return 0
    wf = _open(args)
    if args.workflow_command == "approve":
        wf.approve(args.step, args.reviewer, args.note)
        show(f"{args.step}: approved by {args.reviewer}")
        return 0
    code = 0
    try:
        if args.all:
            wf.run_all(who=args.who)
            status = wf.status()
            waiting = status.filter(status["status"] == "waiting")
            if waiting.height:
                print(f"evalnb: waiting: {waiting['why'][0]}", file=sys.stderr)
                code = WAITING
        else:
            wf.run(args.step, who=args.who)
    except StepWaiting as exc:
        print(f"evalnb: waiting: {exc}", file=sys.stderr)
        code = WAITING
    show(wf.status().select("step", "status", "why", "duration_s"))
    if args.artifacts:
        paths = wf.artifacts(args.artifacts)
        show("wrote " + ", ".join(str(p) for p in paths.values()))
    return code
