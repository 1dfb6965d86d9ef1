"""The ``evalnb`` command: import, evaluate, describe and report lab stores; run the demo."""

from __future__ import annotations

import argparse
import json
import logging
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalnb.api.lab import load, open_lab
from evalnb.cli.demo_cmd import add_demo_parser, run_demo
from evalnb.cli.gate_cmd import add_gate_parser, run_gate
from evalnb.cli.harbor_metric import harbor_metrics, read_rewards, write_json_atomic
from evalnb.cli.harpia import run_harpia
from evalnb.cli.monitor_cmd import add_monitor_parser, run_monitor_command
from evalnb.cli.review_cmd import add_review_parser, run_review_command
from evalnb.cli.show import describe, say, show, table_text
from evalnb.cli.workflow_cmd import add_workflow_parser, run_workflow_command
from evalnb.evaluation.engine import evaluate, evaluators
from evalnb.evaluation.ray_engine import RayEngine
from evalnb.io.load import FORMATS
from evalnb.lab.errors import EvalnbError
from evalnb.lab.store import is_store
from evalnb.lab.version import __version__

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["main"]


def build_parser() -> argparse.ArgumentParser:
    """Return the command line's parser: one ``_add_*_parser`` per command."""
    parser = argparse.ArgumentParser(
        prog="evalnb", description="Evaluate LLM and RAG test labs (see README.md)."
    )
    parser.add_argument("--version", action="version", version=f"evalnb {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    for add in (
        _add_import_parser,
        _add_evaluate_parser,
        _add_lab_parsers,
        _add_metric_parser,
        _add_harpia_parser,
        _add_calibrate_parser,
        add_workflow_parser,
        add_review_parser,
        add_monitor_parser,
        add_gate_parser,
        add_demo_parser,
    ):
        add(sub)
    return parser


def _add_import_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``import FILE --to LAB.duckdb``: a source file into a store."""
    imp = sub.add_parser("import", help="import a source file into a DuckDB lab store")
    imp.add_argument("file", type=Path, help="source file (format detected unless --format)")
    imp.add_argument("--to", type=Path, required=True, help="the LAB.duckdb store to write")
    imp.add_argument("--format", choices=sorted(FORMATS), help="skip format detection")
    imp.add_argument(
        "--map",
        action="append",
        default=[],
        metavar="FIELD=COLUMN",
        help="column mapping for generic tables, e.g. --map prompt=question",
    )
    imp.add_argument(
        "--replace", action="store_true", help="replace the store's content instead of adding"
    )
    imp.add_argument(
        "--on-disk",
        action="store_true",
        help="keep outputs and scores as Parquet parts beside the store, read lazily (labs "
        "larger than memory; see docs/workflows/scale.md)",
    )


def _add_evaluate_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``evaluate SOURCE -e ID``: run evaluators and save the scores."""
    ev = sub.add_parser(
        "evaluate", help="run evaluators over a lab store (or a source file) and save the scores"
    )
    ev.add_argument("source", type=Path, help="a LAB.duckdb store, or a source file to import")
    ev.add_argument(
        "-e",
        "--evaluator",
        action="append",
        required=True,
        metavar="ID",
        help="evaluator id (repeat for several; `evalnb evaluators` lists them)",
    )
    ev.add_argument(
        "--to",
        type=Path,
        help="store to write (default: the store given as source; required for a source file)",
    )
    ev.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="evaluator parameter; VALUE is read as JSON when it parses, else as "
        "text, e.g. --set model=all-MiniLM-L6-v2 --set lowercase=true",
    )
    ev.add_argument(
        "--map",
        action="append",
        default=[],
        metavar="FIELD=COLUMN",
        help="column mapping when the source is a generic table",
    )
    ev.add_argument(
        "--engine",
        choices=("local", "ray"),
        default="local",
        help="local (this process, default) or ray: Ray Data over a cluster "
        "(pip install 'evalnb[ray]')",
    )
    ev.add_argument(
        "--address",
        metavar="ADDRESS",
        help="Ray cluster address for --engine ray (e.g. auto, ray://head:10001, "
        "HOST:6379); default: $RAY_ADDRESS, else a new local cluster",
    )
    ev.add_argument(
        "--shards",
        type=Path,
        metavar="FOLDER",
        help="with --engine ray: a folder every node reads for the row shards "
        "(required on a multi-node cluster)",
    )


