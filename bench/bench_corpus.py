"""Corpus throughput: read, chunk, embed and topic-model about 1,000 pages on this machine.

The pages are real, distinct text: the long descriptions (READMEs) and license files that
the installed Python packages ship in their metadata, and Debian's license texts, written as
Markdown and text documents. A page is 3,000 characters (about 500 words). Embeddings are
cached on disk by text, so the run uses an empty cache folder: every chunk is embedded.

Run: ``.venv/bin/python bench/bench_corpus.py [--pages 1000]``.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from email.message import Message

PAGE_CHARS = 3_000


def _texts() -> list[tuple[str, str, str]]:
    """(name, suffix, text) of every distinct real document found, longest first."""
    found: dict[str, tuple[str, str, str]] = {}
    for dist in importlib.metadata.distributions():
        name = str(dist.metadata["Name"])
        # The long description is the message body (PackageMetadata is an email Message).
        body = str(cast("Message", dist.metadata).get_payload() or "")
        if len(body) > 1_000:
            found.setdefault(body, (f"{name}-README", ".md", body))
        for file in dist.files or []:
            if "LICENSE" in file.name.upper() or "COPYING" in file.name.upper():
                try:
                    text = Path(str(file.locate())).read_text(encoding="utf-8")
                except (OSError, UnicodeDecodeError):
                    continue
                if len(text) > 1_000:
                    found.setdefault(text, (f"{name}-{file.name}", ".txt", text))
    licenses = Path("/usr/share/common-licenses")
    if licenses.is_dir():
        for path in sorted(licenses.iterdir()):
            if path.is_file():
                text = path.read_text(encoding="utf-8", errors="replace")
                found.setdefault(text, (f"debian-{path.name}", ".txt", text))
    return sorted(found.values(), key=lambda t: -len(t[2]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=1_000)
    args = parser.parse_args()
    os.environ["EVALNB_CACHE_DIR"] = tempfile.mkdtemp()  # an empty embedding cache
    import evalnb  # noqa: PLC0415 - after the cache folder is set

    folder = Path(tempfile.mkdtemp()) / "corpus"
    folder.mkdir()
    chars = 0
    for i, (name, suffix, text) in enumerate(_texts()):
        if chars >= args.pages * PAGE_CHARS:
            break
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in name)
        (folder / f"{i:04d}-{safe}{suffix}").write_text(text, encoding="utf-8")
        chars += len(text)
    pages = chars / PAGE_CHARS
    print(
        f"corpus: {len(list(folder.iterdir()))} documents, {chars:,} characters = {pages:,.0f} pages"
    )

    start = time.perf_counter()
    corpus = evalnb.corpus(folder, max_tokens=256)
    read = time.perf_counter() - start
    texts = corpus.chunks["text"].to_list()
    from evalnb.models.encoder import get_encoder  # noqa: PLC0415

    encoder = get_encoder("all-MiniLM-L6-v2")
    encoder.encode(["warm-up"])
    start = time.perf_counter()
    encoder.encode(texts)
    embed = time.perf_counter() - start
    start = time.perf_counter()
    model = corpus.topics(min_topic_size=10, seed=0)  # embeddings now come from the cache
    topics = time.perf_counter() - start
    total = read + embed + topics
    print(f"chunks: {len(texts):,} (≤ 256 tokens)")
    print(f"read + chunk   {read:7.1f} s  {pages / read:8.1f} pages/s")
    print(
        f"embed          {embed:7.1f} s  {pages / embed:8.1f} pages/s  ({len(texts) / embed:.0f} chunks/s)"
    )
    print(f"topic model    {topics:7.1f} s  ({model.topics.height} topics, UMAP + HDBSCAN/k-means)")
    print(f"all            {total:7.1f} s  {pages / total:8.1f} pages/s")


if __name__ == "__main__":
    main()
