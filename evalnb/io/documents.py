"""Documents into text sections: PDF, Markdown, HTML, plain text and DOCX.

Each reader gives a document's **sections**: its text cut where the document itself cuts it
(a PDF page; a Markdown, HTML or Word heading), with the heading path and the section's
start in the document's text, so a chunk can always be traced back to a page and a place.

Libraries, chosen for being well kept and pure Python (nothing to compile, nothing
AGPL-licensed): ``pypdf`` (BSD; PyMuPDF extracts better but is AGPL), ``markdown-it-py``
(CommonMark, already used by Jupyter), ``beautifulsoup4`` on ``lxml`` (tolerant of real-world
HTML) and ``python-docx``.

Every document is bounded (:class:`DocumentLimits`): its size on disk, the uncompressed size
of a DOCX's parts (a zip bomb is refused before it is opened), its page count, the text
extracted from it and the seconds spent on it. A file that breaks a bound, or cannot be
parsed, raises :class:`~evalnb.InputError` naming the file and, for a PDF, the page.
"""

from __future__ import annotations

import io
import re
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalnb.io.zipbound import check_members
from evalnb.lab.bounds import (
    MAX_ARCHIVE_MEMBERS,
    ZIP_FAULTS,
    read_limited,
    require_regular,
    within,
)
from evalnb.lab.errors import InputError

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

__all__ = ["SUFFIXES", "DocumentLimits", "Section", "document_paths", "read_document"]


@dataclass(frozen=True)
class DocumentLimits:
    """Bounds on one document; the defaults fit a long report, not an archive of them."""

    max_bytes: int = 64 * 2**20
    max_unzipped_bytes: int = 256 * 2**20
    max_pages: int = 3_000
    max_chars: int = 20_000_000
    max_seconds: float = 120.0
    # Structure, counted before a parser builds objects for it: a 4 MB Markdown table of
    # 100,000 columns took 2.8 GB in the parser (every row is padded to the header's width),
    # 300,000 headings in 6 MB took 1.3 GB.
    max_headings: int = 50_000
    max_table_cells: int = 2_000_000
    max_elements: int = 2_000_000  # HTML tags, DOCX paragraphs and table cells


@dataclass(frozen=True)
class Section:
    """A piece of a document's text: a page of a PDF, or what follows a heading."""

    doc: str
    page: int | None
    heading: str
    text: str
    start: int  # offset of ``text`` in the document's text (sections joined by a blank line)


class _Budget:
    """Counts a document's pages, characters and seconds against its limits."""

    def __init__(self, path: Path, limits: DocumentLimits) -> None:
        self.path, self.limits = path, limits
        self.chars = 0
        self.pages = 0
        self.headings = 0
        self.deadline = time.monotonic() + limits.max_seconds

    def heading(self) -> None:
        """Count one heading against the limit."""
        self.headings += 1
        if self.headings > self.limits.max_headings:
            raise _over(self.path, "headings", self.limits.max_headings, self.headings)

    def take(self, text: str, page: int | None = None) -> str:
        where = None if page is None else f"page {page}"
        self.chars += len(text)
        if self.chars > self.limits.max_chars:
            raise InputError(
                str(self.path),
                where,
                None,
                f"at most {self.limits.max_chars:,} characters of text",
                f"more ({self.chars:,} so far)",
                "split the document",
            )
        if time.monotonic() > self.deadline:
            raise InputError(
                str(self.path),
                where,
                None,
                f"a document read within {self.limits.max_seconds:g} s",
                "a slower one",
                "split or simplify the document",
            )
        return text


class _Outline:
    """Sections of a document cut at its headings, each labelled with its heading path."""

    def __init__(self) -> None:
        self.parts: list[tuple[int | None, str, str]] = []
        self._open: list[tuple[int, str]] = []  # the headings in force: (level, title)
        self._blocks: list[str] = []

    def _flush(self) -> None:
        self.parts.append((None, " › ".join(t for _, t in self._open), "\n\n".join(self._blocks)))
        self._blocks = []

    def heading(self, level: int, title: str) -> None:
        """End the current section; a heading closes those at its level and deeper."""
        self._flush()
        while self._open and self._open[-1][0] >= level:
            self._open.pop()
        self._open.append((level, title.strip()))

    def add(self, text: str) -> None:
        self._blocks.append(text)

    def close(self) -> list[tuple[int | None, str, str]]:
        self._flush()
        return self.parts


