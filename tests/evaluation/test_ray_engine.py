"""The Ray Data engine on a real local Ray cluster: equal scores, a killed worker, one model load per actor."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import evalnb
from evalnb_testkit import ray_helpers

if TYPE_CHECKING:
    from collections.abc import Iterator

ray = pytest.importorskip("ray")
cloudpickle = pytest.importorskip("cloudpickle")

# One cluster for the module, on one xdist worker (a cluster is a second of CPU and 1 GB).
pytestmark = pytest.mark.xdist_group("ray")
N = 2400
FAST = ["bleu", "rouge", "pii_leakage", "text_matching"]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    log = tmp_path_factory.mktemp("ray") / "encoder.log"
    os.environ[ray_helpers.LOG_ENV] = str(log)
    # The test helpers travel by value: Ray workers do not have the tests folder on their path.
    cloudpickle.register_pickle_by_value(ray_helpers)
    # No runtime_env: any (even an empty setup hook) made each Ray run 3-5x slower here.
    # Idle workers stay up for the module (Ray stops them after a second by default, and
    # each run then started new ones: a Python start and its imports each), and no metrics
    # are collected: the module's runs took 10-40 % less time.
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        logging_level="ERROR",
        _system_config={
            "idle_worker_killing_time_threshold_ms": 600_000,
            "enable_metrics_collection": False,
        },
    )
    try:
        with ray_helpers.registered_helpers():
            yield log
    finally:
        ray.shutdown()
        cloudpickle.unregister_pickle_by_value(ray_helpers)
        del os.environ[ray_helpers.LOG_ENV]


def distinct_lab(n: int = N) -> evalnb.Lab:
    """Two models, distinct texts on every row (no dedupe can hide a row scored wrongly)."""
    words = ["loan", "card", "rate", "fee", "term", "bank", "Alice", "Bob", "mail", "call"]
    rows = []
    for i in range(n // 2):
        ref = " ".join(words[(i * k) % 10] for k in range(1, 8)) + f" case {i}."
        for model in ("m1", "m2"):
            actual = f"{ref} {model} says {i % 13} at bob{i}@example.com" if i % 3 else ref[::-1]
            rows.append(
                {
                    "case_id": f"c{i}",
                    "prompt": f"question {i}?",
                    "expected": ref,
                    "model": model,
                    "actual": actual,
                    "context": [f"context {i}", ref],
                    "condition": '"case"' if i % 2 else '"bank" AND NOT "fee"',
                }
            )
    return evalnb.load(pl.DataFrame(rows))


def test_ray_engine_scores_equal_the_local_engine(cluster: Path, tmp_path: Path) -> None:
    distinct_lab().save(tmp_path / "lab.duckdb")
    local = evalnb.evaluate(distinct_lab(), FAST, progress=False)  # in memory only
    on_ray = evalnb.evaluate(
        evalnb.open(tmp_path / "lab.duckdb"),
        FAST,
        progress=False,
        engine=evalnb.RayEngine(shard_rows=700),
    )
    assert on_ray.scores.height == local.scores.height > N * 4
    # Row order included: the engine merges as the local engine does.
    assert_frame_equal(on_ray.scores, local.scores, abs_tol=1e-9, rel_tol=0)
    assert_frame_equal(on_ray.metrics, local.metrics)
    # Written to the store in the same shape, and the shards are gone.
    assert_frame_equal(evalnb.open(tmp_path / "lab.duckdb").scores, local.scores, abs_tol=1e-9)
    assert not (tmp_path / "lab.duckdb.shards").exists()
    # Incremental as locally: nothing left to score, a changed parameter rescores.
    again = evalnb.evaluate(on_ray, ["rouge"], progress=False, engine="ray")
    assert again.scores.equals(on_ray.scores)
    changed = evalnb.evaluate(
        again, ["text_matching"], progress=False, engine="ray", evaluate_retrieved_context=True
    )
    expected = evalnb.evaluate(
        local, ["text_matching"], progress=False, evaluate_retrieved_context=True
    )
    assert_frame_equal(changed.scores, expected.scores, abs_tol=1e-9, rel_tol=0)


def test_ray_workers_write_the_scores_of_a_lab_kept_on_disk(
    cluster: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    distinct_lab(600).save(tmp_path / "lab.duckdb", on_disk=("outputs", "scores"))
    monkeypatch.setenv("EVALNB_MEMORY_BUDGET_GB", "0")  # nothing may be loaded whole
    engine = evalnb.RayEngine(shard_rows=150, batch_rows=100)
    on_ray = evalnb.evaluate(
        evalnb.open(tmp_path / "lab.duckdb"), ["bleu", "rouge"], progress=False, engine=engine
    )
    local = evalnb.evaluate(distinct_lab(600), ["bleu", "rouge"], progress=False)
    key = ["case_id", "model", "sample", "evaluator", "metric"]

    def same(lab: evalnb.Lab, want: evalnb.Lab) -> None:
        assert_frame_equal(
            lab.scan("scores").collect().sort(key), want.scores.sort(key), abs_tol=1e-9, rel_tol=0
        )

    same(on_ray, local)
    # One pass for both, written by the workers as one part; the row shards are gone.
    (part,) = on_ray.parts_of("scores")
    assert part.evaluators == ("bleu", "rouge")
    assert not (tmp_path / "lab.duckdb.shards").exists()
    # Incremental; a changed parameter rewrites the shared part without ROUGE's old rows.
    assert evalnb.evaluate(on_ray, ["rouge"], progress=False, engine=engine).parts_of(
        "scores"
    ) == on_ray.parts_of("scores")
    changed = evalnb.evaluate(on_ray, ["rouge"], progress=False, engine=engine, use_stemmer=False)
    same(changed, evalnb.evaluate(local, ["rouge"], progress=False, use_stemmer=False))
    assert [p.evaluators for p in changed.parts_of("scores")] == [("rouge",), ("bleu", "rouge")]


def test_a_killed_worker_writing_scores_to_disk_doubles_no_row(
    cluster: Path, tmp_path: Path
) -> None:
    lab = distinct_lab(1200)
    lab.save(tmp_path / "lab.duckdb", on_disk=("outputs", "scores"))
    marker = tmp_path / "killed"
    victim = lab.outputs["case_id"][600]
    on_ray = evalnb.evaluate(
        evalnb.open(tmp_path / "lab.duckdb"),
        ["rouge_killing_its_worker"],
        progress=False,
        victim=victim,
        marker=str(marker),
        engine=evalnb.RayEngine(shard_rows=200, batch_rows=200),
    )
    assert marker.exists()  # a worker really died
    local = evalnb.evaluate(
        distinct_lab(1200),
        ["rouge_killing_its_worker"],
        progress=False,
        victim=victim,
        marker=str(marker),
    )
    written = on_ray.scan("scores").collect()
    assert written.height == local.scores.height
    assert written.select("case_id", "model", "sample", "metric").is_duplicated().sum() == 0


def test_a_worker_killed_mid_run_loses_and_doubles_no_row(cluster: Path, tmp_path: Path) -> None:
    lab = distinct_lab()
    marker = tmp_path / "killed"
    victim = lab.outputs["case_id"][N // 2]
    on_ray = evalnb.evaluate(
        lab,
        ["rouge_killing_its_worker"],
        progress=False,
        victim=victim,
        marker=str(marker),
        engine=evalnb.RayEngine(shard_rows=300, batch_rows=300),
    )
    assert marker.exists()  # a worker really died
    assert int(marker.read_text()) != os.getpid()
    # The same evaluator in this process (the marker exists now: it kills nothing).
    local = evalnb.evaluate(
        lab, ["rouge_killing_its_worker"], progress=False, victim=victim, marker=str(marker)
    )
    key = ["case_id", "model", "sample", "metric"]
    assert on_ray.scores.height == local.scores.height
    assert on_ray.scores.select(key).is_duplicated().sum() == 0
    # Batches of 300 rows against blocks of 1,000, put back in the local engine's order.
    assert_frame_equal(on_ray.scores, local.scores, abs_tol=1e-9, rel_tol=0)


def test_an_actor_loads_the_encoder_once(cluster: Path) -> None:
    lab = distinct_lab(300)
    engine = evalnb.RayEngine(actors=1, shard_rows=50, batch_rows=50)
    on_ray = evalnb.evaluate(
        lab, ["answer_similarity_logged"], progress=False, engine=engine, model="all-MiniLM-L6-v2"
    )
    events = Counter(tuple(line.split()) for line in cluster.read_text().splitlines())
    loads = {pid for (what, pid) in events if what == "load"}
    encodes = {pid: n for (what, pid), n in events.items() if what == "encode"}
    assert len(loads) == 1  # one actor: one load, in that actor's process
    assert str(os.getpid()) not in loads
    assert events[("load", next(iter(loads)))] == 1
    assert encodes[next(iter(loads))] >= 6  # six batches of 50 rows, all in that actor
    local = evalnb.evaluate(lab, ["answer_similarity"], progress=False, model="all-MiniLM-L6-v2")
    assert_frame_equal(
        on_ray.scores.drop("evaluator"), local.scores.drop("evaluator"), abs_tol=1e-5, rel_tol=0
    )


def test_the_cli_evaluates_on_a_cluster_address(cluster: Path, tmp_path: Path) -> None:
    store = tmp_path / "lab.duckdb"
    distinct_lab(400).save(store)
    address = ray.get_runtime_context().gcs_address
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "evalnb.cli",
            "evaluate",
            str(store),
            "-e",
            "bleu",
            "-e",
            "rouge",
            "--engine",
            "ray",
            "--address",
            address,
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    local = evalnb.evaluate(distinct_lab(400), ["bleu", "rouge"], progress=False)
    assert_frame_equal(evalnb.open(store).scores, local.scores, abs_tol=1e-9, rel_tol=0)


def test_an_unknown_engine_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="engine must be 'local', 'ray'"):
        evalnb.evaluate(distinct_lab(10), ["bleu"], progress=False, engine="spark")
