"""A corpus: documents read, cut into chunks and kept in a lab store (``evalnb.corpus``).

The chunks are the ``chunks`` table of a :class:`~evalnb.Lab`, so a corpus lives in the same
DuckDB file as the tests generated from it, and every generated case can name the chunk it
came from. Reading a document again replaces its chunks and nothing else.
"""

from __future__ import annotations

import hashlib
import json
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from evalnb.api.adversarial import ADVERSARIAL_REPORT, keep_report
from evalnb.api.lab import Lab
from evalnb.diagnosis.topics import TopicModel, topics
from evalnb.generation.judge_free import JUDGE_FREE
from evalnb.generation.llm_generators import REPORT_SCHEMA
from evalnb.generation.llm_kinds import LLM_KINDS
from evalnb.generation.retrieval_baseline import retrieval_answers
from evalnb.generation.suite import check_request, generate_cases
from evalnb.io.documents import DocumentLimits, document_paths, read_document
from evalnb.models.resolve import model_tokenizer
from evalnb.text.chunking import chunk_texts

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from evalnb.llm.client import LLMClient

__all__ = [
    "Corpus",
    "NoTopicsWarning",
    "corpus",
    "generate_tests",
    "generation_report",
    "retrieval_baseline",
]


def _chunk_id(doc: str, page: int | None, start: int, text: str) -> str:
    key = f"{doc}\x1f{page}\x1f{start}\x1f{text}".encode()
    return hashlib.blake2b(key, digest_size=8).hexdigest()


class Corpus:
    """Chunks of documents, with their topics, held in a lab (and its store, when saved).

    Attributes
    ----------
    lab
        The lab whose ``chunks`` table this corpus is.
    model
        The embedding model whose tokenizer sized the chunks (and that embeds them).
    """

    def __init__(self, lab: Lab, *, model: str = "all-MiniLM-L6-v2") -> None:
        self.lab = lab
        self.model = model

    @property
    def chunks(self) -> pl.DataFrame:
        """Return the chunks, one row each.

        Columns: ``chunk_id``, ``doc``, ``page``, ``heading``, the ``[start, end)`` span in
        the page's (PDF) or the document's text as read (sections joined by a blank line),
        ``text``, ``n_tokens`` and ``topic``.
        """
        return self.lab.table("chunks")

    def __repr__(self) -> str:
        c = self.chunks
        return (
            f"<evalnb.Corpus: {c['doc'].n_unique()} documents, {c.height} chunks, "
            f"{int(c['n_tokens'].sum() or 0):,} tokens, {c['topic'].drop_nulls().n_unique()} topics>"
        )

    def summary(self) -> pl.DataFrame:
        """Per document: pages, chunks, tokens and topics."""
        return self.chunks.group_by("doc", maintain_order=True).agg(
            pages=pl.col("page").n_unique(),
            chunks=pl.len(),
            tokens=pl.col("n_tokens").sum(),
            topics=pl.col("topic").drop_nulls().n_unique(),
        )

    def topics(self, *, min_topic_size: int = 5, seed: int = 0, **params: object) -> TopicModel:
        """Find the corpus's topics: :func:`evalnb.topics` run on the chunks' texts.

        The parameters are those of :func:`evalnb.topics` (H2O's topic-modeling ones). Edit
        the result (``rename``, ``merge``, ``exclude``), then keep it with
        :meth:`set_topics`.
        """
        texts = self.chunks["text"].to_list()
        return topics(
            texts,
            min_topic_size=min_topic_size,
            seed=seed,
            model=str(params.pop("model", self.model)),
            **params,  # type: ignore[arg-type]
        )

    def set_topics(self, model: TopicModel) -> Corpus:
        """Write each chunk's topic from ``model`` (fitted on these chunks); saved with the lab."""
        texts = self.chunks["text"]
        if model.assignments.height != texts.len() or not model.assignments["text"].equals(
            texts.rename("text")
        ):
            msg = (
                "this topic model was not fitted on this corpus's chunks (texts differ); "
                "fit it with corpus.topics(...)"
            )
            raise ValueError(msg)
        self.lab.replace_tables(
            {"chunks": self.chunks.with_columns(topic=model.assignments["topic"])}
        )
        return self

    def save(self, path: str | Path) -> Path:
        """Write the lab holding this corpus to a DuckDB store (see :meth:`evalnb.Lab.save`)."""
        return self.lab.save(path)


