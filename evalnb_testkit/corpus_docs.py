"""A small real corpus for the corpus tests, in every format evalnb reads.

The words are real: Debian's license texts (``/usr/share/common-licenses``, from base-files)
and the README that sentence-transformers ships in its package metadata. Only the file
formats are made here, by the libraries that write them (markdown-it-py renders the HTML,
python-docx writes the DOCX, pypdf the PDF), as no PDF or DOCX is shipped on every machine.
"""

from __future__ import annotations

import importlib.metadata
import io
from pathlib import Path

LICENSES = Path("/usr/share/common-licenses")


def readme_markdown() -> str:
    """sentence-transformers' README (Markdown), as its wheel ships it."""
    meta = importlib.metadata.metadata("sentence-transformers")
    return str(meta.get_payload())


def license_text(name: str = "Apache-2.0") -> str:
    return (LICENSES / name).read_text(encoding="utf-8")


def write_html(path: Path, markdown: str) -> Path:
    from markdown_it import MarkdownIt

    body = MarkdownIt("commonmark").render(markdown)
    page = (
        f"<!doctype html><html><head><title>README</title><script>var leak = 'SCRIPT';</script>"
        f"</head><body><nav>NAVIGATION</nav>{body}</body></html>"
    )
    path.write_text(page, encoding="utf-8")
    return path


def write_docx(path: Path, markdown: str) -> Path:
    """The README's headings as Word headings, its other non-empty lines as paragraphs."""
    import docx

    document = docx.Document()
    fenced = False
    for line in markdown.splitlines():
        stripped = line.strip()
        if stripped.startswith("```"):
            fenced = not fenced
        if fenced or stripped.startswith("```"):
            continue  # code, where "#" starts a comment
        if stripped.startswith("#"):
            level = len(stripped) - len(stripped.lstrip("#"))
            document.add_heading(stripped.lstrip("#").strip(), level=min(level, 9))
        elif stripped and not stripped.startswith(("<", "[![", "```")):
            document.add_paragraph(stripped)
    document.save(str(path))
    return path


def pdf_bytes(pages: list[list[str]]) -> bytes:
    """A PDF whose page i shows the lines of ``pages[i]`` in Helvetica."""
    from pypdf import PdfWriter
    from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject

    writer = PdfWriter()
    font = writer._add_object(
        DictionaryObject(
            {
                NameObject("/Type"): NameObject("/Font"),
                NameObject("/Subtype"): NameObject("/Type1"),
                NameObject("/BaseFont"): NameObject("/Helvetica"),
            }
        )
    )
    for lines in pages:
        page = writer.add_blank_page(612, 792)
        page[NameObject("/Resources")] = DictionaryObject(
            {NameObject("/Font"): DictionaryObject({NameObject("/F1"): font})}
        )
        shown = " T* ".join(
            "(" + ln.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)") + ") Tj"
            for ln in lines
        )
        stream = DecodedStreamObject()
        stream.set_data(f"BT /F1 9 Tf 11 TL 50 760 Td {shown} ET".encode("latin-1", "replace"))
        page[NameObject("/Contents")] = writer._add_object(stream)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def write_pdf(path: Path, text: str, lines_per_page: int = 60) -> Path:
    """``text`` (ASCII) laid out over pages of ``lines_per_page`` lines."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    pages = [lines[i : i + lines_per_page] for i in range(0, len(lines), lines_per_page)]
    path.write_bytes(pdf_bytes(pages))
    return path


def build(folder: Path) -> dict[str, Path]:
    """One document per format in ``folder``; returns them by format."""
    folder.mkdir(parents=True, exist_ok=True)
    readme = readme_markdown()
    (folder / "README.md").write_text(readme, encoding="utf-8")
    (folder / "GPL-3").write_text(license_text("GPL-3"), encoding="utf-8")
    return {
        "md": folder / "README.md",
        "html": write_html(folder / "readme.html", readme),
        "docx": write_docx(folder / "readme.docx", readme),
        "pdf": write_pdf(folder / "apache.pdf", license_text("Apache-2.0")),
        "text": folder / "GPL-3",
    }
