"""Judge-free media and transcript metrics through the public API, against their peers.

Run: ``python bench/bench_media.py [PAIRS] [--clip MODEL]``.

* ``clip_score``: PAIRS image–answer pairs (PAIRS // 4 distinct pictures, each asked about four
  times, as a VQA lab asks several questions of one image) through ``evalnb.evaluate``,
  against the same CLIP run one pair at a time through transformers (processor + model per
  pair, what a per-sample harness does). Without ``--clip`` both use a tiny CLIP built here
  (random weights: a measure of the pipeline, not of a real model's cost); with it, a local
  folder or cached hub name (a GPU is used where there is one).
* ``wer``: PAIRS transcript pairs through ``evalnb.evaluate`` against ``jiwer.wer`` per pair.

Both sides warm, in one process; medians of three runs.
"""

from __future__ import annotations

import io
import random
import sys
import tempfile
from pathlib import Path

import polars as pl

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import evalnb  # noqa: E402
from bench.common import warm_median  # noqa: E402
from evalnb_testkit import media_samples as ms  # noqa: E402
from evalnb_testkit.tiny_clip import tiny_clip  # noqa: E402


def _clip_lab(pairs: int, folder: Path) -> evalnb.Lab:
    rng = random.Random(0)
    pictures = []
    for i in range(max(1, pairs // 4)):
        path = folder / f"{i}.png"
        path.write_bytes(ms.png((rng.randrange(256), rng.randrange(256), 40), (224, 224)))
        pictures.append(str(path))
    frame = pl.DataFrame(
        {
            "case_id": [f"c{i}" for i in range(pairs)],
            "prompt": ["What is in the picture?"] * pairs,
            "media": [[pictures[i // 4 % len(pictures)]] for i in range(pairs)],
            "actual": [f"a square of colour number {i % 97}" for i in range(pairs)],
        }
    )
    return evalnb.load(frame)


def _per_pair(model: str, lab: evalnb.Lab) -> list[float]:
    # the peer's imports where the peer runs: the bench's own start stays evalnb's
    import torch  # noqa: PLC0415
    import transformers  # noqa: PLC0415
    from PIL import Image  # noqa: PLC0415

    net = transformers.CLIPModel.from_pretrained(model).eval()
    proc = transformers.CLIPProcessor.from_pretrained(model)
    media = dict(
        zip(
            lab.media.table(with_bytes=True)["media_id"],
            lab.media.table(with_bytes=True)["data"],
            strict=True,
        )
    )
    out = []
    for ids, text in zip(
        lab.cases["media"].to_list(), lab.outputs["actual"].to_list(), strict=True
    ):
        image = Image.open(io.BytesIO(media[ids[0]])).convert("RGB")
        batch = proc(text=[text], images=[image], return_tensors="pt", padding=True)
        with torch.inference_mode():
            o = net(**batch)
            out.append(float(o.logits_per_image[0, 0] / net.logit_scale.exp()))
    return out


def main(pairs: int = 2000, clip: str | None = None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        model = clip or str(tiny_clip(folder / "tiny-clip"))
        lab = _clip_lab(pairs, folder)
        ours = lambda: evalnb.evaluate(lab, ["clip_score"], progress=False, model=model)  # noqa: E731
        ours()
        peer = lambda: _per_pair(model, lab)  # noqa: E731
        peer()
        t_ours, scored = warm_median(ours, 3)
        t_peer, cosines = warm_median(peer, 3)
        got = scored.scores.filter(pl.col("metric") == "image_text_similarity").sort("case_id")
        by_case = dict(zip(got["case_id"], got["value"], strict=True))
        worst = max(abs(by_case[f"c{i}"] - c) for i, c in enumerate(cosines))
        print(
            f"clip_score  {pairs:,} pairs ({pairs // 4:,} images; {'tiny CLIP' if clip is None else clip}): "
            f"evalnb {t_ours:.2f} s = {pairs / t_ours:,.0f} pairs/s; transformers per pair "
            f"{t_peer:.2f} s = {pairs / t_peer:,.0f} pairs/s; {t_peer / t_ours:.1f}x; "
            f"largest cosine difference {worst:.1e}"
        )

    import jiwer  # noqa: PLC0415 - the peer, where it runs

    rng = random.Random(1)
    words = ["the", "a", "cat", "sat", "on", "mat", "dog", "ran", "far", "away", "quickly", "today"]
    refs = [
        " ".join(rng.choice(words) for _ in range(rng.randint(5, 20))) for _ in range(pairs * 10)
    ]
    hyps = [" ".join(w for w in r.split() if rng.random() > 0.1) for r in refs]
    lab = evalnb.load(
        pl.DataFrame(
            {"prompt": ["say"] * len(refs), "expected": [[r] for r in refs], "actual": hyps}
        )
    )
    ours = lambda: evalnb.evaluate(lab, ["wer"], progress=False)  # noqa: E731
    peer = lambda: [jiwer.wer(r, h) for r, h in zip(refs, hyps, strict=True)]  # noqa: E731
    ours()
    peer()
    t_ours, _ = warm_median(ours, 3)
    t_peer, _ = warm_median(peer, 3)
    print(
        f"wer  {len(refs):,} transcript pairs: evalnb {t_ours:.2f} s = {len(refs) / t_ours:,.0f} pairs/s; "
        f"jiwer per pair {t_peer:.2f} s; {t_peer / t_ours:.1f}x"
    )


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    model = sys.argv[sys.argv.index("--clip") + 1] if "--clip" in sys.argv else None
    if model in args:
        args.remove(model)
    main(int(args[0]) if args else 2000, model)