def corpus(
    paths: str | Path | Iterable[str | Path],
    *,
    store: str | Path | None = None,
    max_tokens: int = 256,
    model: str = "all-MiniLM-L6-v2",
    limits: DocumentLimits | None = None,
    follow_links: bool = False,
) -> Corpus:
    """Read documents into a :class:`Corpus` of chunks.

    Parameters
    ----------
    paths
        Documents (PDF, Markdown, HTML, plain text, DOCX), or folders of them.
    store
        A lab store to keep the corpus in: created if missing; in an existing store the
        documents read here replace their earlier chunks, the rest is kept.
    max_tokens
        Chunk budget in tokens of ``model``'s tokenizer (a chunk respects sentence ends
        whenever one fits).
    model
        The embedding model the chunks are for.
    limits
        Bounds on each document (size, pages, text, seconds, headings, table cells,
        elements; ``docs/limits.md``).
    follow_links
        Read files that symbolic links in a folder lead to outside it (refused by default).

    Raises
    ------
    evalnb.InputError
        When a document cannot be read, naming the file (and the page of a PDF).
    """
    sections = [
        s
        for path in document_paths(paths, follow_links=follow_links)
        for s in read_document(path, limits)
    ]
    pieces = chunk_texts(
        [s.text for s in sections], max_tokens=max_tokens, tokenizer=model_tokenizer(model)
    )
    meta = (
        pl.DataFrame(
            {
                "doc": [s.doc for s in sections],
                "page": [s.page for s in sections],
                "heading": [s.heading for s in sections],
                "offset": [s.start for s in sections],
            },
            schema={"doc": pl.String, "page": pl.Int64, "heading": pl.String, "offset": pl.Int64},
        )
        .with_row_index("section")
        .with_columns(pl.col("section").cast(pl.Int64))
    )
    # A PDF chunk's span is in its page's text; any other's in the whole document's text.
    new = pieces.join(meta, on="section").with_columns(
        start=pl.col("start") + pl.when(pl.col("page").is_null()).then("offset").otherwise(0),
        end=pl.col("end") + pl.when(pl.col("page").is_null()).then("offset").otherwise(0),
    )
    new = new.with_columns(
        chunk_id=pl.struct("doc", "page", "start", "text").map_elements(
            lambda r: _chunk_id(r["doc"], r["page"], r["start"], r["text"]), return_dtype=pl.String
        ),
        topic=pl.lit(None, pl.String),
    ).select("chunk_id", "doc", "page", "heading", "start", "end", "text", "n_tokens", "topic")
    if store is not None and Path(store).exists():
        lab = Lab.open(store)
        kept = lab.table("chunks").filter(~pl.col("doc").is_in(new["doc"].unique().to_list()))
        lab.replace_tables({"chunks": pl.concat([kept, new])})
    else:
        lab = Lab({"chunks": new})
        if store is not None:
            lab.save(store)
    return Corpus(lab, model=model)


