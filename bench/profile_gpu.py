"""Where the end-to-end answer similarity spends its time on a GPU (issue 31), one JSON.

Usage: ``python bench/profile_gpu.py [--pairs 200000] [--out profile_gpu.json]``

Each stage runs on texts of its own (a stage mark appended), so none reads another's vectors:

1. ``tokenizers``' ``encode_batch_fast`` on all the texts in one call: the tokenizer's floor;
2. the engine's batches alone (tokenize, sort, pad in the producer thread), no model;
3. ``TextEncoder.embed_on_device``: batches and the model, no cache, results on the device;
4. ``TextEncoder.encode``: the same plus keys, memo, cache and the copy to the host;
5. ``evalnb.evaluate(lab, ["answer_similarity"])`` under ``cProfile`` (the main thread's
   cumulative times, its 40 largest written beside the JSON).
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import json
import os
import pstats
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ["EVALNB_CACHE_DIR"] = tempfile.mkdtemp(prefix="evalnb-profile-")


def main() -> None:
    import polars as pl  # noqa: PLC0415
    import torch  # noqa: PLC0415

    import evalnb  # noqa: PLC0415
    from bench.bench_gpu import sentences  # noqa: PLC0415
    from evalnb.models.encoder import get_encoder  # noqa: PLC0415

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=200_000)
    parser.add_argument("--out", default="profile_gpu.json")
    args = parser.parse_args()
    sync = torch.cuda.synchronize if torch.cuda.is_available() else (lambda: None)
    encoder = get_encoder("all-MiniLM-L6-v2")
    answers, refs = sentences(args.pairs, seed=21)
    out: dict[str, object] = {"pairs": args.pairs, "device": encoder.device}

    def timed(name: str, work: object) -> None:
        gc.collect()
        sync()
        start = time.perf_counter()
        work()  # type: ignore[operator]
        sync()
        seconds = time.perf_counter() - start
        out[name] = {"seconds": seconds, "texts_per_s": 2 * args.pairs / seconds}
        print(f"{name:<18} {seconds:7.2f} s {2 * args.pairs / seconds:>12,.0f} texts/s", flush=True)
        Path(args.out).write_text(json.dumps(out, indent=1))

    def texts(mark: str) -> list[str]:
        return [f"{t} {mark}" for t in (*answers, *refs)]

    encoder.encode(texts("warm")[:4000])
    tok = encoder.engine.rust
    assert tok is not None
    batch = texts("tokenizer")
    timed("tokenizer", lambda: tok.encode_batch_fast(batch))
    batch = texts("batches")
    timed("batches", lambda: sum(1 for _ in encoder.engine.batches(batch)))
    batch = texts("embed_on_device")
    timed("embed_on_device", lambda: encoder.embed_on_device(batch))
    batch = texts("encode")
    timed("encode", lambda: encoder.encode(batch))
    lab = evalnb.load(pl.DataFrame({"prompt": [f"q{i}" for i in range(args.pairs)],
                                    "expected": [f"{r} e" for r in refs],
                                    "actual": [f"{a} e" for a in answers]}))  # fmt: skip
    profile = cProfile.Profile()

    def run() -> None:
        profile.enable()
        evalnb.evaluate(lab, ["answer_similarity"], progress=False, model="all-MiniLM-L6-v2")
        profile.disable()

    timed("evaluate", run)
    report = io.StringIO()
    pstats.Stats(profile, stream=report).sort_stats("cumulative").print_stats(40)
    Path(args.out).with_suffix(".prof.txt").write_text(report.getvalue())
    print(report.getvalue()[:6000])


if __name__ == "__main__":
    main()
