"""``evalnb review create|status|pull``: a review queue on PostgreSQL, for the team's lead.

``evalnb review server start|stop|status --folder F`` runs a PostgreSQL server of your own
on this machine (:class:`~evalnb.team.local_server.LocalServer`) for a try or a demo: it
keeps running after the command ends, ``start`` on its folder again reopens it, ``stop``
ends it. ``start`` prints the connection string to use as ``--dsn``.

The connection string comes from ``--dsn`` or ``EVALNB_REVIEW_DSN``; keep the password out
of both (a ``~/.pgpass`` file or ``PGPASSWORD``: a password in a command line is visible to
every user of the machine in its process list). It is never printed.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from evalnb.api.lab import open_lab
from evalnb.team.publish import RULES, STRATEGIES, review
from evalnb.team.queue import ReviewQueue

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable

    import polars as pl

__all__ = ["add_review_parser", "run_review_command"]


def add_review_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``review create|status|pull`` to the command line."""
    rv = sub.add_parser("review", help="review as a team: queues on a PostgreSQL server")
    rv_sub = rv.add_subparsers(dest="review_command", required=True)
    create = rv_sub.add_parser("create", help="publish a lab's rows of one metric as a queue")
    create.add_argument("store", type=Path, help="the LAB.duckdb store")
    status = rv_sub.add_parser("status", help="progress per reviewer and agreement")
    pull = rv_sub.add_parser("pull", help="write a queue's labels into a lab store")
    pull.add_argument("store", type=Path, help="the LAB.duckdb store to write the labels to")
    pull.add_argument("--rule", choices=RULES, default="majority", help="which labels to pull")
    for p in (create, status, pull):
        p.add_argument("--name", required=True, help="the queue's name")
        p.add_argument("--dsn", help="PostgreSQL connection string (else EVALNB_REVIEW_DSN)")
    create.add_argument("--evaluator", required=True, help="the evaluator whose metric is reviewed")
    create.add_argument("--metric", required=True, help="the metric whose verdicts are checked")
    create.add_argument("--per-item", type=int, default=3, help="reviewers per item")
    create.add_argument("--n", type=int, help="how many rows (default: all scored rows)")
    create.add_argument(
        "--strategy",
        choices=sorted(STRATEGIES),
        default="uncertainty",
        help="which rows: nearest the threshold (uncertainty), random or stratified",
    )
    create.add_argument("--lease-s", type=float, default=600.0, help="a lease's seconds")
    create.add_argument("--seed", type=int, default=0, help="the sampling seed")
    _add_server_parser(rv_sub)


def _add_server_parser(rv_sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    server = rv_sub.add_parser("server", help="a PostgreSQL server of your own on this machine")
    server.add_argument(
        "action",
        choices=("start", "stop", "status"),
        help="start (or reopen) it, stop it, or say whether it runs and its --dsn",
    )
    server.add_argument(
        "--folder", type=Path, required=True, help="the server's folder (made when new)"
    )
    server.add_argument("--remove", action="store_true", help="with stop: delete the folder too")


def _run_server(args: argparse.Namespace, show: Callable[[pl.DataFrame | str], None]) -> int:
    from evalnb.team.local_server import LocalServer  # noqa: PLC0415 - only this command

    folder: Path = args.folder
    if args.action == "start":
        reopened = LocalServer.at(folder) is not None
        server = LocalServer.start(folder, keep=True)
        show(f"{'reopened' if reopened else 'started'} a server in {folder}: --dsn {server.dsn()}")
        return 0
    found = LocalServer.at(folder)
    if found is None:
        show(f"no evalnb server in {folder} (start one with: evalnb review server start)")
        return 1 if args.action == "status" else 0
    if args.action == "stop":
        found.stop(remove=args.remove)
        show(f"stopped the server in {folder}" + (" and removed it" if args.remove else ""))
        return 0
    running = found.running()
    show(f"{folder}: {'running' if running else 'stopped'}; --dsn {found.dsn()}")
    return 0 if running else 1


def _dsn(args: argparse.Namespace) -> str:
    dsn = args.dsn or os.environ.get("EVALNB_REVIEW_DSN")
    if not dsn:
        msg = "no server: pass --dsn 'postgresql://user@host/db' or set EVALNB_REVIEW_DSN"
        raise ValueError(msg)
    return str(dsn)


def run_review_command(args: argparse.Namespace, show: Callable[[pl.DataFrame | str], None]) -> int:
    """Run one ``review`` subcommand; ``show`` prints a table or text."""
    if args.review_command == "server":
        return _run_server(args, show)
    dsn = _dsn(args)
    if args.review_command == "create":
        lab = open_lab(args.store)
        queue = review(
            lab,
            dsn,
            args.name,
            evaluator=args.evaluator,
            metric=args.metric,
            per_item=args.per_item,
            n=args.n,
            strategy=args.strategy,
            lease_s=args.lease_s,
            seed=args.seed,
        )
        with queue:
            show(f"published {queue.items().height} items as {queue!r}")
        return 0
    with ReviewQueue.open(dsn, args.name) as queue:
        if args.review_command == "status":
            show(queue.progress())
            show(queue.agreement(n_boot=500))
            return 0
        lab = open_lab(args.store)
        added = lab.calibration.pull_labels(queue, rule=args.rule)
        show(
            f"pulled {added.height} labels ({args.rule}) from queue {queue.name!r} into {args.store}"
        )
    return 0
