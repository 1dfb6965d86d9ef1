"""RAG systems for the workflow tests: a real embedding retriever with an extractive answer.

``lazy_rag(store)`` reads the corpus from the workflow's store at its first call (the
topic-modeling step puts it there) and logs every prompt it is asked to
``$EVALNB_TEST_ASKED`` (one line each), so a test can count what was asked. With
``$EVALNB_TEST_HANG_AFTER=N`` it answers N calls and then stops answering (a system that
hangs mid-step), so a test can kill the run at a known point instead of racing it.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from pathlib import Path

import numpy as np

_lock = threading.Lock()


class Rag:
    """Top-3 chunks by cosine as context; their sentence closest to the question as answer."""

    def __init__(self, store: str | Path, delay_s: float = 0.0) -> None:
        self.store, self.delay_s = Path(store), delay_s
        self.chunks: list[str] | None = None
        self.vectors: np.ndarray | None = None
        self.calls = 0

    def _load(self) -> None:
        import evalnb
        from evalnb.models.encoder import get_encoder

        self.chunks = evalnb.open(self.store).table("chunks")["text"].to_list()
        vec = get_encoder("all-MiniLM-L6-v2").encode(self.chunks)
        self.vectors = vec / np.linalg.norm(vec, axis=1, keepdims=True)

    def __call__(self, prompt: str) -> tuple[str, list[str]]:
        from evalnb.models.encoder import get_encoder
        from evalnb.text.sentences import split_sentences

        log = os.environ.get("EVALNB_TEST_ASKED")
        answers = int(os.environ.get("EVALNB_TEST_HANG_AFTER") or 0)
        with _lock:  # one call count and one log file for all the threads
            self.calls += 1
            hangs = 0 < answers < self.calls
            if log:
                with Path(log).open("a", encoding="utf-8") as f:
                    f.write(prompt.replace("\n", "\\n") + "\n")
        if hangs:
            time.sleep(3600)  # until the test kills the process: no answer to compute
        with _lock:  # one encoder for all the threads
            if self.chunks is None:
                self._load()
            assert self.chunks is not None and self.vectors is not None
            encoder = get_encoder("all-MiniLM-L6-v2")
            q = encoder.encode([prompt])[0]
            top = np.argsort(-(self.vectors @ (q / np.linalg.norm(q))), kind="stable")[:3]
            contexts = [self.chunks[i] for i in top]
            sentences = [s for c in contexts for s in split_sentences([c])[0]] or contexts
            sv = encoder.encode(sentences)
            best = sentences[int(np.argmax(sv @ q / np.linalg.norm(sv, axis=1)))]
        time.sleep(self.delay_s)
        return best, contexts


def lazy_rag(store: str | Path, delay_s: float = 0.0) -> Rag:
    """The system of the workflow kept in ``store``."""
    return Rag(store, delay_s)


def async_rag(store: str | Path):
    """The same system as an ``async def`` (as a LlamaIndex async pipeline would be)."""
    rag = Rag(store)

    async def answer(prompt: str) -> dict[str, object]:
        await asyncio.sleep(0)
        text, contexts = rag(prompt)
        return {"answer": text, "contexts": contexts}

    return answer
