"""Where the end-to-end answer similarity spends its time on a GPU (issue 31), one JSON.

Usage: ``python bench/profile_gpu.py [--pairs 200000] [--out profile_gpu.json]``

Each stage runs on texts of its own (a stage mark appended), so none reads another's vectors:

1. ``tokenizers``' ``encode_batch_fast`` on all the texts in one call: the tokenizer's floor;
2. the engine's batches alone (tokenize, sort, pad in the producer thread), no model;
3. ``TextEncoder.embed_on_device``: batches and the model, no cache, results on the device;
4. ``TextEncoder.encode``: the same plus keys, memo, cache and the copy to the host;
5. ``evalnb.evaluate(lab, ["answer_similarity"])`` under ``cProfile`` (the main thread's
   cumulative times, its 40 largest written beside the JSON);
6. the tokenizer's scaling, in child processes: one process with 1, 4 and all of its
   threads (``RAYON_NUM_THREADS``), then as many one-thread processes as cores, each on its
   share of the texts at once. Measured on an H100 machine's 16 cores, one call ran at 181k
   texts/s; whether processes would go past that decides how the engine tokenizes there.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import json
import os
import pstats
import subprocess
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
    lab = evalnb.load(
        pl.DataFrame(
            {
                "prompt": [f"q{i}" for i in range(args.pairs)],
                "expected": [f"{r} e" for r in refs],
                "actual": [f"{a} e" for a in answers],
            }
        )
    )
    profile = cProfile.Profile()

    def run() -> None:
        profile.enable()
        evalnb.evaluate(lab, ["answer_similarity"], progress=False, model="all-MiniLM-L6-v2")
        profile.disable()

    timed("evaluate", run)
    report = io.StringIO()
    pstats.Stats(profile, stream=report).sort_stats("cumulative").print_stats(40)
    Path(args.out).with_suffix(".prof.txt").write_text(report.getvalue())
    print(report.getvalue()[:3000])
    out["tokenizer_scaling"] = tokenizer_scaling(texts("scaling"), encoder)
    Path(args.out).write_text(json.dumps(out, indent=1))


CHILD = """
import sys, time
from tokenizers import Tokenizer
tok = Tokenizer.from_file(sys.argv[1])
texts = open(sys.argv[2], encoding="utf-8").read().split("\\n")
tok.encode_batch_fast(texts[:1000])
ready = float(sys.argv[3])
while time.time() < ready:  # all children start together
    time.sleep(0.001)
start = time.perf_counter()
tok.encode_batch_fast(texts)
print(len(texts) / (time.perf_counter() - start))
"""


def tokenizer_scaling(texts: list[str], encoder: object) -> dict[str, float]:
    """Texts/s of ``encode_batch_fast`` by thread count, and by one-thread processes."""
    cores = os.cpu_count() or 1
    work = Path(tempfile.mkdtemp(prefix="evalnb-tok-"))
    tok_file = work / "tokenizer.json"
    rust = encoder.engine.rust  # type: ignore[attr-defined]
    tok_file.write_text(rust.to_str())
    flat = [t.replace("\n", " ") for t in texts]

    def run(parts: int, threads: int) -> float:
        shares = [flat[k::parts] for k in range(parts)]
        files = []
        for k, share in enumerate(shares):
            files.append(work / f"texts-{parts}-{k}.txt")
            files[-1].write_text("\n".join(share), encoding="utf-8")
        ready = time.time() + 3 + 0.05 * parts
        env = {**os.environ, "RAYON_NUM_THREADS": str(threads)}
        children = [
            subprocess.Popen(
                [sys.executable, "-c", CHILD, str(tok_file), str(f), str(ready)],
                env=env,
                stdout=subprocess.PIPE,
                text=True,
            )
            for f in files
        ]
        rates = [float(c.communicate()[0].strip()) for c in children]
        # The slowest child decides when all the texts are done.
        return len(flat) / max(len(s) / r for s, r in zip(shares, rates, strict=True))

    result = {}
    for threads in sorted({1, min(4, cores), cores}):
        result[f"1 process x {threads} threads"] = run(1, threads)
    result[f"{cores} processes x 1 thread"] = run(cores, 1)
    for name, rate in result.items():
        print(f"tokenizer, {name:<26} {rate:>12,.0f} texts/s", flush=True)
    return result


if __name__ == "__main__":
    main()