def _add_lab_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``evaluators``, ``info STORE`` and ``report STORE``: read a catalog or a store."""
    sub.add_parser("evaluators", help="list the evaluator catalog (id, domain, title)")
    info = sub.add_parser("info", help="describe a lab store")
    info.add_argument("store", type=Path, help="the LAB.duckdb store to describe")
    rep = sub.add_parser(
        "report", help="write the HTML report (and the ZIP archive) of a lab store"
    )
    rep.add_argument("store", type=Path, help="the LAB.duckdb store to report on")
    rep.add_argument("-o", "--output", type=Path, required=True, help="HTML file to write")
    rep.add_argument("--zip", type=Path, default=None, help="also write the archive here")


def _add_metric_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``metric``: Harbor's aggregate of a rewards JSONL."""
    metric = sub.add_parser(
        "metric", help="Harbor metric: aggregate a rewards JSONL into a JSON of numbers"
    )
    metric.add_argument(
        "-i",
        "--input-path",
        type=Path,
        required=True,
        help="rewards JSONL, one JSON object per trial",
    )
    metric.add_argument(
        "-o",
        "--output-path",
        type=Path,
        required=True,
        help="JSON file of the aggregated numbers to write",
    )
    metric.add_argument(
        "--aggregate",
        default="mean",
        help="comma-separated: mean, pass_rate, median, min, max, sum, count, std, or "
        "module:function (default: mean)",
    )
    metric.add_argument(
        "--pass-threshold",
        type=float,
        default=1.0,
        help="reward from which a trial passes, for pass_rate (default: 1.0)",
    )
    metric.add_argument("--ci", type=float, help="bootstrap confidence level, e.g. 0.95")
    metric.add_argument(
        "--resamples", type=int, default=2000, help="bootstrap resamples for --ci (default: 2000)"
    )
    metric.add_argument("--seed", type=int, default=0, help="bootstrap seed (default: 0)")


