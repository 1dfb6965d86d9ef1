"""Property-based fuzz of every reader under a memory and a time limit (issue 32).

Run by ``tests/project/test_limits.py`` in a child process whose address space is capped with
``resource.setrlimit`` (``python -m evalnb_testkit.bounded_fuzz``): every example must end in a
result or an :class:`~evalnb.InputError` within its deadline, never in a MemoryError, a
RecursionError, a raw library exception or a hang. The examples are seeds of each format,
mutated byte by byte, and structure bombs: one fragment of a format repeated up to a few
hundred thousand times (headings, table cells, brackets, members).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import tempfile
from datetime import timedelta
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import evalnb
from evalnb.io.documents import read_document

EXAMPLES = int(os.environ.get("EVALNB_FUZZ_EXAMPLES", "60"))
SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=timedelta(seconds=20),
    database=None,
    suppress_health_check=list(HealthCheck),
)


def _docx_seed() -> bytes:
    from docx import Document

    doc = Document()
    doc.add_heading("Fees", level=1)
    doc.add_paragraph("The Gold card costs $95 a year.")
    out = io.BytesIO()
    doc.save(out)
    return out.getvalue()


def _archive_seed() -> bytes:
    """An archive of a small evaluated lab (made by the parent: its charts need V8, whose
    heap reservation does not fit under the child's address-space cap)."""
    given = os.environ.get("EVALNB_FUZZ_ARCHIVE")
    if given:
        return Path(given).read_bytes()
    import polars as pl

    lab = evalnb.load(
        pl.DataFrame({"prompt": ["q1", "q2"], "actual": ["a", "b"], "expected": [["a"], ["c"]]})
    )
    lab = evalnb.evaluate(lab, ["text_matching"], progress=False)
    with tempfile.TemporaryDirectory() as work:
        return lab.archive(Path(work) / "seed.zip").read_bytes()


SEEDS: dict[str, bytes] = {
    ".json": json.dumps([{"prompt": "q", "actual": "a", "expected": ["a"], "model": "m"}]).encode(),
    ".jsonl": b'{"prompt": "q", "actual": "a"}\n{"prompt": "r", "actual": "b"}\n',
    ".csv": b"prompt,actual,expected\nq,a,a\nr,b,c\n",
    ".md": b"# Title\n\nText.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n## More\n\n- item\n",
    ".html": b"<html><body><h1>T</h1><p>Text <b>bold</b></p><table><tr><td>1</td></tr></table></body></html>",
    ".txt": b"Plain text.\nSecond line.\n",
}
BOMBS: dict[str, list[bytes]] = {
    ".json": [b"[", b'{"a":', b"9"],
    ".jsonl": [b"{}\n", b"[", b'"\\u'],
    ".csv": [b",", b'"', b"a,b\n"],
    ".md": [b"# h\n", b"|", b"|---", b"> ", b"- ", b"[x]", b"`"],
    ".html": [b"<h1>h</h1>", b"<div>", b"<td>", b"<!--", b"&amp;"],
    ".txt": [b"\x00", b"\n", b"\xff"],
}


def _check(call: object) -> None:
    with contextlib.suppress(evalnb.InputError):  # a refusal is a right answer; nothing else
        call()  # type: ignore[operator]


def _load(suffix: str, data: bytes) -> None:
    with tempfile.TemporaryDirectory() as work:
        path = Path(work) / f"input{suffix}"
        path.write_bytes(data)
        if suffix in (".md", ".html", ".txt", ".docx"):
            _check(lambda: read_document(path))
        else:
            _check(lambda: evalnb.load(path))


def _mutated(seed: bytes) -> st.SearchStrategy[bytes]:
    def mutate(draw_ops: list[tuple[int, int, bytes]]) -> bytes:
        data = bytearray(seed)
        for at, cut, insert in draw_ops:
            at %= max(len(data), 1)
            data[at : at + cut] = insert
        return bytes(data)

    op = st.tuples(st.integers(0, 10_000), st.integers(0, 8), st.binary(max_size=8))
    return st.lists(op, min_size=1, max_size=6).map(mutate)


@st.composite
def _inputs(draw: st.DrawFn) -> tuple[str, bytes]:
    suffix = draw(st.sampled_from([*SEEDS, ".docx", ".zip"]))
    if suffix == ".docx":
        return suffix, draw(_mutated(DOCX))
    if suffix == ".zip":
        return ".json", draw(_mutated(ARCHIVE))  # sniffed as an archive by its magic bytes
    if draw(st.booleans()):
        return suffix, draw(_mutated(SEEDS[suffix]))
    fragment = draw(st.sampled_from(BOMBS[suffix]))
    times = draw(st.sampled_from([1_000, 30_000, 300_000]))
    return suffix, SEEDS[suffix][: draw(st.integers(0, 20))] + fragment * times


DOCX = _docx_seed()
ARCHIVE = _archive_seed()


@SETTINGS
@given(_inputs())
def fuzz_readers(case: tuple[str, bytes]) -> None:
    """Every input reads or is refused with an InputError, within the limits."""
    _load(*case)


if __name__ == "__main__":
    fuzz_readers()
    print(f"bounded fuzz: {EXAMPLES} examples, every one a result or an InputError")
    sys.exit(0)