def _join(doc: str, parts: Iterable[tuple[int | None, str, str]]) -> list[Section]:
    """Sections from (page, heading, text), with their offsets in the joined text."""
    out: list[Section] = []
    offset = 0
    for page, heading, text in parts:
        body = text.strip()
        if not body:
            continue
        out.append(Section(doc, page, heading, body, offset))
        offset += len(body) + 2  # the blank line between sections
    return out


def _utf8(path: Path, data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(
            str(path),
            f"byte {exc.start}",
            None,
            "UTF-8 text",
            f"the bytes {data[exc.start : exc.start + 4]!r}",
            "save the file as UTF-8",
        ) from None


def _pdf(path: Path, data: bytes, budget: _Budget) -> list[tuple[int | None, str, str]]:
    import pypdf  # noqa: PLC0415
    from pypdf.errors import PyPdfError  # noqa: PLC0415

    try:
        reader = pypdf.PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            raise InputError(
                str(path),
                None,
                None,
                "an unencrypted PDF",
                "an encrypted one",
                "decrypt it first (e.g. qpdf --decrypt)",
            )
        n = len(reader.pages)
    except (PyPdfError, ValueError, KeyError, TypeError, OSError) as exc:
        raise InputError(str(path), None, None, "a PDF pypdf can read", str(exc)[:200]) from None
    if n > budget.limits.max_pages:
        raise InputError(
            str(path),
            None,
            None,
            f"at most {budget.limits.max_pages} pages",
            f"{n} pages",
            "split the document",
        )
    parts: list[tuple[int | None, str, str]] = []
    for i in range(n):
        try:
            text = reader.pages[i].extract_text() or ""
        except (PyPdfError, ValueError, KeyError, TypeError, OSError, RecursionError) as exc:
            raise InputError(
                str(path),
                f"page {i + 1}",
                None,
                "a page pypdf can read",
                str(exc)[:200] or type(exc).__name__,
            ) from None
        parts.append((i + 1, "", budget.take(text, i + 1)))
    return parts


def _over(path: Path, what: str, limit: int, found: int) -> InputError:
    return InputError(
        str(path),
        None,
        None,
        f"at most {limit:,} {what}",
        f"{found:,} or more",
        f"split the document, or pass evalnb.DocumentLimits(max_{what.replace(' ', '_')}=...)",
    )


_DELIMITER_ROW = frozenset("|-: \t")


def _markdown_structure(path: Path, text: str, limits: DocumentLimits) -> None:
    """Count headings and table cells (as the parser will pad them) before parsing."""
    headings = cells = 0
    columns = 0  # inside a table: the width every row of it is padded to
    for line in text.split("\n"):
        stripped = line.strip()
        if columns and stripped:
            cells += columns
        elif columns:
            columns = 0
        if stripped.startswith("#") and 0 < len(stripped) - len(stripped.lstrip("#")) <= 6:
            headings += 1
        elif stripped and "-" in stripped and set(stripped) <= _DELIMITER_ROW:
            columns = stripped.strip("|").count("|") + 1  # a table's delimiter row (or a rule)
            cells += 2 * columns
            headings += 1  # "---" may also underline a heading: counted, as a bound
        elif stripped and set(stripped) == {"="}:
            headings += 1
        if headings > limits.max_headings:
            raise _over(path, "headings", limits.max_headings, headings)
        if cells > limits.max_table_cells:
            raise _over(path, "table cells", limits.max_table_cells, cells)


def _markdown(path: Path, data: bytes, budget: _Budget) -> list[tuple[int | None, str, str]]:
    from markdown_it import MarkdownIt  # noqa: PLC0415

    text = _utf8(path, data)
    _markdown_structure(path, text, budget.limits)
    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    outline = _Outline()
    level = 0  # inside a heading: its level
    for token in tokens:
        if token.type == "heading_open":
            level = int(token.tag[1:])
        elif token.type == "inline":
            text = "".join(
                c.content if c.type != "softbreak" else " " for c in token.children or []
            )
            if level:
                outline.heading(level, text)
            else:
                outline.add(budget.take(text))
        elif token.type == "heading_close":
            level = 0
        elif token.type in ("fence", "code_block"):
            outline.add(budget.take(token.content.rstrip("\n")))
    return outline.close()


_HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
_BLOCKS = ("p", "li", "pre", "blockquote", "td", "th", "dd", "dt", "figcaption", "caption")


def _html(path: Path, data: bytes, budget: _Budget) -> list[tuple[int | None, str, str]]:
    from bs4 import BeautifulSoup  # noqa: PLC0415

    # Counted on the bytes before BeautifulSoup makes a Python object of every element.
    limits = budget.limits
    headings = sum(1 for _ in _HTML_HEADING.finditer(data))
    if headings > limits.max_headings:
        raise _over(path, "headings", limits.max_headings, headings)
    elements = sum(1 for _ in _HTML_TAG.finditer(data))
    if elements > limits.max_elements:
        raise _over(path, "elements", limits.max_elements, elements)
    try:
        return _html_sections(BeautifulSoup(data, "lxml"), budget)
    except RecursionError:
        raise InputError(
            str(path),
            None,
            None,
            "HTML nested a few hundred levels at most",
            "deeper",
            "flatten the document",
        ) from None


_HTML_TAG = re.compile(rb"<[A-Za-z]")
_HTML_HEADING = re.compile(rb"<[hH][1-6][\s>/]")


def _html_sections(soup: Any, budget: _Budget) -> list[tuple[int | None, str, str]]:  # noqa: ANN401
    """Sections of a parsed page (decoded by its own charset, else sniffed)."""
    for junk in soup(["script", "style", "noscript", "template", "nav", "header", "footer"]):
        junk.decompose()
    outline = _Outline()
    blocks = frozenset(_BLOCKS)
    for el in soup.find_all([*_HEADINGS, *_BLOCKS]):
        if el.name in _HEADINGS:
            outline.heading(int(el.name[1]), " ".join(el.get_text(" ").split()))
        elif not _inside(el, blocks):  # a block inside a block is read with it
            text = el.get_text("" if el.name == "pre" else " ")
            outline.add(budget.take(text if el.name == "pre" else " ".join(text.split())))
    return outline.close()


def _inside(el: Any, names: frozenset[str]) -> bool:  # noqa: ANN401 - a BeautifulSoup tag
    """Whether an ancestor of ``el`` is one of ``names``.

    BeautifulSoup's ``find_parent`` builds a matcher on every call: 100,000 table cells
    took 20 s that way; walking the parents' names takes well under one.
    """
    parent = el.parent
    while parent is not None:
        if parent.name in names:
            return True
        parent = parent.parent
    return False


def _docx(path: Path, data: bytes, budget: _Budget) -> list[tuple[int | None, str, str]]:
    import docx  # noqa: PLC0415

    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            infos = archive.infolist()
    except zipfile.BadZipFile as exc:
        raise InputError(str(path), None, None, "a DOCX (a zip of XML parts)", str(exc)) from None
    check_members(
        infos,
        str(path),
        max_total=budget.limits.max_unzipped_bytes,
        total_hint="this looks like a zip bomb",
    )
    if len(infos) > MAX_ARCHIVE_MEMBERS:
        raise _over(path, "zip members", MAX_ARCHIVE_MEMBERS, len(infos))
    from lxml import etree  # noqa: PLC0415 - python-docx parses with it

    try:
        document = docx.Document(io.BytesIO(data))
    except (
        *ZIP_FAULTS,
        ValueError,
        KeyError,
        OSError,
        etree.XMLSyntaxError,
        RecursionError,
    ) as exc:
        # XMLSyntaxError: malformed XML, or nested past libxml2's 256 levels
        raise InputError(
            str(path),
            None,
            "word/document.xml",
            "a DOCX python-docx can read",
            str(exc)[:200] or type(exc).__name__,
        ) from None
    body = document.element.body
    elements = sum(1 for _ in body.iter("{*}p", "{*}tc"))
    if elements > budget.limits.max_elements:
        raise _over(path, "elements", budget.limits.max_elements, elements)
    outline = _Outline()
    for paragraph in document.paragraphs:
        style = paragraph.style.name if paragraph.style is not None else ""
        text = budget.take(paragraph.text)
        level = _docx_heading_level(style or "")
        if level:
            budget.heading()
            outline.heading(level, text)
        elif text.strip():
            outline.add(text)
    for table in document.tables:
        for row in table.rows:
            outline.add(budget.take(" | ".join(cell.text.strip() for cell in row.cells)))
    return outline.close()


def _docx_heading_level(style: str) -> int:
    """1–9 for Word's "Heading N" styles ("Title" counts as 1), 0 for any other style."""
    if style == "Title":
        return 1
    if style.startswith("Heading "):
        tail = style.removeprefix("Heading ")
        return int(tail) if tail.isdigit() else 0
    return 0


def _text(path: Path, data: bytes, budget: _Budget) -> list[tuple[int | None, str, str]]:
    return [(None, "", budget.take(_utf8(path, data)))]


_READERS: dict[str, Callable[[Path, bytes, _Budget], list[tuple[int | None, str, str]]]] = {
    ".pdf": _pdf,
    ".md": _markdown,
    ".markdown": _markdown,
    ".html": _html,
    ".htm": _html,
    ".docx": _docx,
    ".txt": _text,
    "": _text,  # README, LICENSE, COPYING: plain text by convention
}
SUFFIXES = tuple(s for s in _READERS if s)


def _looks_like_text(path: Path) -> bool:
    """Whether a file of unknown suffix (``Apache-2.0``, ``NEWS.1st``) reads as UTF-8 text."""
    import codecs  # noqa: PLC0415

    try:
        with path.open("rb") as f:
            head = f.read(8192)
    except OSError:
        return False
    if b"\0" in head:
        return False
    try:  # incremental: a character cut at the 8 KiB mark is not an error
        codecs.getincrementaldecoder("utf-8")().decode(head, final=False)
    except UnicodeDecodeError:
        return False
    return True


def read_document(path: str | Path, limits: DocumentLimits | None = None) -> list[Section]:
    """Read one document into sections (see the module docstring).

    Raises
    ------
    InputError
        When the file is of a kind not read here, breaks a limit or cannot be parsed.
    """
    path = Path(path)
    limits = limits or DocumentLimits()
    require_regular(path)  # before a first look at its bytes: a FIFO would block that look
    reader = _READERS.get(path.suffix.lower()) or (_text if _looks_like_text(path) else None)
    if reader is None:
        raise InputError(
            str(path),
            None,
            None,
            f"a document ending in one of {', '.join(SUFFIXES)}, or UTF-8 text",
            f"{path.suffix!r}",
            "convert it, or leave it out",
        )
    data = read_limited(path, limits.max_bytes, hint="split the document")
    return _join(str(path), reader(path, data, _Budget(path, limits)))


def document_paths(
    paths: str | Path | Iterable[str | Path], *, follow_links: bool = False
) -> list[Path]:
    """Return the documents named, a folder standing for the readable files under it (sorted).

    A symbolic link under a folder that leads out of it is refused unless ``follow_links``:
    a corpus folder shared or unpacked from elsewhere must not read ``/etc`` for it.
    """
    given = [paths] if isinstance(paths, str | Path) else list(paths)
    out: list[Path] = []
    for item in given:
        path = Path(item)
        if path.is_dir():
            for p in sorted(path.rglob("*")):
                if not (p.is_file() and not p.name.startswith(".")):
                    continue
                if not follow_links and p.is_symlink() and not within(p, path):
                    raise InputError(
                        str(p),
                        None,
                        None,
                        f"a file inside {path}",
                        f"a link to {p.resolve()}, outside it",
                        "pass follow_links=True to read what links lead to",
                    )
                if p.suffix.lower() in _READERS or _looks_like_text(p):
                    out.append(p)
        elif path.exists():
            out.append(path)
        else:
            raise InputError(
                str(path), None, None, "a document or a folder of them", "nothing there"
            )
    if not out:
        raise InputError(
            ", ".join(map(str, given)),
            None,
            None,
            f"documents ending in one of {', '.join(SUFFIXES)}",
            "none",
        )
    return out
