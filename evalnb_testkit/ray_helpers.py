"""What the Ray engine tests run inside Ray workers: an evaluator that kills its own worker
once, and one that logs every encoder load and encode call of its process."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from evalnb.evaluation.base import Param, register, unregister
from evalnb.evaluation.families.models.embedding import AnswerSimilarity
from evalnb.evaluation.families.text.rouge import Rouge

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping

    import polars as pl

    from evalnb.evaluation.base import Context

# Where the hook writes (set by the test before the cluster starts; workers inherit it).
LOG_ENV = "EVALNB_TEST_RAY_LOG"


class RougeKillingItsWorker(Rouge):
    """ROUGE, except that the first batch holding ``victim`` kills its worker process.

    A marker file says the kill happened, so the batch Ray retries scores normally: the
    retry must neither lose that batch's rows nor add them twice. Its blocks are small, so
    that Ray's batches cross the local engine's block boundaries and the results must be put
    back in the local order.
    """

    id = "rouge_killing_its_worker"
    block_rows = 1000
    params: ClassVar[tuple[Param, ...]] = (
        *Rouge.params,
        Param(
            "victim", str, default="", description="case id whose batch dies once", scoring=False
        ),
        Param("marker", str, default="", description="file marking the kill", scoring=False),
    )

    def score(self, rows: pl.DataFrame, params: Mapping[str, object], ctx: Context) -> pl.DataFrame:
        marker = Path(str(params["marker"]))
        if str(params["victim"]) in rows["case_id"].to_list() and not marker.exists():
            marker.write_text(str(os.getpid()))
            os._exit(1)  # the worker dies as a killed process does: no cleanup, no reply
        own = {k: v for k, v in params.items() if k not in ("victim", "marker")}
        return super().score(rows, own, ctx)


class AnswerSimilarityLogged(AnswerSimilarity):
    """Answer similarity that logs, per process, every encoder load and encode call.

    Its first batch in a process patches the encoder there (before the encoder is asked
    for), appending ``load PID`` / ``encode PID`` lines to the file named by ``LOG_ENV``.
    A Ray worker setup hook did this once, but any ``runtime_env`` made every Ray run of
    the tests three to five times slower.
    """

    id = "answer_similarity_logged"

    def score(self, rows: pl.DataFrame, params: Mapping[str, object], ctx: Context) -> pl.DataFrame:
        log_encoder_use()
        return super().score(rows, params, ctx)


@contextlib.contextmanager
def registered_helpers() -> Iterator[None]:
    """Register these evaluators for the Ray tests only, and forget them after.

    Registered at import, every test process that merely collected the Ray tests listed
    them beside the built-ins, and a test running every evaluator ran these too.
    """
    helpers = (RougeKillingItsWorker, AnswerSimilarityLogged)
    for cls in helpers:
        register(cls, replace=True)
    try:
        yield
    finally:
        for cls in helpers:
            unregister(cls.id)


def log_encoder_use() -> None:
    """Append ``load PID`` / ``encode PID`` lines to the log file (once per process)."""
    from evalnb.models import encoder

    if getattr(encoder.TextEncoder, "_logged", False) or LOG_ENV not in os.environ:
        return
    log = Path(os.environ[LOG_ENV])
    init, encode = encoder.TextEncoder.__init__, encoder.TextEncoder.encode

    def logged_init(self: encoder.TextEncoder, *args: object, **kwargs: object) -> None:
        with log.open("a") as out:
            out.write(f"load {os.getpid()}\n")
        init(self, *args, **kwargs)  # type: ignore[arg-type]

    def logged_encode(self: encoder.TextEncoder, texts: list[str]) -> object:
        with log.open("a") as out:
            out.write(f"encode {os.getpid()}\n")
        return encode(self, texts)

    encoder.TextEncoder.__init__ = logged_init  # type: ignore[method-assign]
    encoder.TextEncoder.encode = logged_encode  # type: ignore[method-assign,assignment]
    encoder.TextEncoder._logged = True  # type: ignore[attr-defined]
