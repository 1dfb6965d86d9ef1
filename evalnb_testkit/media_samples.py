"""Small media made here, byte for byte the same each run: images (Pillow) and WAV (stdlib).

Tests and notebooks need real files of each kind a lab holds, never downloads: a few
pixels of a solid colour or a pattern, a fraction of a second of a tone.
"""

from __future__ import annotations

import base64
import io
import math
import struct
import wave

from PIL import Image, ImageDraw

__all__ = ["data_url", "gif", "jpeg", "pdf", "png", "wav"]


def png(color: tuple[int, int, int] = (200, 30, 30), size: tuple[int, int] = (16, 12)) -> bytes:
    """A PNG of one colour with a white diagonal (so two colours differ in more than a byte)."""
    img = Image.new("RGB", size, color)
    ImageDraw.Draw(img).line([(0, 0), (size[0] - 1, size[1] - 1)], fill=(255, 255, 255))
    out = io.BytesIO()
    img.save(out, "PNG")
    return out.getvalue()


def jpeg(color: tuple[int, int, int] = (30, 30, 200), size: tuple[int, int] = (16, 16)) -> bytes:
    """A JPEG of one colour."""
    out = io.BytesIO()
    Image.new("RGB", size, color).save(out, "JPEG", quality=90)
    return out.getvalue()


def gif(size: tuple[int, int] = (8, 8)) -> bytes:
    """A GIF of one grey."""
    out = io.BytesIO()
    Image.new("L", size, 128).save(out, "GIF")
    return out.getvalue()


def wav(seconds: float = 0.25, rate: int = 8000, hz: float = 440.0) -> bytes:
    """A mono 16-bit WAV of a sine tone."""
    frames = b"".join(
        struct.pack("<h", int(8000 * math.sin(2 * math.pi * hz * i / rate)))
        for i in range(int(seconds * rate))
    )
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(frames)
    return out.getvalue()


def pdf() -> bytes:
    """The smallest PDF a reader opens: one empty page."""
    return (
        b"%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n"
        b"2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj\n"
        b"3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 10 10]>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n"
    )


def data_url(data: bytes, mime: str) -> str:
    """The ``data:`` URL of ``data``."""
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"
