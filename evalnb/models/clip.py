"""Image–text similarity with a CLIP model: transformers' CLIP or open_clip, batched on the GPU.

Real loading code, offline-first. ``model`` is a local folder or a hub name of a transformers
CLIP (``openai/clip-vit-base-patch32``: read from the local cache, from the hub only where it
can be reached), or ``open_clip:<architecture>:<pretrained>`` for open_clip (its
``pretrained`` a tag it knows or a local checkpoint file). Images and texts are embedded in
batches (bf16 autocast on CUDA, fp32 on the CPU), each distinct image and text once, and
unit-normalised, so a pair's cosine is one dot product.

CLIPScore (Hessel et al., EMNLP 2021) is ``w · max(cos, 0)`` with ``w = 2.5``; the raw cosine
is kept beside it.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from evalnb.models.engine import device_name
from evalnb.models.hf import ModelUnavailable
from evalnb.models.hub import hub_blocker, offline_advice, quiet_loading

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["CLIP_WEIGHT", "ClipModel", "load_clip"]

CLIP_WEIGHT = 2.5  # Hessel et al.'s w
_BATCH = 64


@dataclass
class ClipModel:
    """A loaded CLIP: embeds texts and images (bytes) into one unit-normalised space."""

    name: str
    device: str
    _embed_text: Any
    _embed_images: Any

    def texts(self, texts: Sequence[str]) -> np.ndarray:
        """Return the unit vectors of ``texts`` (each distinct text embedded once)."""
        return self._distinct(list(texts), self._embed_text)

    def images(self, images: Sequence[bytes]) -> np.ndarray:
        """Return the unit vectors of ``images`` (encoded bytes; each distinct one once)."""
        return self._distinct(list(images), self._embed_images)

    @staticmethod
    def _distinct(items: list[Any], embed: Any) -> np.ndarray:  # noqa: ANN401
        order: dict[Any, int] = {}
        index = [order.setdefault(x, len(order)) for x in items]
        unique = list(order)
        parts = [embed(unique[i : i + _BATCH]) for i in range(0, len(unique), _BATCH)]
        if not parts:
            return np.zeros((0, 0), dtype=np.float32)
        vectors = np.concatenate(parts).astype(np.float32)
        vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        out: np.ndarray = vectors[np.asarray(index)]
        return out


def _pil(data: bytes) -> Any:  # noqa: ANN401 - a PIL image
    from PIL import Image  # noqa: PLC0415

    with Image.open(io.BytesIO(data)) as img:
        return img.convert("RGB")


@lru_cache(maxsize=2)
def load_clip(model: str, device: str | None = None) -> ClipModel:
    """Load ``model`` once per process (see the module's docstring for the names).

    Raises
    ------
    ModelUnavailable
        The model is not here and cannot be had (offline, not cached), or open_clip is
        not installed; the message says what to pass instead.
    """
    where = device_name(device)
    if model.startswith("open_clip:"):
        return _open_clip(model, where)
    return _transformers(model, where)


def _transformers(model: str, device: str) -> ClipModel:
    import torch  # noqa: PLC0415 - torch loads with the first model
    import transformers  # noqa: PLC0415

    folder = Path(model).expanduser()
    source = str(folder) if folder.is_dir() else model
    local = folder.is_dir() or hub_blocker() is not None
    try:
        with quiet_loading():
            net = transformers.CLIPModel.from_pretrained(source, local_files_only=local)
            processor = transformers.CLIPProcessor.from_pretrained(source, local_files_only=local)
    except (OSError, ValueError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        advice = "" if folder.is_dir() else " " + offline_advice(model)
        msg = f"clip_score: the CLIP model {model!r} could not be loaded ({first}).{advice}"
        raise ModelUnavailable(msg) from None
    net = net.eval().to(device)
    cuda = device.startswith("cuda")

    def features(out: Any) -> np.ndarray:  # noqa: ANN401
        # transformers 5 returns an output object where 4 returned the tensor
        tensor = out if isinstance(out, torch.Tensor) else out.pooler_output
        return tensor.float().cpu().numpy()

    def embed_text(texts: list[str]) -> np.ndarray:
        batch = processor(text=texts, return_tensors="pt", padding=True, truncation=True)
        with torch.inference_mode(), torch.autocast("cuda", dtype=torch.bfloat16, enabled=cuda):
            out = net.get_text_features(**{k: v.to(device) for k, v in batch.items()})
        return features(out)

    def embed_images(images: list[bytes]) -> np.ndarray:
        batch = processor(images=[_pil(b) for b in images], return_tensors="pt")
        with torch.inference_mode(), torch.autocast("cuda", dtype=torch.bfloat16, enabled=cuda):
            out = net.get_image_features(pixel_values=batch["pixel_values"].to(device))
        return features(out)

    return ClipModel(model, device, embed_text, embed_images)


def _open_clip(model: str, device: str) -> ClipModel:
    try:
        import open_clip  # noqa: PLC0415 - optional
        import torch  # noqa: PLC0415
    except ImportError:
        msg = (
            f"clip_score: {model!r} needs open_clip (pip install open_clip_torch), or pass a "
            "transformers CLIP (a local folder or a hub name)"
        )
        raise ModelUnavailable(msg) from None
    _, arch, pretrained = [*model.split(":", 2), ""][:3]
    try:
        net, _, preprocess = open_clip.create_model_and_transforms(
            arch, pretrained=pretrained or None, device=device
        )
        tokenizer = open_clip.get_tokenizer(arch)
    except (RuntimeError, OSError, ValueError) as exc:
        msg = (
            f"clip_score: open_clip could not load {arch!r} with {pretrained!r} ({exc}); give "
            "a local checkpoint file as the third part: open_clip:<arch>:/path/to/weights.pt"
        )
        raise ModelUnavailable(msg) from None
    net.eval()
    cuda = device.startswith("cuda")

    def embed_text(texts: list[str]) -> np.ndarray:
        with torch.inference_mode(), torch.autocast("cuda", dtype=torch.bfloat16, enabled=cuda):
            out = net.encode_text(tokenizer(texts).to(device))
        vectors: np.ndarray = out.float().cpu().numpy()
        return vectors

    def embed_images(images: list[bytes]) -> np.ndarray:
        pixels = torch.stack([preprocess(_pil(b)) for b in images]).to(device)
        with torch.inference_mode(), torch.autocast("cuda", dtype=torch.bfloat16, enabled=cuda):
            out = net.encode_image(pixels)
        vectors: np.ndarray = out.float().cpu().numpy()
        return vectors

    return ClipModel(model, device, embed_text, embed_images)
