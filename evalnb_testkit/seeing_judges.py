"""Two scripted judges for multimodal labs, for the loopback server's ``seeing=`` hook.

``colour_judge`` looks: it decodes the first image it is sent, reads the colour at its
centre and calls an answer faithful when the answer names that colour (or, for a shape
question, when the answer is one of the shapes the picture could be). ``text_judge`` does
not look: it passes every answer that is one plausible word, image or not. The judge card's
media-blind control tells them apart; the tests and notebook 16 show it.
"""

from __future__ import annotations

import base64
import io
import json

from PIL import Image

__all__ = ["colour_judge", "text_judge"]

_COLOURS = {"red": (210, 40, 40), "blue": (40, 70, 200), "green": (40, 150, 60)}
_SHAPES = ("circle", "square", "triangle")


def _answer(prompt: str) -> str:
    return prompt.rsplit("[ANSWER]\n", 1)[-1].split("\n", 1)[0].strip().lower()


def _centre_colour(url: str) -> str | None:
    if not url.startswith("data:image/"):
        return None
    with Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))) as img:
        rgb = img.convert("RGB").getpixel((img.width // 2, img.height // 2))
    return min(
        _COLOURS, key=lambda c: sum((a - b) ** 2 for a, b in zip(_COLOURS[c], rgb, strict=True))
    )


def colour_judge(prompt: str, media: list[str]) -> str:
    """Faithful when the answer names the colour seen (a shape: any of the three shapes)."""
    answer = _answer(prompt)
    seen = _centre_colour(media[0]) if media else None
    ok = seen is not None and (answer in _SHAPES or answer == seen)
    return json.dumps({"faithful": ok, "relevant": ok})


def text_judge(prompt: str, media: list[str]) -> str:
    """Faithful when the answer is one word a picture of a shape could support."""
    del media
    answer = _answer(prompt)
    ok = answer in (*_COLOURS, *_SHAPES)
    return json.dumps({"faithful": ok, "relevant": ok})
