"""TREC runs and qrels, BEIR folders and ranx-style dicts: retrieval labs in and out.

- A **TREC run** is one line a retrieved document: ``qid Q0 docid rank score tag``, fields
  split on white space; each ``tag`` is a system, so a file of several tags is several
  ``model``s. trec_eval ranks by score (ties by document id, descending) and ignores the
  rank field; so does evalnb, which keeps the rank as given (a negative one too).
- **qrels** are ``qid iteration docid relevance`` lines (the iteration unused); a grade of 1 or
  more is relevant, 0 or below not, as trec_eval reads them.
- A **BEIR folder** holds ``corpus.jsonl`` (``_id``, ``title``, ``text``), ``queries.jsonl``
  (``_id``, ``text``) and ``qrels/<split>.tsv`` (a header, then ``query-id corpus-id score``).
- **ranx / ir-measures / pytrec_eval dicts**: ``{qid: {docid: score}}`` for a run (or
  ``{name: {qid: {docid: score}}}`` for several), ``{qid: {docid: grade}}`` for qrels; a
  ``ranx.Run`` or ``ranx.Qrels`` object gives its ``to_dict()``.

Where trec_eval would refuse a file, or read it silently in a way a person would not expect,
the reader stops with an :class:`~evalnb.lab.errors.InputError` naming the file, the line and
the field: a line that does not have its fields, a score that is no number (trec_eval's
``atof`` would read it as 0), a rank or grade that is no integer, a document listed twice for
one query (trec_eval stops on it). Why Polars: a run of a million lines is split and checked
as columns (about a second), not a line at a time.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from evalnb.lab.errors import InputError
from evalnb.lab.files import write_atomic
from evalnb.lab.rankings import current_grades, in_trec_order
from evalnb.lab.schema import QRELS, RETRIEVALS

if TYPE_CHECKING:
    from collections.abc import Mapping

    from evalnb.lab.core import LabCore

__all__ = [
    "export_trec",
    "qrels_from",
    "read_beir",
    "read_qrels",
    "read_run",
    "retrieval_tables",
    "run_from",
    "sniff_trec",
    "write_qrels",
    "write_run",
]

_RUN, _QRELS = "<run>", "<qrels>"  # in-memory sources, named as the errors name files
_MAX_LINE = 10_000  # characters: a TREC line is a few dozen; beyond this it is not one


def sniff_trec(path: Path) -> str | None:
    """Return ``"trec_run"``, ``"trec_qrels"`` or ``"beir"`` when ``path`` looks like one."""
    if path.is_dir():
        return "beir" if (path / "queries.jsonl").is_file() else None
    if not path.is_file():  # a FIFO or a device would block the read: load refuses them by name
        return None
    try:
        with path.open("rb") as handle:
            head = handle.read(4096).decode("utf-8", "replace")
    except OSError:
        return None
    lines = [line.split() for line in head.splitlines()[:20] if line.strip()]
    if len(lines) > 1:
        lines = lines[:-1]  # the last may be cut by the read
    if not lines:
        return None
    if all(len(f) == 6 and _number(f[4]) and _integer(f[3]) for f in lines):
        return "trec_run"
    if all(len(f) == 4 and _integer(f[3]) for f in lines):
        return "trec_qrels"
    return None


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _integer(text: str) -> bool:
    return text.lstrip("+-").isdigit()


def _fields(path: Path, n: int, names: list[str]) -> pl.DataFrame:
    """Read ``path``'s non-empty lines split on white space into ``n`` named string columns."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            str(path), None, None, "UTF-8 text", f"a byte that is not: {exc.reason}"
        ) from None
    lines = pl.Series("line", text.splitlines(), dtype=pl.String)
    frame = (
        pl.DataFrame({"line": lines})
        .with_row_index("at", offset=1)
        .filter(pl.col("line").str.strip_chars() != "")
        .with_columns(parts=pl.col("line").str.extract_all(r"\S+"))
    )
    long = frame.filter(pl.col("line").str.len_chars() > _MAX_LINE)
    if long.height:
        raise InputError(
            str(path),
            f"line {long['at'][0]}",
            None,
            f"a line under {_MAX_LINE} characters",
            f"{long['line'].str.len_chars()[0]} characters",
        )
    wrong = frame.filter(pl.col("parts").list.len() != n)
    if wrong.height:
        row = wrong.row(0, named=True)
        raise InputError(
            str(path),
            f"line {row['at']}",
            None,
            f"{n} fields ({' '.join(names)})",
            f"{len(row['parts'])}: {row['line'][:80]!r}",
        )
    return frame.select(
        "at", *[pl.col("parts").list.get(i).alias(name) for i, name in enumerate(names)]
    )


