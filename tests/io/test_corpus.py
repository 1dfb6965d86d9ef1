"""Documents into a corpus of chunks: every format, broken files, the store, topics."""

from __future__ import annotations

import zipfile
from pathlib import Path

import duckdb
import polars as pl
import pytest

import evalnb
from evalnb.io.documents import DocumentLimits, read_document
from evalnb_testkit.corpus_docs import LICENSES, build, license_text, pdf_bytes, readme_markdown

pytestmark = pytest.mark.skipif(not LICENSES.is_dir(), reason="needs Debian's base-files")


@pytest.fixture(scope="module")
def docs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return build(tmp_path_factory.mktemp("docs"))


def _headings(markdown: str) -> list[str]:
    fenced, out = False, []
    for line in markdown.splitlines():
        if line.strip().startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith("## "):
            out.append(line[3:].strip())
    return out


def test_each_format_reads_into_sections(docs: dict[str, Path]) -> None:
    wanted = _headings(readme_markdown())[:3]
    assert len(wanted) == 3
    for kind in ("md", "html", "docx"):
        sections = read_document(docs[kind])
        leaves = [s.heading.split(" › ")[-1] for s in sections]
        assert all(h in leaves for h in wanted), (kind, leaves)
        assert all(s.page is None for s in sections)
    html = " ".join(s.text for s in read_document(docs["html"]))
    assert "SCRIPT" not in html and "NAVIGATION" not in html  # scripts and navigation dropped
    pdf = read_document(docs["pdf"])
    assert [s.page for s in pdf] == list(range(1, len(pdf) + 1)) and len(pdf) >= 3
    assert "Apache License" in pdf[0].text
    text = read_document(docs["text"])
    assert len(text) == 1 and text[0].text == license_text("GPL-3").strip()


def test_chunks_are_exact_slices_within_the_token_budget(docs: dict[str, Path]) -> None:
    corpus = evalnb.corpus(docs.values(), max_tokens=96)
    chunks = corpus.chunks
    assert set(chunks["doc"]) == {str(p) for p in docs.values()}
    assert chunks["n_tokens"].max() <= 96
    assert chunks["chunk_id"].n_unique() == chunks.height
    for doc, part in chunks.group_by("doc"):
        sections = read_document(str(doc[0]))
        whole = "\n\n".join(s.text for s in sections)
        for row in part.iter_rows(named=True):
            source = sections[row["page"] - 1].text if row["page"] is not None else whole
            assert source[row["start"] : row["end"]] == row["text"]
    # sentences are respected where they fit: most chunks end at a sentence or a line end
    ends = chunks.filter(pl.col("n_tokens") < 90)["text"].str.strip_chars().str.slice(-1)
    assert (ends.is_in([".", ":", ";", "!", "?", ")"]).mean() or 0) > 0.5


def test_broken_files_name_the_file(tmp_path: Path) -> None:
    cases: list[tuple[Path, str]] = []
    bad_pdf = tmp_path / "cut.pdf"
    bad_pdf.write_bytes(pdf_bytes([["a line"]])[:60])
    cases.append((bad_pdf, "expected a PDF pypdf can read"))
    not_zip = tmp_path / "plain.docx"
    not_zip.write_text("not a zip at all", encoding="utf-8")
    cases.append((not_zip, "expected a DOCX (a zip of XML parts)"))
    latin = tmp_path / "latin.txt"
    latin.write_bytes("caf\xe9 au lait".encode("latin-1"))
    cases.append((latin, "byte 3: expected UTF-8 text"))
    binary = tmp_path / "blob.bin"
    binary.write_bytes(b"\x00\x01\x02" * 100)
    cases.append((binary, "or UTF-8 text, found '.bin'"))
    for path, message in cases:
        with pytest.raises(evalnb.InputError) as raised:
            evalnb.corpus(path)
        assert str(path) in str(raised.value) and message in str(raised.value), raised.value


def test_documents_are_bounded(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.docx"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("word/document.xml", "<w/>" + " " * 5_000_000)  # compresses to a few KB
    assert bomb.stat().st_size < 50_000
    with pytest.raises(evalnb.InputError, match="zip bomb"):
        read_document(bomb, DocumentLimits(max_unzipped_bytes=1_000_000))
    big = tmp_path / "big.txt"
    big.write_text("word " * 1000, encoding="utf-8")
    with pytest.raises(evalnb.InputError, match="at most 100 bytes"):
        read_document(big, DocumentLimits(max_bytes=100))
    pdf = tmp_path / "long.pdf"
    pdf.write_bytes(pdf_bytes([["page"]] * 5))
    with pytest.raises(evalnb.InputError, match="at most 3 pages, found 5 pages"):
        read_document(pdf, DocumentLimits(max_pages=3))
    with pytest.raises(evalnb.InputError, match="at most 2,000 characters"):
        read_document(LICENSES / "GPL-3", DocumentLimits(max_chars=2_000))


def test_an_encrypted_pdf_says_so(tmp_path: Path) -> None:
    import io

    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(pdf_bytes([["secret"]]))))
    writer.encrypt("pw")
    path = tmp_path / "locked.pdf"
    with path.open("wb") as f:
        writer.write(f)
    with pytest.raises(evalnb.InputError, match=r"expected an unencrypted PDF.*qpdf --decrypt"):
        read_document(path)


def test_the_corpus_lives_in_the_store_and_rereading_replaces_a_document(
    docs: dict[str, Path], tmp_path: Path
) -> None:
    store = tmp_path / "lab.duckdb"
    first = evalnb.corpus(docs["md"], store=store)
    evalnb.corpus(docs["text"], store=store)
    chunks = evalnb.open(store).table("chunks")
    assert set(chunks["doc"]) == {str(docs["md"]), str(docs["text"])}
    assert chunks.filter(pl.col("doc") == str(docs["md"])).equals(first.chunks)
    changed = tmp_path / "GPL-3"
    changed.write_text("Only one sentence is left here.", encoding="utf-8")
    evalnb.corpus(changed, store=store)
    evalnb.corpus(docs["text"], store=store)
    again = evalnb.open(store).table("chunks")
    assert (
        again.filter(pl.col("doc") == str(docs["text"])).height
        == chunks.filter(pl.col("doc") == str(docs["text"])).height
    )  # replaced, not appended


def test_a_store_from_before_chunks_reads_with_none(tmp_path: Path) -> None:
    store = tmp_path / "old.duckdb"
    evalnb.load(pl.DataFrame({"prompt": ["q"], "actual": ["a"], "model": ["m"]})).save(store)
    with duckdb.connect(str(store)) as con:
        con.execute('DROP TABLE "chunks"')
    lab = evalnb.open(store)
    assert lab.table("chunks").height == 0 and lab.cases.height == 1


@pytest.mark.slow
def test_topics_of_a_real_corpus_are_kept_with_it(tmp_path: Path) -> None:
    store = tmp_path / "lab.duckdb"
    names = ["Apache-2.0", "GPL-3", "MPL-2.0", "GFDL-1.3"]
    corpus = evalnb.corpus([LICENSES / n for n in names], store=store, max_tokens=160)
    model = corpus.topics(min_topic_size=5, seed=0)
    assert model.topics.height >= 2
    corpus.set_topics(model.rename(0, "main terms"))
    kept = evalnb.open(store).table("chunks")
    assert kept["topic"].drop_nulls().n_unique() == model.topics.height
    assert "main terms" in set(kept["topic"])
    with pytest.raises(ValueError, match="not fitted on this corpus"):
        evalnb.corpus(LICENSES / "BSD").set_topics(model)
