"""CLIPScore: how well an image and a text agree, judge-free, with a CLIP model.

Which image and which text, per row (``pair``):

* ``"auto"`` (default): the answer's image against the prompt when the answer has one (a
  text-to-image model's output), else the case's image against the answer (a caption, a
  description, a visual answer);
* ``"case_image_answer"`` / ``"answer_image_prompt"``: one of the two, always.

A row without an image of that side, or whose image is unavailable (cut short) or remote
(never fetched), is unscored with the reason. The first image of the side is used. Both
CLIPScore (Hessel et al.: ``2.5 · max(cos, 0)``) and the raw cosine are metrics; either can
be calibrated on reviewers' labels like any score.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from evalnb.evaluation.base import (
    Evaluator,
    MetricSpec,
    Param,
    reasons,
    register,
    result_frame,
    threshold_param,
)

if TYPE_CHECKING:
    from collections.abc import Mapping

    import polars as pl

    from evalnb.evaluation.base import Context

__all__ = ["ClipScore"]

_PAIRS = ("auto", "case_image_answer", "answer_image_prompt")


def _first_image(items: list[dict[str, Any]] | None) -> dict[str, Any] | None:
    return next((i for i in items or [] if i.get("kind") == "image"), None)


@register
class ClipScore(Evaluator):
    """CLIPScore of each row's image and text (see the module's docstring)."""

    id = "clip_score"
    title = "CLIPScore (image–text)"
    domain = "generation"
    description = (
        "CLIPScore (Hessel et al. 2021): 2.5 · max(cosine, 0) of a CLIP model's image and "
        "text vectors: the case's image against the answer, or the answer's image against "
        "the prompt."
    )
    requires = ("actual",)
    reads_media = True
    local_only = True  # the rows' media are resolved here, not in Ray workers
    metrics = (
        MetricSpec(
            "clip_score",
            "CLIPScore",
            "2.5 · max(cos, 0) of the image's and the text's CLIP vectors.",
            max=2.5,
            threshold=0.6,
            primary=True,
        ),
        MetricSpec(
            "image_text_similarity",
            "Image–text cosine",
            "The cosine of the image's and the text's CLIP vectors.",
            min=-1.0,
            threshold=0.25,
        ),
    )
    params: ClassVar[tuple[Param, ...]] = (
        Param(
            "model",
            str,
            default="openai/clip-vit-base-patch32",
            description=(
                "a transformers CLIP (local folder or cached hub name) or "
                "open_clip:<architecture>:<pretrained>"
            ),
        ),
        Param("pair", str, default="auto", choices=_PAIRS, description="which image and text"),
        threshold_param(0.6, "clip_score", high=2.5),
    )

    def score(self, rows: pl.DataFrame, params: Mapping[str, object], ctx: Context) -> pl.DataFrame:
        """Embed each distinct image and text once, in batches; one dot product per row."""
        del ctx
        from evalnb.models.clip import CLIP_WEIGHT, load_clip  # noqa: PLC0415 - torch on use

        pair = str(params["pair"])
        records = rows.to_dicts()
        images: list[bytes] = []
        texts: list[str] = []
        where: list[int] = []
        why: list[str | None] = [None] * len(records)
        for i, row in enumerate(records):
            drawn = _first_image(row.get("answer_media_items"))
            use_answer_image = pair == "answer_image_prompt" or (pair == "auto" and drawn)
            image = drawn if use_answer_image else _first_image(row.get("case_media_items"))
            text = row.get("prompt") if use_answer_image else row.get("actual")
            side = "the answer" if use_answer_image else "the case"
            if row.get("error") is not None:
                why[i] = "the model host failed to answer"
            elif image is None:
                why[i] = f"{side} has no image"
            elif image.get("data") is None:
                why[i] = (
                    f"{side}'s image is {image.get('status')}: {image.get('reason') or 'no bytes kept'}"
                )
            elif not text:
                why[i] = "no text to compare the image with"
            else:
                images.append(image["data"])
                texts.append(str(text))
                where.append(i)
        cosine = np.full(len(records), np.nan)
        if where:
            clip = load_clip(str(params["model"]))
            cosine[np.asarray(where)] = np.sum(clip.images(images) * clip.texts(texts), axis=1)
        score = CLIP_WEIGHT * np.maximum(cosine, 0.0)
        masks = [(np.array([w == t for w in why]), t) for t in sorted({w for w in why if w})]
        return result_frame(
            rows,
            {"clip_score": score, "image_text_similarity": cosine},
            reasons(len(records), *masks),
        )
