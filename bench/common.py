"""Timing helpers shared by the benchmarks: warm medians and cold whole-process runs."""

from __future__ import annotations

import gc
import importlib.util
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import polars as pl

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = [
    "ROOT",
    "cold_seconds",
    "evalnb_warm",
    "peak_rss_gb",
    "ragas_similarity",
    "ratios",
    "warm_median",
    "write_pairs",
]

ROOT = Path(__file__).resolve().parents[1]
T = TypeVar("T")


def warm_median(
    fn: Callable[..., T], runs: int, setup: Callable[[], object] | None = None
) -> tuple[float, T]:
    """Median seconds of ``runs`` calls (the caller warms up first) and the last result.

    With ``setup``, each call gets a fresh ``setup()`` result as its argument, made outside
    the timing (a fresh lab for each run, as a peer gets its input lists ready-made). The
    garbage of earlier runs (and of the other side) is collected before each call, outside
    the timing: a collection of another side's millions of objects would otherwise land in
    whichever short run happens to cross the threshold.
    """
    times, result = [], None
    for _ in range(runs):
        args = () if setup is None else (setup(),)
        gc.collect()
        start = time.perf_counter()
        result = fn(*args)
        times.append(time.perf_counter() - start)
    return statistics.median(times), result  # type: ignore[return-value]


def evalnb_warm(
    frame: pl.DataFrame,
    evaluator: str,
    runs: int,
    before: Callable[[], object] | None = None,
    **params: object,
) -> tuple[float, float, pl.DataFrame]:
    """Time ``evalnb.evaluate(lab, [evaluator]).scores`` on a fresh lab per run.

    Each run's lab is loaded (``evalnb.load(frame)``) just before it, outside the evaluate
    timing, as a peer gets its lists of texts ready-made; the loading is timed on its own so
    that a benchmark prints both. ``before`` runs before each load (clearing caches).

    Returns
    -------
    tuple
        Median evaluate seconds, median load seconds, and the scores one column per metric.
    """
    import evalnb  # noqa: PLC0415 - the benchmarks put the repository on sys.path first

    loads: list[float] = []

    def fresh() -> evalnb.Lab:
        if before is not None:
            before()
        start = time.perf_counter()
        lab = evalnb.load(frame)
        loads.append(time.perf_counter() - start)
        return lab

    seconds, scores = warm_median(
        lambda lab: evalnb.evaluate(lab, [evaluator], progress=False, **params).scores,
        runs,
        setup=fresh,
    )
    wide = scores.pivot(on="metric", index="case_id", values="value", maintain_order=True)
    return seconds, statistics.median(loads), wide


def ratios(peer_s: float, ours_s: float, load_s: float) -> str:
    """The warm ratio, then the ratio with the lab's loading counted on our side too."""
    return f"{peer_s / ours_s:.1f}x ({peer_s / (ours_s + load_s):.1f}x with the load)"


def write_pairs(cands: list[str], refs: list[str]) -> Path:
    """Write the pairs to a Parquet file both sides of a cold run read."""
    path = Path(tempfile.mkdtemp(prefix="evalnb-bench-")) / "pairs.parquet"
    pl.DataFrame({"actual": cands, "expected": refs}).write_parquet(path)
    return path


def cold_seconds(code: str, data: Path, runs: int = 3) -> float:
    """Median wall seconds of a fresh interpreter running ``code`` (imports included).

    ``code`` reads the pairs from the path in ``DATA`` (a Parquet file of ``actual`` and
    ``expected``), as both sides of a cold comparison do.
    """
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "-c", f"DATA = {str(data)!r}\n{code}"], check=True, cwd=ROOT
        )
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def with_peers() -> bool:
    """Make ragas importable: append ``.venv-peers``' site-packages when it is not already.

    ragas' pins clash with our dev tools, so ``scripts/test`` installs it (and the other
    peers) in ``.venv-peers``; the benches read it from there. Returns whether ragas imports.
    """
    if importlib.util.find_spec("ragas") is not None:
        return True
    found = sorted((ROOT / ".venv-peers" / "lib").glob("python3*/site-packages"))
    if not found:
        return False
    sys.path.append(str(found[0]))
    importlib.invalidate_caches()
    return importlib.util.find_spec("ragas") is not None


def ragas_similarity(answers: list[str], refs: list[str], model: str) -> tuple[float, list[float]]:
    """Seconds and scores of ragas ``SemanticSimilarity`` over the pairs (warmed up first).

    Raises ImportError when ragas is not importable here nor in ``.venv-peers`` (which
    ``scripts/test`` builds).
    """
    import warnings  # noqa: PLC0415

    with_peers()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from ragas.embeddings import HuggingFaceEmbeddings  # noqa: PLC0415
        from ragas.metrics.collections import SemanticSimilarity  # noqa: PLC0415

        metric = SemanticSimilarity(embeddings=HuggingFaceEmbeddings(model=model))
        metric.batch_score([{"reference": "warm", "response": "up"}])
        start = time.perf_counter()
        results = metric.batch_score(
            [{"reference": r, "response": a} for a, r in zip(answers, refs, strict=True)]
        )
        return time.perf_counter() - start, [float(r.value) for r in results]


def peak_rss_gb() -> float:
    """The peak resident memory of this process so far, in GB.

    Linux's ``VmHWM`` where there is one: ``ru_maxrss`` is inherited across fork and exec,
    so a child started by a large process would report its parent's peak.
    """
    status = Path("/proc/self/status")
    if status.exists():
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024**2
    import resource  # noqa: PLC0415 - POSIX only, and only the memory-reporting benches need it

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2