def _checked_int(frame: pl.DataFrame, column: str, path: Path) -> pl.Series:
    values = frame[column].cast(pl.Int64, strict=False)
    bad = frame.filter(values.is_null())
    if bad.height:
        raise InputError(
            str(path), f"line {bad['at'][0]}", column, "an integer", repr(bad[column][0])
        )
    return values


def _no_twice(frame: pl.DataFrame, keys: list[str], path: Path, what: str) -> None:
    twice = frame.filter(pl.struct(keys).is_duplicated()).sort("at")
    if twice.height:
        first = twice.row(0, named=True)
        same = twice.filter(pl.all_horizontal(pl.col(k) == first[k] for k in keys))["at"].to_list()
        raise InputError(
            str(path),
            f"lines {same[0]} and {same[1]}",
            "docid",
            f"each document once per {what} (trec_eval stops on a document listed twice)",
            f"{first['docid']!r} twice",
            "keep the line you mean and drop the other",
        )


def read_run(path: str | Path) -> pl.DataFrame:
    """Read a TREC run file into ``retrievals`` rows (each tag a model, sample 0)."""
    where = Path(path)
    frame = _fields(where, 6, ["qid", "q0", "docid", "rank", "score", "tag"])
    rank = _checked_int(frame, "rank", where)
    score = frame["score"].cast(pl.Float64, strict=False)
    bad = frame.filter(score.is_null() | ~score.is_finite())
    if bad.height:
        raise InputError(
            str(where),
            f"line {bad['at'][0]}",
            "score",
            "a finite number (trec_eval's atof would read anything else as 0)",
            repr(bad["score"][0]),
        )
    _no_twice(frame, ["qid", "tag", "docid"], where, "query of a run")
    return pl.DataFrame(
        {
            "case_id": frame["qid"],
            "model": frame["tag"],
            "sample": pl.Series([0] * frame.height, dtype=pl.Int64),
            "rank": rank,
            "doc_id": frame["docid"],
            "score": score,
        },
        schema=RETRIEVALS,
    )


def read_qrels(path: str | Path) -> pl.DataFrame:
    """Read a TREC qrels file (``qid iteration docid relevance``) into ``qrels`` rows."""
    where = Path(path)
    frame = _fields(where, 4, ["qid", "iteration", "docid", "relevance"])
    grade = _checked_int(frame, "relevance", where)
    _no_twice(frame, ["qid", "docid"], where, "query of the qrels")
    return pl.DataFrame(
        {
            "case_id": frame["qid"],
            "doc_id": frame["docid"],
            "relevance": grade,
            "source": pl.Series([where.name] * frame.height, dtype=pl.String),
        },
        schema=QRELS,
    )


def _jsonl(path: Path) -> list[dict[str, object]]:
    out = []
    for at, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(str(path), f"line {at}", None, "a JSON object", exc.msg) from None
        if not isinstance(record, dict) or "_id" not in record:
            raise InputError(str(path), f"line {at}", "_id", "an object with an _id", line[:80])
        out.append(record)
    return out


