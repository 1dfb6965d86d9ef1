"""A small multimodal lab on the images shipped with evalnb: shapes, colours, two models.

Nine 96-pixel pictures (a red, blue or green circle, square or triangle) ship in
``evalnb/media/samples/``. :func:`shapes_lab` asks of each what colour and what shape it
shows; ``model-a`` answers right but for one picture, ``model-b`` names the colour of the
picture before it (a model that does not look). The lab is for trying the media views,
judges that see and the judge card's media-blind control without a file of one's own.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import polars as pl

__all__ = ["SAMPLES", "sample_images", "shapes_lab_frame"]

SAMPLES = "evalnb.media.samples"
_COLOURS = ("red", "blue", "green")
_SHAPES = ("circle", "square", "triangle")


def sample_images() -> list[Path]:
    """Return the shipped pictures' paths, colour by colour, shape by shape."""
    folder = Path(str(resources.files(SAMPLES)))
    return [folder / f"{c}-{s}.png" for c in _COLOURS for s in _SHAPES]


def shapes_lab_frame() -> pl.DataFrame:
    """Return the shapes lab as a frame ``evalnb.load`` reads (the images as paths)."""
    rows = []
    pictures = sample_images()
    for i, path in enumerate(pictures):
        colour, shape = path.stem.split("-")
        previous = pictures[i - 1].stem.split("-")[0]
        for question, truth, wrong in (
            ("What colour is the shape in the picture? One word.", colour, previous),
            ("What shape is in the picture? One word.", shape, "hexagon"),
        ):
            case_id = f"{path.stem}:{'colour' if truth == colour else 'shape'}"
            right_a = not (i == 4 and truth == colour)
            rows.extend(
                [
                    {
                        "case_id": case_id,
                        "prompt": question,
                        "media": [str(path)],
                        "expected": [truth],
                        "model": "model-a",
                        "actual": truth if right_a else wrong,
                        "topic": "colour" if truth == colour else "shape",
                    },
                    {
                        "case_id": case_id,
                        "prompt": question,
                        "media": [str(path)],
                        "expected": [truth],
                        "model": "model-b",
                        "actual": wrong if truth == colour else truth,
                        "topic": "colour" if truth == colour else "shape",
                    },
                ]
            )
    return pl.DataFrame(rows)