def generate_tests(
    corpus: Corpus,
    n: int = 50,
    *,
    generators: Sequence[str] | None = None,
    llm: LLMClient | None = None,
    topics: Sequence[str] | None = None,
    seed: int = 0,
    dedupe: float = 0.92,
    json_mode: bool = True,
    auto_topics: bool = True,
) -> Lab:
    """Generate a test suite from a corpus: a lab of cases traced to their chunks.

    Parameters
    ----------
    corpus
        The corpus (:func:`evalnb.corpus`); set its topics first for topic balance.
    n
        How many cases at most (fewer when the corpus offers fewer distinct questions).
    generators
        Generators to use, judge-free and LLM ones mixed as wished. Judge-free (offline):
        ``cloze``, ``definition``, ``section``, ``numeric``, ``yes_no``
        (:mod:`evalnb.generation.judge_free`). LLM (need ``llm``): ``factual``,
        ``boolean``, ``multiple_choice``, ``multi_hop``, ``inference``, ``comparison``,
        ``numerical``, ``conditional``, ``ambiguity``, ``unanswerable``
        (:mod:`evalnb.generation.llm_kinds`). Default: the LLM ones with ``llm``, else the
        judge-free ones.
    llm
        The client that writes the LLM generators' questions. Its cache makes a repeated
        or interrupted run send no call twice.
    topics
        Only chunks of these topics.
    seed
        Same seed, same corpus (and the same LLM replies): same suite.
    dedupe
        Cosine similarity of two prompts from which the later one is dropped.
    json_mode
        Ask the LLM endpoint for JSON replies (``response_format``); turn off for a
        server that rejects the parameter.
    auto_topics
        When no chunk has a topic yet, find them first (``corpus.set_topics(corpus.topics())``,
        as the MRM workflow does), so cases carry a topic and are balanced over them. A
        corpus too small for topic modeling is used as it is, with a warning saying how to
        give its chunks topics.

    Returns
    -------
    evalnb.Lab
        The corpus's lab with the generated cases added: ``question_type`` is the
        generator, ``topic`` the chunk's, ``corpus`` the chunks' texts, and ``extra`` (JSON)
        the generator, chunk ids, documents, evidence passages and whether the corpus
        answers the question. In the corpus's store when it has one; the LLM generators'
        counts are kept with it (:func:`generation_report`).
    """
    names = list(generators or (LLM_KINDS if llm is not None else JUDGE_FREE))
    check_request(names, n, llm)  # before topic modeling: a wrong call fails at once
    if corpus.chunks["topic"].is_null().all() and corpus.chunks.height:
        _find_topics(corpus, seed=seed, auto=auto_topics)
    cases, report = generate_cases(
        corpus.chunks,
        n=n,
        generators=names,
        topics=topics,
        seed=seed,
        dedupe=dedupe,
        model=corpus.model,
        llm=llm,
        json_mode=json_mode,
    )
    old = corpus.lab.cases.filter(~pl.col("case_id").is_in(cases["case_id"].to_list()))
    entry = {
        "llm": llm.model if llm is not None else None,
        "seed": seed,
        "n": n,
        "generators": report.to_dicts(),
    }
    return corpus.lab.with_tables(
        {
            "cases": pl.concat([old, cases], how="diagonal_relaxed"),
            "info": keep_report(corpus.lab, _REPORT_KEY, entry),
        }
    )


_REPORT_KEY = "test_generation"


def _find_topics(corpus: Corpus, *, seed: int, auto: bool) -> None:
    """Give a corpus without topics its topics, or warn that the cases will carry none."""
    how = (
        "Call corpus.set_topics(corpus.topics(min_topic_size=...)) first, or set the "
        "chunks' topic column yourself"
    )
    if not auto:
        warnings.warn(
            f"the corpus has no topics, so the generated cases carry none. {how}.",
            NoTopicsWarning,
            stacklevel=3,
        )
        return
    try:
        corpus.set_topics(corpus.topics(seed=seed))
    except ValueError as exc:  # too few chunks for topic modeling
        warnings.warn(
            f"the corpus has no topics and topic modeling could not run ({exc}); "
            f"the generated cases carry no topic. {how}.",
            NoTopicsWarning,
            stacklevel=3,
        )


class NoTopicsWarning(UserWarning):
    """Generated test cases carry no topic (the corpus has none)."""


def generation_report(lab: Lab, step: str = "tests") -> pl.DataFrame:
    """Return the LLM's counts of the last :func:`generate_tests` (or :func:`adversarial`).

    One row per LLM generator (``step="adversarial"``: per adversarial kind): ``calls``
    sent, ``failed_calls`` (no reply after retries), ``parse_failures`` (replies not one
    JSON object of the expected schema, or quoting evidence their source does not hold),
    ``parsed``, ``used`` (cases kept) and ``failure_reasons`` (JSON counts by reason).
    Empty when no LLM wrote them.
    """
    keys = {"tests": _REPORT_KEY, "adversarial": ADVERSARIAL_REPORT}
    if step not in keys:
        msg = f"step must be one of {sorted(keys)}; got {step!r}"
        raise ValueError(msg)
    found = lab.table("info").filter(pl.col("key") == keys[step])["value"].to_list()
    rows = json.loads(found[-1])["generators"] if found else []
    return pl.DataFrame(rows, schema=REPORT_SCHEMA)


def retrieval_baseline(
    lab: Lab,
    corpus: Corpus,
    *,
    name: str = "retrieval-baseline",
    k: int = 3,
    cases: Sequence[str] | None = None,
) -> Lab:
    """Answer ``lab``'s cases from ``corpus`` by retrieval alone: a reference system, offline.

    Each case's context is the ``k`` chunks closest to its prompt, its answer the sentence
    of those closest to the prompt (:mod:`evalnb.generation.retrieval_baseline`). A floor a RAG
    should beat, and a system to run the evaluation workflow on without an LLM. Returns
    the lab with the answers as model ``name``'s outputs (in its store when it has one);
    ``cases``: answer only these ids.
    """
    return retrieval_answers(lab, corpus.chunks, name=name, k=k, model=corpus.model, cases=cases)