def read_beir(folder: str | Path, split: str = "test") -> dict[str, pl.DataFrame]:
    """Read a BEIR folder: its queries as cases, ``qrels/<split>.tsv``, its corpus as chunks."""
    root = Path(folder)
    qrels_path = root / "qrels" / f"{split}.tsv"
    if not qrels_path.is_file():
        found = sorted(p.stem for p in (root / "qrels").glob("*.tsv"))
        raise InputError(
            str(root),
            None,
            "qrels",
            f"qrels/{split}.tsv",
            f"splits {found}",
            "pass split= one of them",
        )
    frame = pl.read_csv(
        qrels_path, separator="\t", has_header=True, infer_schema=False, quote_char=None
    )
    if frame.width < 3:
        raise InputError(
            str(qrels_path), "line 1", None, "query-id, corpus-id, score", str(frame.columns)
        )
    frame = frame.select(
        pl.col(frame.columns[0]).alias("qid"),
        pl.col(frame.columns[1]).alias("docid"),
        pl.col(frame.columns[2]).alias("relevance"),
    ).with_row_index("at", offset=2)
    grade = _checked_int(frame, "relevance", qrels_path)
    _no_twice(frame, ["qid", "docid"], qrels_path, "query of the qrels")
    qrels = pl.DataFrame(
        {
            "case_id": frame["qid"],
            "doc_id": frame["docid"],
            "relevance": grade,
            "source": pl.Series([f"beir:{split}"] * frame.height, dtype=pl.String),
        },
        schema=QRELS,
    )
    wanted = set(qrels["case_id"].to_list())
    queries = [q for q in _jsonl(root / "queries.jsonl") if str(q["_id"]) in wanted]
    cases = pl.DataFrame(
        {
            "case_id": [str(q["_id"]) for q in queries],
            "prompt": [str(q.get("text") or "") for q in queries],
        }
    )
    tables = {"cases": cases, "qrels": qrels}
    corpus = root / "corpus.jsonl"
    if corpus.is_file():
        docs = _jsonl(corpus)
        texts = [str(d.get("text") or "") for d in docs]
        tables["chunks"] = pl.DataFrame(
            {
                "chunk_id": [str(d["_id"]) for d in docs],
                "doc": [str(d["_id"]) for d in docs],
                "heading": [str(d.get("title") or "") or None for d in docs],
                "start": [0] * len(docs),
                "end": [len(t) for t in texts],
                "text": texts,
            }
        )
    return tables


def _as_dict(obj: object, what: str) -> Mapping[str, object]:
    to_dict = getattr(obj, "to_dict", None)
    value = to_dict() if callable(to_dict) else obj
    if not isinstance(value, dict):
        source = f"<{what}>"
        raise InputError(source, None, None, "a dict {qid: {docid: value}}", type(value).__name__)
    return value


def run_from(obj: object, name: str = "run") -> pl.DataFrame:
    """Read ``{qid: {docid: score}}`` (one run) or ``{name: run}`` (several) into ``retrievals`` rows."""
    value = _as_dict(obj, "run")
    runs: Mapping[str, object]
    first = next(iter(value.values()), {})
    nested = isinstance(first, dict) and any(isinstance(v, dict) for v in first.values())
    runs = value if nested else {str(getattr(obj, "name", None) or name): value}
    rows = []
    for model, run in runs.items():
        for qid, docs in _as_dict(run, "run").items():
            if not isinstance(docs, dict):
                raise InputError(
                    _RUN, f"[{model!r}][{qid!r}]", None, "{docid: score}", type(docs).__name__
                )
            for doc, score in docs.items():
                if not isinstance(score, int | float) or score != score:
                    raise InputError(_RUN, f"[{qid!r}][{doc!r}]", "score", "a number", repr(score))
                rows.append((str(qid), str(model), 0, None, str(doc), float(score)))
    return pl.DataFrame(rows, schema=RETRIEVALS, orient="row")


def qrels_from(obj: object, source: str = "dict") -> pl.DataFrame:
    """Read ``{qid: {docid: grade}}`` (a ``ranx.Qrels``'s ``to_dict()`` too) into ``qrels`` rows."""
    rows = []
    for qid, docs in _as_dict(obj, "qrels").items():
        if not isinstance(docs, dict):
            raise InputError(_QRELS, f"[{qid!r}]", None, "{docid: grade}", type(docs).__name__)
        for doc, grade in docs.items():
            if isinstance(grade, bool) or not isinstance(grade, int | float) or grade != int(grade):
                raise InputError(
                    _QRELS, f"[{qid!r}][{doc!r}]", "relevance", "an integer grade", repr(grade)
                )
            rows.append((str(qid), str(doc), int(grade), source))
    return pl.DataFrame(rows, schema=QRELS, orient="row")


