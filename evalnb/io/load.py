"""``evalnb.load``: detect a source's format from its content and import it, all or nothing."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from evalnb.io.agents import is_agent_record, read_agent_records
from evalnb.io.archive import read_archive
from evalnb.io.builder import LabBuilder
from evalnb.io.columnar import frame_tables
from evalnb.io.fields import Where
from evalnb.io.h2o import read_h2o_lab, read_h2o_suite
from evalnb.io.harbor import read_harbor
from evalnb.io.harpia import read_harpia
from evalnb.io.inspect_log import is_inspect_log, read_inspect_log
from evalnb.io.ragas_columnar import ragas_jsonl_tables, ragas_object_tables
from evalnb.io.ragas_data import is_ragas_record, ragas_object_records, read_ragas_records
from evalnb.io.source import (
    Line,
    check_json_text,
    decode_text,
    jsonl_lines,
    parse_json,
    read_bytes,
    read_csv,
    read_jsonl,
    read_text,
)
from evalnb.io.spans import is_span_record, read_spans
from evalnb.io.tabular import Record, read_records
from evalnb.io.tencent import read_tencent, read_tencent_csv
from evalnb.io.trec import (
    qrels_from,
    read_beir,
    read_qrels,
    read_run,
    retrieval_tables,
    run_from,
    sniff_trec,
)
from evalnb.lab.core import LabCore
from evalnb.lab.errors import InputError

if TYPE_CHECKING:
    from collections.abc import Mapping

    import pandas as pd

__all__ = ["FORMATS", "detect_format", "load"]

FORMATS: dict[str, str] = {
    "h2o_suite": "H2O Eval Studio test suite JSON ({tests: [{documents, test_cases}]})",
    "h2o_lab": "H2O Eval Studio test lab JSON ({dataset, raw_dataset, models})",
    "harpia": "HarpIA Lab input JSON ({instances, metrics})",
    "agent_chat": "agent conversations, JSON or JSONL: OpenAI messages with tool_calls (or "
    "naming their model), or ragas multi-turn samples (user_input turns), with "
    "reference_tool_calls",
    "inspect_log": "Inspect AI eval log JSON ({version, status, eval, samples}): samples' "
    "conversations with tool calls, scores kept as imported scores",
    "ragas": "ragas single-turn samples (EvaluationDataset.to_jsonl / to_csv / to_list: "
    "user_input, response, reference, retrieved_contexts, ...), JSONL, JSON or CSV",
    "agent_spans": "OpenInference / OpenTelemetry GenAI spans, JSON or JSONL (OTLP "
    "resourceSpans or flat exported spans), grouped into conversations by session or trace",
    "tencent": "Tencent TI JSONL (messages / model_outputs / conversation per line)",
    "tencent_csv": "Tencent TI manual-evaluation CSV (system, prompt, response)",
    "harbor": "Harbor rewards JSONL ({name: reward} or null per line)",
    "csv": "generic CSV with a header row",
    "jsonl": "generic JSON Lines, one record object per line",
    "json": "generic JSON list of record objects",
    "parquet": "generic Parquet table",
    "evalnb_archive": "evalnb evaluation archive ZIP (Lab.archive)",
    "trec_run": "TREC run (qid Q0 docid rank score tag per line; each tag a model); "
    "qrels= gives its judgments",
    "trec_qrels": "TREC qrels (qid iteration docid relevance per line)",
    "beir": "BEIR folder (corpus.jsonl, queries.jsonl, qrels/<split>.tsv; split=)",
}
_MAPPED = {"csv", "jsonl", "json", "parquet", "frame"}
_MODEL_ONLY = {"harpia", "harbor", "ragas", "agent_chat"}


def _sniff_lines(lines: list[Line]) -> str:
    if any(is_span_record(value) for _, value in lines[:1]):
        return "agent_spans"
    if lines and is_ragas_record(lines[0][1]):
        return "ragas"
    if any(is_agent_record(value) for _, value in lines):
        return "agent_chat"
    first = lines[0][1] if lines else None
    if first is None or (
        isinstance(first, dict)
        and len(first) == 1
        and all(v is None or isinstance(v, int | float) for v in first.values())
    ):
        return "harbor"
    if isinstance(first, dict) and ("messages" in first or "conversation" in first):
        return "tencent"
    return "jsonl"


def _sniff_document(doc: object) -> str | None:
    if isinstance(doc, dict):
        if is_inspect_log(doc):
            return "inspect_log"
        if is_span_record(doc):
            return "agent_spans"
        if "tests" in doc:
            return "h2o_suite"
        if "dataset" in doc or "raw_dataset" in doc:
            return "h2o_lab"
        if "instances" in doc:
            return "harpia"
        return None
    if isinstance(doc, list):
        if doc and is_span_record(doc[0]):
            return "agent_spans"
        if doc and is_ragas_record(doc[0]):
            return "ragas"
        return "agent_chat" if any(is_agent_record(item) for item in doc) else "json"
    return None


def detect_format(path: str | Path) -> str:
    """Name the format of the file at ``path`` from its content (see ``evalnb.FORMATS``)."""
    sniffed = _detect(Path(path))
    if sniffed.first_line_only and sniffed.fmt in {"tencent", "jsonl"} and sniffed.text:
        return _sniff_lines(read_jsonl(sniffed.text, str(path)))  # as `load` decides
    return sniffed.fmt


@dataclass(frozen=True)
class _Sniffed:
    """What detection learned: the format, and the text and document it already decoded."""

    fmt: str
    text: str | None = None
    doc: object = None
    # Detected from the first line of JSON Lines only: the reader, which parses every line,
    # decides again from all of them (a first conversation with no tool call looks like
    # Tencent's; a later one shows an agent's).
    first_line_only: bool = False


def _refuse_scalar(text: str, name: str) -> None:
    """Raise when the whole file is one JSON number, string or boolean: no format is that."""
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError):
        return
    if not isinstance(doc, dict | list) and doc is not None:
        raise InputError(
            name,
            "line 1",
            None,
            "a JSON object or a list of records (a lab, a suite, conversations), JSON Lines, "
            "CSV or Parquet",
            f"one JSON {type(doc).__name__}: {text.strip()[:40]!r}",
        )


def _detect(path: Path) -> _Sniffed:
    data = read_bytes(path)
    if data[:4] == b"PAR1":
        return _Sniffed("parquet")
    if data[:4] == b"PK\x03\x04":
        return _Sniffed("evalnb_archive")
    name = str(path)
    text = decode_text(data, name)
    head = text.lstrip()
    if head[:1] in "{[":
        try:
            doc = json.loads(text)
        except (ValueError, RecursionError):
            doc = _NOT_JSON
        if doc is not _NOT_JSON:
            found = _sniff_document(doc)
            if found is not None:  # parsed once: `_read` reuses the document
                return _Sniffed(found, text, check_json_text(doc, text, name))
        first = jsonl_lines(head)[0]
        try:
            json.loads(first)
        except RecursionError:
            raise InputError(name, "line 1", None, "JSON nested < 1000 levels", "deeper") from None
        except json.JSONDecodeError:
            # Not JSON Lines either: report the error as one broken JSON document.
            parse_json(text, name)
            raise InputError(name, None, None, "JSON or JSON Lines", "neither") from None
        except ValueError as exc:  # e.g. an integer of more than 4,300 digits
            raise InputError(name, "line 1", None, "JSON", str(exc)[:200]) from None
        # The first record tells the kind; `_read` parses every line and looks again.
        return _Sniffed(_sniff_lines(read_jsonl(first, name)), text, first_line_only=True)
    if head.startswith("null"):
        return _Sniffed("harbor", text)
    _refuse_scalar(text, name)
    if path.suffix.lower() in (".json", ".jsonl", ".ndjson"):
        # Named as JSON but not JSON: say so, rather than read it as a CSV with odd columns.
        shown = head[:40].splitlines()[0] if head else "an empty file"
        raise InputError(
            name,
            "line 1",
            None,
            f"JSON (the file is named {path.suffix})",
            f"text that is not JSON: {shown!r}",
        )
    header = jsonl_lines(head)[0].split(",")
    names = {h.strip().strip('"') for h in header}
    if {"prompt", "response"} <= names <= {"system", "prompt", "response"}:
        return _Sniffed("tencent_csv", text)
    if "user_input" in names and names & {"response", "reference", "retrieved_contexts"}:
        return _Sniffed("ragas", text)
    return _Sniffed("csv", text)


_NOT_JSON = object()


def load(
    source: str | Path | pl.DataFrame | pd.DataFrame | object,
    format: str | None = None,  # noqa: A002 - the public name the issue asks for
    **mapping: object,
) -> LabCore:
    """Import a test lab from a file or a frame as a :class:`~evalnb.lab.LabCore`.

    :func:`evalnb.load` documents the arguments and errors; it returns the same lab as an
    :class:`evalnb.Lab`.
    """
    retrieval = _retrieval_lab(source, format, mapping)
    if retrieval is not None:
        return retrieval
    if not isinstance(source, str | Path | pl.DataFrame) and not _is_pandas(source):
        # A ragas EvaluationDataset or EvaluationResult (duck-typed: no ragas needed here).
        _check_mapping("ragas", mapping)
        where = Where(f"<{type(source).__name__}>")
        records, scores = ragas_object_records(source, where)
        tables = None if scores is not None else ragas_object_tables(records, _model(mapping))
        if tables is not None:  # by columns; anything unusual takes the record path
            return LabCore(tables)
        builder = LabBuilder()
        placed = [(where.at(i), r) for i, r in enumerate(records)]  # checked when taken
        read_ragas_records(placed, builder, model=_model(mapping), scores=scores)
        return LabCore(builder.frames())
    if not isinstance(source, str | Path):  # a Polars or pandas frame
        frame = source if isinstance(source, pl.DataFrame) else _from_pandas(source)  # type: ignore[arg-type]
        tables = frame_tables(frame, mapping, "<frame>")
        if tables is not None:
            return LabCore(tables)
        builder = LabBuilder()
        read_records(frame_records(frame, "<frame>"), frame.columns, mapping, "<frame>", builder)
        return LabCore(builder.frames())
    path = Path(source)
    if format is None:
        sniffed = _detect(path)
    elif format in FORMATS:
        sniffed = _Sniffed(format)
    else:
        msg = f"unknown format {format!r}; expected one of {sorted(FORMATS)} or None to detect"
        raise ValueError(msg)
    _check_mapping(sniffed.fmt, mapping)
    if sniffed.fmt == "evalnb_archive":
        return read_archive(path)
    builder = LabBuilder()
    try:
        _read(path, sniffed, mapping, builder)
    except RecursionError:  # importers name the record where they can; this is the backstop
        raise InputError(
            str(path), None, None, "values nested fewer than about 900 levels", "deeper nesting"
        ) from None
    return LabCore(builder.frames())


_RETRIEVAL = ("trec_run", "trec_qrels", "beir")


def _retrieval_lab(
    source: object,
    format: str | None,  # noqa: A002 - load's own argument
    mapping: dict[str, object],
) -> LabCore | None:
    """Read a TREC run or qrels, a BEIR folder or a ranx-style dict as a lab; None otherwise.

    ``qrels=`` (a path or a dict) gives the judgments of a run; ``split=`` a BEIR split.
    """
    qrels_arg = mapping.get("qrels")
    is_dict = isinstance(source, dict) or type(source).__module__.startswith("ranx")
    kind = format if format in _RETRIEVAL else None
    if kind is None and isinstance(source, str | Path) and format is None:
        kind = sniff_trec(Path(source))
    if kind is None and not is_dict:
        if qrels_arg is not None:
            msg = "qrels= goes with a retrieval run (a TREC run file, a BEIR folder or a dict)"
            raise TypeError(msg)
        return None
    unknown = sorted(set(mapping) - {"qrels", "split", "model"})
    if unknown:
        msg = f"a retrieval source takes qrels=, split= and model=; got {unknown}"
        raise TypeError(msg)
    qrels = None
    if qrels_arg is not None:
        qrels = (
            read_qrels(qrels_arg) if isinstance(qrels_arg, str | Path) else qrels_from(qrels_arg)
        )
    if is_dict or not isinstance(source, str | Path):
        return LabCore(retrieval_tables(run_from(source, str(mapping.get("model", "run"))), qrels))
    if kind == "beir":
        return LabCore(read_beir(source, str(mapping.get("split", "test"))))
    if kind == "trec_qrels":
        judged = read_qrels(source)
        cases = judged.select("case_id").unique(maintain_order=True)
        return LabCore({"cases": cases.with_columns(prompt=pl.col("case_id")), "qrels": judged})
    return LabCore(retrieval_tables(read_run(source), qrels))


def _is_pandas(source: object) -> bool:
    return type(source).__module__.startswith("pandas") and hasattr(source, "columns")


def _from_pandas(frame: pd.DataFrame) -> pl.DataFrame:
    try:
        return pl.from_pandas(frame)
    except (pl.exceptions.PolarsError, ValueError, TypeError) as exc:
        raise Where("<frame>").error(
            None, "a pandas frame Polars can convert", str(exc)[:200]
        ) from None


def _check_mapping(fmt: str, mapping: Mapping[str, object]) -> None:
    allowed = {"model"} if fmt in _MODEL_ONLY else set()
    if fmt in _MAPPED or not (set(mapping) - allowed):
        return
    msg = (
        f"column mappings {sorted(mapping)} apply to generic tables only; format {fmt!r} "
        f"has fixed fields{' (only model= is accepted)' if allowed else ''}"
    )
    raise TypeError(msg)


def _with_model(
    records: list[tuple[Where, object]], mapping: Mapping[str, object]
) -> list[tuple[Where, object]]:
    """Name the model of conversations that do not (``model=``; a record's own name wins)."""
    if "model" not in mapping:
        return records
    model = _model(mapping)
    return [
        (w, {**v, "model": v.get("model") or model} if isinstance(v, dict) else v)
        for w, v in records
    ]


def _model(mapping: Mapping[str, object]) -> str:
    model = mapping.get("model", "model")
    if not isinstance(model, str) or not model:
        msg = f"`model` must be a non-empty model name, got {model!r}"
        raise TypeError(msg)
    return model


def _read(path: Path, sniffed: _Sniffed, mapping: Mapping[str, object], b: LabBuilder) -> None:
    name, fmt = str(path), sniffed.fmt
    if fmt == "parquet":
        try:
            # pyarrow, not pl.read_parquet: on a corrupt file Polars' reader can panic (a
            # BaseException from Rust) where pyarrow raises an ordinary error.
            table = pq.read_table(path)
            frame = pl.from_arrow(table)
        except (OSError, pa.ArrowException, pl.exceptions.PolarsError) as exc:
            raise InputError(name, None, None, "a Parquet file", str(exc)[:200]) from None
        if not isinstance(frame, pl.DataFrame):  # pragma: no cover - a table is a frame
            raise InputError(name, None, None, "a Parquet table", type(frame).__name__)
        tables = frame_tables(frame, mapping, name)
        if tables is not None:
            b.prebuilt = tables
            return
        read_records(frame_records(frame, name), frame.columns, mapping, name, b)
        return
    text = read_text(path) if sniffed.text is None else sniffed.text
    if fmt == "ragas":
        _read_ragas(text, sniffed, name, _model(mapping), b)
        return
    if fmt in {"agent_chat", "agent_spans", "inspect_log"} and (
        sniffed.doc is not None or fmt == "inspect_log" or text.lstrip()[:1] == "["
    ):
        where = Where(name, "$")
        doc = parse_json(text, name) if sniffed.doc is None else sniffed.doc
        if fmt == "inspect_log":
            read_inspect_log(doc, where, b)
            return
        items = [doc] if isinstance(doc, dict) else _as_list(doc, where)
        placed = [
            (where.at(i) if len(items) > 1 or not isinstance(doc, dict) else where, item)
            for i, item in enumerate(items)
        ]
        if fmt == "agent_spans":
            read_spans(placed, b)
        else:
            read_agent_records(_with_model(placed, mapping), b)
    elif fmt in {"h2o_suite", "h2o_lab", "harpia", "json"}:
        doc = parse_json(text, name) if sniffed.doc is None else sniffed.doc
        where = Where(name, "$")
        if fmt == "h2o_suite":
            read_h2o_suite(doc, where, b)
        elif fmt == "h2o_lab":
            read_h2o_lab(doc, where, b)
        elif fmt == "harpia":
            read_harpia(doc, where, b, model=_model(mapping))
        else:
            items = _as_list(doc, where)
            records = [(where.at(i), where.at(i).record(r)) for i, r in enumerate(items)]
            read_records(records, _columns(records), mapping, name, b)
    elif fmt in {"tencent", "harbor", "jsonl", "agent_chat", "agent_spans"}:
        lines = read_jsonl(text, name)
        if sniffed.first_line_only and fmt in {"tencent", "jsonl"}:
            fmt = _sniff_lines(lines)  # every record read: an agent's conversation shows now
        if fmt == "agent_chat":
            placed = [(Where(name, f"line {n}"), v) for n, v in lines]
            read_agent_records(_with_model(placed, mapping), b)
        elif fmt == "agent_spans":
            read_spans([(Where(name, f"line {n}"), v) for n, v in lines], b)
        elif fmt == "tencent":
            read_tencent(lines, name, b)
        elif fmt == "harbor":
            read_harbor(lines, name, b, model=_model(mapping))
        else:
            records = [
                (Where(name, f"line {n}"), Where(name, f"line {n}").record(v)) for n, v in lines
            ]
            read_records(records, _columns(records), mapping, name, b)
    else:
        header, rows = read_csv(text, name)
        if fmt == "tencent_csv":
            missing = {"prompt", "response"} - set(header)
            if missing:
                raise Where(name, "line 1").error(
                    sorted(missing)[0], "columns system, prompt, response", f"header {header}"
                )
            read_tencent_csv(rows, name, b)
        else:
            recs: list[Record] = [(Where(name, f"line {n}"), r) for n, r in rows]
            read_records(recs, header, mapping, name, b)


def _read_ragas(text: str, sniffed: _Sniffed, name: str, model: str, b: LabBuilder) -> None:
    head = text.lstrip()[:1]
    if head in "[{":
        if head == "[":
            where = Where(name, "$")
            doc = parse_json(text, name) if sniffed.doc is None else sniffed.doc
            items = _as_list(doc, where)
            records = [(where.at(i), where.at(i).record(r)) for i, r in enumerate(items)]
        else:
            tables = ragas_jsonl_tables(text, model)
            if tables is not None:  # read by columns; anything unusual takes the record path
                b.prebuilt = tables
                return
            records = [
                (Where(name, f"line {n}"), Where(name, f"line {n}").record(v))
                for n, v in read_jsonl(text, name)
            ]
        read_ragas_records(records, b, model=model)
        return
    _header, rows = read_csv(text, name)
    read_ragas_records([(Where(name, f"line {n}"), r) for n, r in rows], b, model=model, csv=True)


def _as_list(doc: object, where: Where) -> list[object]:
    if not isinstance(doc, list):
        raise where.error(None, "a list of record objects", doc)
    return doc


def _columns(records: list[Record]) -> list[str]:
    seen: dict[str, None] = {}
    for _, rec in records:
        for key in rec:
            seen.setdefault(key, None)
    return list(seen)


def frame_records(frame: pl.DataFrame, source: str) -> list[Record]:
    return [
        (Where(source, f"record {i}"), row) for i, row in enumerate(frame.iter_rows(named=True))
    ]