def _add_harpia_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``harpia INPUT -o OUTPUT``: the metrics a HarpIA input asks for."""
    harpia = sub.add_parser("harpia", help="HarpIA: run the metrics an input JSON asks for")
    harpia.add_argument("input", type=Path, help="HarpIA input JSON")
    harpia.add_argument(
        "-o", "--output", type=Path, required=True, help="HarpIA output JSON to write"
    )
    harpia.add_argument("--log", type=Path, help="JSONL log, one line per (instance, metric)")


def _add_calibrate_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``calibrate export STORE``: a guardrail configuration and a corpus patch."""
    cal = sub.add_parser("calibrate", help="human calibration: export its results")
    cal_sub = cal.add_subparsers(dest="calibrate_command", required=True)
    export = cal_sub.add_parser(
        "export", help="write the guardrail configuration and the corpus patch of a lab store"
    )
    export.add_argument("store", type=Path, help="the LAB.duckdb store holding the labels")
    export.add_argument("--guardrail", type=Path, help="guardrail configuration JSON to write")
    export.add_argument("--corpus-patch", type=Path, help="corpus patch Markdown to write")
    export.add_argument("--corpus-patch-json", type=Path, help="corpus patch JSON to write")
    export.add_argument(
        "--all-thresholds",
        action="store_true",
        help="guardrail: include thresholds that were not calibrated (user or default)",
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the process exit status."""
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    words = list(sys.argv[1:] if argv is None else argv)
    try:
        args = build_parser().parse_args(words)
    except SystemExit as exc:
        # argparse exits 2 on a mistyped option, which is `gate`'s "inconclusive": a CI step
        # must tell a typo (3, as any gate that cannot decide) from a run that cannot tell.
        if exc.code == 2 and words[:1] == ["gate"]:
            return 3
        raise
    try:
        if args.command == "import":
            return _import(args)
        if args.command == "metric":
            return _metric(args)
        if args.command == "evaluate":
            return _evaluate(args)
        if args.command == "evaluators":
            say(table_text(evaluators().select("id", "domain", "title")))
            return 0
        if args.command == "harpia":
            run_harpia(args.input, args.output, args.log)
            return 0
        if args.command == "report":
            lab = open_lab(args.store)
            lab.report(args.output)
            written = [str(args.output)] + ([str(lab.archive(args.zip))] if args.zip else [])
            say("wrote " + ", ".join(written))
            return 0
        if args.command == "calibrate":
            return _calibrate_export(args)
        if args.command == "workflow":
            return run_workflow_command(args, show)
        if args.command == "review":
            return run_review_command(args, show)
        if args.command == "monitor":
            return run_monitor_command(args, show)
        if args.command == "info":
            say(describe(open_lab(args.store)))
            return 0
        if args.command == "gate":
            return run_gate(args)
        return run_demo(args.out, args.local_judge)
    except (EvalnbError, TypeError, ValueError) as exc:
        print(f"evalnb: error: {cli_terms(str(exc))}", file=sys.stderr)
        return 2
    except OSError as exc:  # a full disk, a missing folder: the output file was not written
        print(f"evalnb: error: {exc}", file=sys.stderr)
        return 1


# The loaders' hints speak Python (``load(path, model='llm')``, ``prompt='column'``); on the
# command line the same mapping is a --map flag.
_PY_LOAD = re.compile(r"(?:evalnb\.)?load\(path, (\w+)=(['\"])([^'\"]+)\2\)")
_PY_MAPPING = re.compile(r"\b(\w+)=(['\"])column\2")


def cli_terms(message: str) -> str:
    """Say a loader's error in command-line terms: a mapping hint becomes a ``--map`` flag.

    Examples
    --------
    >>> cli_terms("map the column naming the model, e.g. load(path, model='llm').")
    'map the column naming the model, e.g. --map model=llm.'
    >>> cli_terms("expected a prompt column or prompt='column'")
    'expected a prompt column or --map prompt=COLUMN'
    """
    message = _PY_LOAD.sub(r"--map \1=\3", message)
    return _PY_MAPPING.sub(r"--map \1=COLUMN", message)


def _calibrate_export(args: argparse.Namespace) -> int:
    if not (args.guardrail or args.corpus_patch or args.corpus_patch_json):
        msg = "nothing to export: pass --guardrail FILE and/or --corpus-patch FILE"
        raise ValueError(msg)
    lab = open_lab(args.store)
    written = []
    if args.guardrail:
        config = lab.calibration.guardrail_config(
            args.guardrail, include_uncalibrated=args.all_thresholds
        )
        n = sum(len(m) for m in config["calibrated_thresholds"].values())
        written.append(f"{args.guardrail} ({n} threshold(s))")
    if args.corpus_patch or args.corpus_patch_json:
        patch = lab.calibration.corpus_patch(args.corpus_patch, args.corpus_patch_json)
        written += [
            f"{p} ({patch.height} answer(s))"
            for p in (args.corpus_patch, args.corpus_patch_json)
            if p
        ]
    say("wrote " + ", ".join(written))
    return 0


def _pairs(items: list[str], option: str) -> dict[str, str]:
    """Split ``NAME=VALUE`` items into a dict, or raise a TypeError naming a malformed one."""
    out: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name:
            msg = f"{option} expects NAME=VALUE, got {item!r}"
            raise TypeError(msg)
        out[name] = value
    return out


def _value(text: str) -> object:
    """Read a --set value: JSON when it parses (numbers, true/false, lists), else the text."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def _evaluate(args: argparse.Namespace) -> int:
    if is_store(args.source):  # by its content, as opening it checks, not by its name
        lab, target = open_lab(args.source), args.to or args.source
        if target != args.source:  # score a copy, leaving the source store as it was
            lab.save(target)
            lab = open_lab(target)
    else:
        if args.to is None:
            msg = f"{args.source} is a source file: pass --to LAB.duckdb to keep its scores"
            raise ValueError(msg)
        # Parse and check everything before the store is touched: a bad file writes nothing.
        lab = load(args.source, **_pairs(args.map, "--map"))
        if args.to.exists():
            lab = open_lab(args.to).merge(lab)
        lab.save(args.to)
        lab, target = open_lab(args.to), args.to
    params: dict[str, Any] = {k: _value(v) for k, v in _pairs(args.set, "--set").items()}
    if reserved := {"progress", "judge", "engine"} & set(params):
        msg = f"--set {sorted(reserved)[0]}=… is not an evaluator parameter"
        raise ValueError(msg)
    if args.engine == "local" and (args.address or args.shards):
        msg = "--address and --shards go with --engine ray"
        raise ValueError(msg)
    engine = (
        RayEngine(address=args.address, shards=args.shards) if args.engine == "ray" else "local"
    )
    # A store-backed lab writes its scores to the store in one transaction.
    lab = evaluate(lab, list(args.evaluator), progress=sys.stderr.isatty(), engine=engine, **params)
    say(f"evaluated {', '.join(args.evaluator)} → {target}\n{describe(lab)}")
    return 0


def _import(args: argparse.Namespace) -> int:
    mapping: dict[str, object] = dict(_pairs(args.map, "--map"))
    # Parse and check everything before the store is touched: a bad file writes nothing.
    lab = load(args.file, format=args.format, **mapping)
    if args.to.exists() and not args.replace:
        lab = open_lab(args.to).merge(lab)
    lab.save(args.to, on_disk=("outputs", "scores") if args.on_disk else None)
    say(f"imported {args.file} into {args.to}\n{describe(lab)}")
    return 0


def _metric(args: argparse.Namespace) -> int:
    rewards = read_rewards(args.input_path)
    result = harbor_metrics(
        rewards,
        [a.strip() for a in args.aggregate.split(",") if a.strip()],
        pass_threshold=args.pass_threshold,
        ci=args.ci,
        resamples=args.resamples,
        seed=args.seed,
    )
    write_json_atomic(args.output_path, result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
