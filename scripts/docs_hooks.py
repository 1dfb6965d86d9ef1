"""MkDocs hook: fill the generated sections of the docs from the code itself.

A page holds a marker such as ``<!-- evalnb:catalog -->``; the build replaces it with what
the code says now (the evaluator catalog, the command line's help, the formats, the column
names auto-detection tries), so these pages cannot drift from the product. An unknown
marker, or a loader field with no description here, stops the build.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
from contextlib import redirect_stdout
from typing import TYPE_CHECKING, Any

from mkdocs.exceptions import PluginError

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

MARKER = re.compile(r"<!-- evalnb:(\w+) -->")

# What each loader field holds: the left column of the auto-detection table.
FIELD_HELP = {
    "case_id": "the test case's id (else a content hash of prompt, system and expected)",
    "test_id": "the id of the test (suite) the case belongs to",
    "prompt": "the question or instruction sent to the model (required)",
    "system": "the system prompt",
    "expected": "the expected answer(s): text, or a JSON list of texts",
    "condition": "an H2O condition for the text-matching evaluator",
    "constraints": "constraints the answer must respect",
    "categories": "categories of the case: text or a JSON list",
    "topic": "the case's topic (the weakness grid's rows)",
    "question_type": "the case's question type (the weakness grid's columns)",
    "language": "the case's language, an ISO 639-1 code (else detected: lab.languages.set)",
    "corpus": "the documents the case was written from",
    "perturbation_of": "the id of the case this one perturbs",
    "perturbation": "the perturbation applied (kind and intensity)",
    "model": "the model that answered (long tables: one row per answer)",
    "sample": "the sample number when a model answered a case several times",
    "actual": "the model's answer",
    "reasoning": "the model's reasoning text, kept apart from the answer",
    "context": "the retrieved contexts: text or a JSON list (image paths and URLs among them are read as media)",
    "duration_s": "seconds the answer took",
    "cost": "what the answer cost",
    "error": "the error the model or host returned instead of an answer",
    "media": "the case's images, audio, video or documents: a path, URL, data URL, bytes, a datasets image/audio value, or a list of them",
    "answer_media": "media in the answer (an image the model made), as `media`",
    "context_media": "media among the retrieved contexts (a page image, a figure), as `media`",
}


def _cell(text: object) -> str:
    """One Markdown table cell: pipes escaped, line breaks folded."""
    return str(text).replace("|", r"\|").replace("\n", " ")


def _formats() -> str:
    from evalnb import FORMATS  # noqa: PLC0415 - the docs build imports evalnb on demand

    rows = "\n".join(f"| `{name}` | {_cell(what)} |" for name, what in FORMATS.items())
    return "| format | what |\n|---|---|\n" + rows


def _columns() -> str:
    from evalnb.io.tabular import FIELDS  # noqa: PLC0415

    missing = sorted(set(FIELDS) - set(FIELD_HELP))
    if missing:
        msg = f"scripts/docs_hooks.py: describe the loader fields {missing} in FIELD_HELP"
        raise PluginError(msg)
    rows = "\n".join(
        f"| `{field}` | {', '.join(f'`{c}`' for c in columns)} | {_cell(FIELD_HELP[field])} |"
        for field, columns in FIELDS.items()
    )
    return "| field | columns tried, in order | what it holds |\n|---|---|---|\n" + rows


def _catalog() -> str:
    from evalnb import evaluators  # noqa: PLC0415

    table = evaluators().sort("domain", "id")
    out: list[str] = [f"{table.height} evaluators in {table['domain'].n_unique()} domains.\n"]
    for domain in table["domain"].unique(maintain_order=True).to_list():
        part = table.filter(table["domain"] == domain)
        out.append(f"## {domain}\n")
        out.append("| id | title | needs | metrics |\n|---|---|---|---|")
        for row in part.iter_rows(named=True):
            metrics = ", ".join(
                f"**{m}**" if m == row["primary"] else m for m in row["metrics"] or []
            )
            judge = " (LLM judge)" if row["judge"] else ""
            out.append(
                f"| [`{row['id']}`](#{row['id']}) | {_cell(row['title'])}{judge} | "
                f"{', '.join(row['requires'] or [])} | {metrics} |"
            )
        out.append("")
        for row in part.iter_rows(named=True):
            out.append(f"### `{row['id']}` {{#{row['id']}}}\n")
            out.append(f"{row['title']}. {row['description']}\n")
            params: dict[str, dict[str, Any]] = json.loads(row["params"] or "{}")
            if params:
                out.append("| parameter | type | default |\n|---|---|---|")
                out.extend(
                    f"| `{name}` | {spec.get('type', '')} | `{_cell(json.dumps(spec.get('default')))}` |"
                    for name, spec in params.items()
                )
                out.append("")
    return "\n".join(out)


def _namespaces() -> str:
    """Each namespace of ``Lab`` and its methods, each rendered from its floor function."""
    from evalnb import Lab  # noqa: PLC0415
    from evalnb.api.binding import bound, namespace  # noqa: PLC0415

    parts = []
    for space, desc in vars(Lab).items():
        if not isinstance(desc, namespace):
            continue
        doc = (desc.cls.__doc__ or "").strip()
        parts.append(f"### `lab.{space}`\n\n{doc}\n")
        for name, marker in vars(desc.cls).items():
            if isinstance(marker, bound):
                floor = marker.floor
                parts.append(
                    f"#### `lab.{space}.{name}`\n\nThe function "
                    f"`{floor.__module__}.{floor.__qualname__}` with the lab as its first "
                    f"argument:\n\n::: {floor.__module__}.{floor.__qualname__}\n"
                    "    options:\n      show_root_heading: false\n"
                )
    return "\n".join(parts)


def _moved() -> str:
    """The table of the old flat names and where each went."""
    from evalnb.api.lab import MOVED  # noqa: PLC0415

    rows = ["| old name (warns, one release) | now |", "|---|---|"]
    rows += [f"| `lab.{old}` | `lab.{space}.{new}` |" for old, (space, new) in MOVED.items()]
    rows += [
        "| `lab.languages()` | `lab.languages.summary()` |",
        "| `lab.curation()` | `lab.curation.view()` |",
    ]
    return "\n".join(rows) + "\n"


def _commands(parser: argparse.ArgumentParser, words: list[str]) -> Iterator[tuple[str, str]]:
    """(command words, help text) for the parser and every subcommand under it."""
    yield " ".join(words), parser.format_help()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _commands(sub, [*words, name])


def _cli() -> str:
    from evalnb.cli.main import build_parser  # noqa: PLC0415

    os.environ["COLUMNS"] = "96"  # argparse wraps to the terminal: fix it for a stable page
    out = []
    for words, text in _commands(build_parser(), ["evalnb"]):
        level = "##" if words.count(" ") <= 1 else "###"
        out.append(f"{level} `{words}`\n\n```text\n{text.rstrip()}\n```\n")
    return "\n".join(out)


GENERATORS: dict[str, Callable[[], str]] = {
    "formats": _formats,
    "columns": _columns,
    "catalog": _catalog,
    "cli": _cli,
    "namespaces": _namespaces,
    "moved": _moved,
}


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:  # noqa: ANN401 - MkDocs' types
    """Replace each ``<!-- evalnb:NAME -->`` marker with the generated section NAME."""

    def fill(match: re.Match[str]) -> str:
        name = match[1]
        if name not in GENERATORS:
            msg = f"{page.file.src_path}: unknown generated section {name!r}; known: {sorted(GENERATORS)}"
            raise PluginError(msg)
        with redirect_stdout(io.StringIO()):  # model loading chatter stays out of the build log
            return GENERATORS[name]()

    return MARKER.sub(fill, markdown)