def retrieval_tables(
    retrievals: pl.DataFrame, qrels: pl.DataFrame | None, cases: pl.DataFrame | None = None
) -> dict[str, pl.DataFrame]:
    """Build a lab's tables for a retrieval run: a case per query, an output per (query, system).

    Each ranked list is an output row without an answer (``actual`` null), so the retrieval
    evaluator's per-query measures are that output's scores.
    """
    ids = pl.concat(
        [retrievals.select("case_id"), *([qrels.select("case_id")] if qrels is not None else [])]
    ).unique(maintain_order=True)
    given = (
        cases
        if cases is not None
        else pl.DataFrame(schema={"case_id": pl.String, "prompt": pl.String})
    )
    known = ids.join(given, on="case_id", how="left", maintain_order="left")
    if "prompt" not in known.columns:
        known = known.with_columns(prompt=pl.lit(None, pl.String))
    known = known.with_columns(pl.col("prompt").fill_null(pl.col("case_id")))
    outputs = retrievals.select("case_id", "model", "sample").unique(maintain_order=True)
    tables = {"cases": known, "outputs": outputs, "retrievals": retrievals}
    if qrels is not None:
        tables["qrels"] = qrels
    return tables


def _plain_ids(frame: pl.DataFrame, columns: list[str]) -> None:
    """Refuse ids with white space: a TREC line splits on it, so the file would read back wrong."""
    for column in columns:
        bad = frame.filter(pl.col(column).str.contains(r"\s") | pl.col(column).is_null())
        if bad.height:
            msg = (
                f"{column} {bad[column][0]!r} is empty or holds white space: a TREC file splits "
                "its lines on white space; rename such ids before writing one"
            )
            raise ValueError(msg)


def write_run(retrievals: pl.DataFrame, path: str | Path) -> Path:
    """Write ``retrievals`` as a TREC run, ranked as trec_eval ranks it (tag = model)."""
    _plain_ids(retrievals, ["case_id", "doc_id", "model"])
    ranked = in_trec_order(retrievals, ["model", "case_id", "sample"])
    lines = ranked.select(
        pl.format("{} Q0 {} {} {} {}", "case_id", "doc_id", "rank", "score", "model")
    ).to_series()
    return write_atomic(path, "".join(f"{line}\n" for line in lines))


def write_qrels(qrels: pl.DataFrame, path: str | Path) -> Path:
    """Write ``qrels`` as a TREC qrels file (iteration 0)."""
    _plain_ids(qrels, ["case_id", "doc_id"])
    lines = (
        qrels.sort("case_id", "doc_id")
        .select(pl.format("{} 0 {} {}", "case_id", "doc_id", "relevance"))
        .to_series()
    )
    return write_atomic(path, "".join(f"{line}\n" for line in lines))


def export_trec(
    lab: LabCore, run: str | Path, qrels: str | Path | None = None, *, model: str | None = None
) -> list[Path]:
    """Write the lab's retrievals as a TREC run (``model``'s alone when given) and its qrels.

    ``evalnb.load(run, qrels=qrels)`` reads them back; trec_eval and pytrec_eval read them
    too. Returns the paths written.
    """
    retrievals = lab.table("retrievals")
    if model is not None:
        retrievals = retrievals.filter(pl.col("model") == model)
        if retrievals.is_empty():
            msg = f"no retrievals of model {model!r}; the lab's retrievers: {sorted(set(lab.table('retrievals')['model']))}"
            raise ValueError(msg)
    written = [write_run(retrievals, run)]
    if qrels is not None:
        written.append(write_qrels(current_grades(lab.table("qrels")), qrels))
    return written
