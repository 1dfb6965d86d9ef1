"""The shared text encoder.

One model load, each distinct text embedded once, length-bucketed batches, a persistent
cache keyed by text hash, CUDA + bf16 when a GPU is present. Which model a name loads is
:mod:`evalnb.models.resolve`'s.
"""

from __future__ import annotations

import copy
import os
import tempfile
import threading
import weakref
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import numpy as np

from evalnb.models.engine import Batch, Engine, cpu_token_budget, device_name, length_order
from evalnb.models.hub import quiet_loading
from evalnb.models.resolve import DEFAULT_MODEL, resolve_model
from evalnb.models.similarity import greedy_token_match
from evalnb.models.vector_cache import VectorCache, VectorMemo, gather_into, text_keys

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    import polars as pl
    import torch

    from evalnb.models.int8 import Int8Encoder

__all__ = ["TextEncoder", "cosine", "get_encoder", "restart_vector_caches"]


class TextEncoder:
    """Embeds texts with a sentence-transformers model; see the module docstring.

    Parameters
    ----------
    model
        Model name or local folder (default: H2O's ``BAAI/bge-small-en-v1.5``).
    device
        ``"cuda"``, ``"cuda:N"`` or ``"cpu"``; default ``$EVALNB_DEVICE``, else CUDA when
        available.
    batch_size
        Texts per forward pass of the int8 copy (default 16); the fp32/bf16 model runs in
        batches of ``token_budget`` tokens instead.
    replicas
        Devices of extra copies of the model, each embedding a share of the texts in a
        thread of its own; default: every other GPU when ``device`` is ``"cuda"`` (or left
        to default) and this machine has several, else none.
    token_budget
        Tokens per batch of the model engine (default 65,536 on CUDA; on a CPU 4,096 to
        65,536 by the model's size, :func:`evalnb.models.engine.cpu_token_budget`).
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
        token_budget: int | None = None,
        replicas: Sequence[str] | None = None,
    ) -> None:
        from sentence_transformers import SentenceTransformer  # noqa: PLC0415

        if precision not in ("fp32", "int8"):
            msg = f"precision must be 'fp32' or 'int8', got {precision!r}"
            raise ValueError(msg)
        target, self.model_id = resolve_model(model)
        # int8 is checked against the device asked for first: on a machine without CUDA,
        # device="cuda" with int8 is the wrong precision before it is the wrong device.
        asked = device or ("cpu" if precision == "int8" else None)
        if precision == "int8" and not str(asked).startswith("cpu"):
            msg = (
                f"precision='int8' runs on a CPU; this encoder would run on {asked} "
                "(bf16 there): pass precision='fp32' or device='cpu'"
            )
            raise ValueError(msg)
        self.device = device_name(asked)
        with quiet_loading():
            self._model = SentenceTransformer(target, device=self.device)
        if self.device.startswith("cuda"):
            import torch  # noqa: PLC0415

            # bf16 halves memory traffic; cosine similarities move by < 1e-2.
            self._model = self._model.to(torch.bfloat16)
        # Measured on 2 CPU cores (MiniLM, ~70 tokens, int8 copy): 16 → 119 texts/s, 64 → 98.
        self.batch_size = batch_size or 16
        self._int8: Int8Encoder | None = None
        if precision == "int8":
            from evalnb.models.int8 import Int8Encoder  # noqa: PLC0415 - ONNX Runtime on demand

            if cache_dir is not None:
                self._int8 = Int8Encoder(self._model, self.model_id, cache_dir)
            else:  # no cache: build in a scratch folder, gone once the session has loaded it
                with tempfile.TemporaryDirectory() as scratch:
                    self._int8 = Int8Encoder(self._model, self.model_id, Path(scratch))
            self.model_id += "#int8"  # never mixed with fp32 vectors in the cache
        self._memo = VectorMemo()
        self._cache: VectorCache | None = None
        self.use_cache(cache_dir)
        if token_budget is None and not self.device.startswith("cuda"):
            config = getattr(self._model[0].auto_model, "config", None)
            token_budget = cpu_token_budget(
                int(getattr(config, "hidden_size", 768)),
                int(getattr(config, "num_hidden_layers", 12)),
            )
        self.engine = Engine(
            self._model[0].tokenizer,
            self.device,
            max_length=int(self._model.max_seq_length or 512),
            token_budget=token_budget,
        )
        self._replicas = []
        for where in _replica_devices(self.device, replicas, self._int8 is not None):
            replica = copy.deepcopy(self._model).to(where)
            self._replicas.append(
                (
                    replica,
                    Engine(
                        replica[0].tokenizer,
                        where,
                        max_length=self.engine.max_length,
                        token_budget=token_budget,
                    ),
                )
            )

    @property
    def dim(self) -> int:
        """Width of the embeddings."""
        return embedding_dim(self._model)

    def _prepare(self, texts: Sequence[str]) -> list[str]:
        """Return the texts as the model's own preprocessing sees them (lower case, prompt)."""
        out = list(texts)
        if getattr(self._model[0], "do_lower_case", False):
            out = [t.lower() for t in out]
        prompt_name = getattr(self._model, "default_prompt_name", None)
        prompt = (getattr(self._model, "prompts", None) or {}).get(prompt_name or "", "")
        return [prompt + t for t in out] if prompt else out

    def use_cache(self, cache_dir: Path | None) -> None:
        """Forget the vectors held in memory and keep new ones in ``cache_dir`` (None: none).

        The model stays loaded. What the previous cache folder holds stays there, flushed.
        """
        if self._cache is not None:
            self._cache.flush()
        self._memo = VectorMemo()
        self._cache = (
            VectorCache(cache_dir, self.model_id, self.dim) if cache_dir is not None else None
        )

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Embeddings of ``texts`` (float32, one row per text, in order).

        Each distinct text is embedded once: looked up in this process's memo, then in the
        persistent cache (one join for all), and what is left goes through the model engine;
        the new vectors are written to the cache by a background thread.
        """
        return self._encode(list(texts), _OnHost(self))

    def encode_on_device(self, texts: Sequence[str]) -> torch.Tensor:
        """:meth:`encode`'s vectors as one float32 tensor on the model's device.

        For callers that go on working there (cosines, maxima over references): only their
        scores need come back. Vectors found in the memo or the cache are sent to the device;
        fresh ones stay where the model made them, and a copy comes back for the memo and
        the cache. At 1M pairs the vectors are 3 GB, which NumPy would otherwise gather,
        normalise and multiply in one host thread after copying them back.
        """
        return self._encode(list(texts), _OnDevice(self))

    def _encode(self, texts: list[str], target: _Target[V]) -> V:
        """Run the sequence both share: distinct texts, memo and cache, the model, the order back."""
        if not texts:
            return target.allocate(0)
        keys, firsts, distinct = _distinct_keys(texts)
        out = target.allocate(distinct.height)
        todo = self._look_up(
            distinct, lambda at, vectors, rows: target.place(out, at, vectors, rows)
        )
        if todo.size:
            chosen = _chosen(texts, firsts, todo)
            self._remember(distinct[todo], target.fill(out, todo, chosen, distinct.height))
        inverse = _inverse(keys, distinct)
        return out if inverse is None else target.take(out, inverse)

    def _look_up(
        self,
        distinct: pl.DataFrame,
        place: Callable[[np.ndarray, np.ndarray, np.ndarray], None],
    ) -> np.ndarray:
        """Place the vectors of ``distinct`` found in the memo, then the cache; return the rest.

        ``place(where, vectors, rows)`` puts ``vectors[rows]`` at positions ``where``.
        """
        have = np.zeros(distinct.height, dtype=bool)
        found, rows = self._memo.lookup(distinct)
        if found.size:
            place(found, self._memo.data, rows)
            have[found] = True
        if self._cache is not None and not have.all():
            todo = np.flatnonzero(~have)
            for at, vectors, at_rows in self._cache.lookup(distinct[todo]):
                where = todo[at]
                place(where, vectors, at_rows)
                have[where] = True
        return np.flatnonzero(~have)

    def _remember(self, keys: pl.DataFrame, fresh: np.ndarray) -> None:
        """Keep fresh vectors in the memo and queue them for the persistent cache."""
        self._memo.add(keys, fresh)
        if self._cache is not None:
            self._cache.put(keys, fresh)

    def _embed(self, texts: list[str]) -> np.ndarray:
        """Run the model on ``texts`` (no cache): the int8 copy, or the engine."""
        if self._int8 is not None:
            texts = list(self.engine.clip(texts))  # its tokenizer would read them whole
            order = length_order(texts)
            vectors = self._int8.encode([texts[i] for i in order], self.batch_size)
            out = np.empty_like(vectors)
            out[order] = vectors
            return out
        if not self._replicas or len(texts) < 2 * len(self._replicas) + 2:
            return self.embed_on_device(texts).cpu().numpy()
        # One model replica a device, each on its share of the texts, in threads (the forward
        # passes release the GIL). Shares are dealt from the length-sorted texts, so each has
        # texts of every length and they finish together.
        workers = [(self._model, self.engine), *self._replicas]
        order = length_order(texts)
        shares = [order[k :: len(workers)] for k in range(len(workers))]
        results: list[np.ndarray | BaseException | None] = [None] * len(workers)

        def work(k: int) -> None:
            model, engine = workers[k]
            try:
                chosen = [texts[i] for i in shares[k]]
                results[k] = _embed_with(model, engine, self._prepare(chosen)).cpu().numpy()
            except BaseException as exc:
                results[k] = exc

        threads = [
            threading.Thread(target=work, args=(k,), name=f"evalnb-replica-{k}")
            for k in range(len(workers))
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for share, result in zip(shares, results, strict=True):
            if isinstance(result, BaseException):
                raise result
            out[share] = result
        return out

    def embed_on_device(self, texts: Sequence[str]) -> torch.Tensor:
        """Sentence embeddings of ``texts`` as one float32 tensor on the model's device.

        No cache: for callers that keep working on the device.
        """
        return _embed_with(self._model, self.engine, self._prepare(texts))

    def token_embeddings(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Contextual embeddings of each text's tokens (special tokens dropped), L2-normalised.

        For token-matching scores (a BERTScore-style F1). Not cached: they are as long as
        the text. Runs the model at its own precision (never the int8 copy).
        """
        return [t.cpu().numpy() for t in self.token_embeddings_on_device(texts)]

    def token_embeddings_on_device(self, texts: Sequence[str]) -> list[torch.Tensor]:
        """:meth:`token_embeddings` as float32 tensors left on the model's device."""
        import torch  # noqa: PLC0415

        out: list[torch.Tensor | None] = [None] * len(texts)

        def step(batch: Batch, tensors: dict[str, torch.Tensor]) -> None:
            hidden = self._model[0]({**tensors, "modality": "text"})["token_embeddings"]
            hidden = torch.nn.functional.normalize(hidden.float(), dim=-1)
            for row, (i, n) in enumerate(zip(batch.index, batch.lengths, strict=True)):
                # [CLS] … [SEP]: the special tokens at both ends are dropped
                out[int(i)] = hidden[row, 1 : n - 1] if n >= 2 else hidden[row, :n]

        self.engine.run(self._prepare(texts), step)
        return [t for t in out if t is not None]

    def token_scores(self, answers: Sequence[str], sources: Sequence[str]) -> np.ndarray:
        """Greedy token matching of each answer with its source: (precision, recall, F1) rows.

        BERTScore's matching without idf weights: precision is the mean over the answer's
        tokens of the best cosine with a source token, recall the converse. Computed in
        padded batches on the model's device; NaN where either text has no token.
        """
        distinct = list(dict.fromkeys([*answers, *sources]))
        where = {t: i for i, t in enumerate(distinct)}
        tokens = self.token_embeddings_on_device(distinct)
        out = np.full((len(answers), 3), np.nan)
        pairs = sorted(range(len(answers)), key=lambda i: len(tokens[where[sources[i]]]))
        budget = self.engine.token_budget * 16  # similarity cells a batch, not tokens
        start = 0
        while start < len(pairs):
            widest = max(1, len(tokens[where[sources[pairs[start]]]]))
            end = start + 1
            while (
                end < len(pairs)
                and (end - start + 1) * 512 * max(widest, len(tokens[where[sources[pairs[end]]]]))
                <= budget
            ):
                end += 1
            chunk = pairs[start:end]
            a = [tokens[where[answers[i]]] for i in chunk]
            s = [tokens[where[sources[i]]] for i in chunk]
            out[chunk] = greedy_token_match(a, s)
            start = end
        return out


def embedding_dim(model: Any) -> int:  # noqa: ANN401 - a SentenceTransformer
    """Return the width of a sentence-transformers model's embeddings."""
    # sentence-transformers 5 renamed the method (the old name warns).
    size = getattr(model, "get_embedding_dimension", None)
    return int((size or model.get_sentence_embedding_dimension)() or 0)


def _replica_devices(device: str, asked: Sequence[str] | None, int8: bool) -> list[str]:
    """Return the devices of the model's extra replicas: as asked, else every other GPU."""
    if asked is not None:
        return [device_name(d) for d in asked]
    if int8 or device != "cuda":  # a numbered GPU (cuda:1) is a choice of one
        return []
    import torch  # noqa: PLC0415

    return [f"cuda:{k}" for k in range(1, torch.cuda.device_count())]


def _embed_with(
    model: Any,  # noqa: ANN401 - a SentenceTransformer
    engine: Engine,
    texts: Sequence[str],
    out: torch.Tensor | None = None,
    rows: torch.Tensor | None = None,
) -> torch.Tensor:
    """Sentence embeddings of ``texts`` by ``model`` through ``engine``, left on its device.

    Into ``out`` when given: text ``k`` at row ``rows[k]`` (row ``k`` without ``rows``).
    """
    import torch  # noqa: PLC0415

    device = engine.device
    if out is None:
        out = torch.empty((len(texts), embedding_dim(model)), dtype=torch.float32, device=device)

    def step(batch: Batch, tensors: dict[str, torch.Tensor]) -> None:
        features = model[0]({**tensors, "modality": "text"})
        for module in list(model)[1:]:  # pooling, normalisation, dense …
            features = module(features)
        where = batch.device_index
        if where is None:
            where = torch.from_numpy(batch.index).to(device)
        if rows is not None:
            where = rows[where]
        out[where] = features["sentence_embedding"].float()

    engine.run(texts, step)
    return out


# Fresh vectors copied back to the host this many at a time (150 MB of 384 floats).
_BACK = 1 << 17


def _distinct_keys(texts: list[str]) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """Keys of ``texts`` (with positions), the first row of each key, and the distinct keys.

    Column operations: no Python loop over the texts.
    """
    import polars as pl  # noqa: PLC0415

    keys = text_keys(pl.Series(texts, dtype=pl.String)).with_row_index("pos")
    firsts = keys.unique(["k0", "k1"], keep="first", maintain_order=True)
    return keys, firsts, firsts.select("k0", "k1")


def _chosen(texts: list[str], firsts: pl.DataFrame, todo: np.ndarray) -> list[str]:
    """Return the texts of the distinct keys at ``todo`` (all of them: ``texts`` itself)."""
    if todo.size == len(texts):  # every text distinct and new
        return texts
    return [texts[i] for i in firsts["pos"].to_numpy()[todo].tolist()]


def _inverse(keys: pl.DataFrame, distinct: pl.DataFrame) -> np.ndarray | None:
    """Each text's row among the distinct keys; None when no text is there twice."""
    if distinct.height == keys.height:  # already in the texts' order
        return None
    inverse: np.ndarray = keys.join(
        distinct.with_row_index("u"), on=["k0", "k1"], how="left", maintain_order="left"
    )["u"].to_numpy()
    return inverse


def _index(positions: np.ndarray, device: torch.device) -> torch.Tensor:
    """Positions as an int64 tensor on ``device`` (Polars hands out read-only arrays)."""
    import torch  # noqa: PLC0415

    return torch.from_numpy(np.require(positions, np.int64, "W")).to(device)


def default_cache_dir() -> Path:
    """``$EVALNB_CACHE_DIR``, else ``~/.cache/evalnb``."""
    return Path(os.environ.get("EVALNB_CACHE_DIR", Path.home() / ".cache" / "evalnb"))


# The encoders get_encoder has loaded and still holds (weakly: cache_clear lets them go).
_LOADED: weakref.WeakSet[TextEncoder] = weakref.WeakSet()


@lru_cache(maxsize=4)
def get_encoder(
    model: str = DEFAULT_MODEL, device: str | None = None, precision: str = "fp32"
) -> TextEncoder:
    """Return the process-wide encoder for ``model`` at ``precision`` (loaded once)."""
    encoder = TextEncoder(model, device=device, cache_dir=default_cache_dir(), precision=precision)
    _LOADED.add(encoder)
    return encoder


def restart_vector_caches() -> None:
    """Give every encoder :func:`get_encoder` holds an empty memory and today's cache folder.

    The models stay loaded (seconds each); only the vectors are forgotten, and new ones go to
    ``default_cache_dir()`` as it reads now. For a process that works on unrelated labs in
    turn and wants each one's vectors computed as if it ran alone (the test suite does this
    per module: a vector read back equals a fresh one only to about 1e-7).
    """
    for encoder in list(_LOADED):
        encoder.use_cache(default_cache_dir())


def cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cosine similarity of every row of ``a`` with every row of ``b`` (plain, in [-1, 1])."""
    na = np.linalg.norm(a, axis=1, keepdims=True)
    nb = np.linalg.norm(b, axis=1, keepdims=True)
    result: np.ndarray = (a / np.where(na == 0, 1, na)) @ (b / np.where(nb == 0, 1, nb)).T
    return result


V = TypeVar("V")


class _Target(Protocol[V]):
    """Where :meth:`TextEncoder._encode` gathers the vectors: host memory or the device."""

    def allocate(self, rows: int) -> V: ...

    def place(self, out: V, at: np.ndarray, vectors: np.ndarray, rows: np.ndarray) -> None: ...

    def fill(self, out: V, todo: np.ndarray, texts: list[str], distinct: int) -> np.ndarray:
        """Embed ``texts`` into rows ``todo`` of ``out``; return them on the host."""
        ...

    def take(self, out: V, inverse: np.ndarray) -> V: ...


class _OnHost:
    def __init__(self, encoder: TextEncoder) -> None:
        self._encoder = encoder

    def allocate(self, rows: int) -> np.ndarray:
        return np.empty((rows, self._encoder.dim), dtype=np.float32)

    def place(self, out: np.ndarray, at: np.ndarray, vectors: np.ndarray, rows: np.ndarray) -> None:
        gather_into(out, at, vectors, rows)

    def fill(
        self,
        out: np.ndarray,
        todo: np.ndarray,
        texts: list[str],
        distinct: int,  # noqa: ARG002 - the device needs it
    ) -> np.ndarray:
        fresh: np.ndarray = self._encoder._embed(texts)
        out[todo] = fresh
        return fresh

    def take(self, out: np.ndarray, inverse: np.ndarray) -> np.ndarray:
        taken: np.ndarray = out[inverse]
        return taken


class _OnDevice:
    def __init__(self, encoder: TextEncoder) -> None:
        import torch  # noqa: PLC0415

        self._encoder = encoder
        self._device = torch.device(encoder.device)

    def allocate(self, rows: int) -> torch.Tensor:
        import torch  # noqa: PLC0415

        return torch.empty((rows, self._encoder.dim), dtype=torch.float32, device=self._device)

    def place(
        self, out: torch.Tensor, at: np.ndarray, vectors: np.ndarray, rows: np.ndarray
    ) -> None:
        import torch  # noqa: PLC0415

        found = torch.from_numpy(np.take(vectors, rows, axis=0))
        out[_index(at, self._device)] = found.to(self._device)

    def fill(
        self, out: torch.Tensor, todo: np.ndarray, texts: list[str], distinct: int
    ) -> np.ndarray:
        import torch  # noqa: PLC0415

        enc = self._encoder
        every = todo.size == distinct  # then row k of out is fresh text k
        rows = None if every else _index(todo, self._device)
        if enc._int8 is not None or enc._replicas:
            fresh = torch.from_numpy(enc._embed(texts)).to(self._device)
            out[rows if rows is not None else slice(None)] = fresh
        else:  # the engine writes straight into out: no second copy on the device
            _embed_with(enc._model, enc.engine, enc._prepare(texts), out, rows)
        # The copy for the memo and the cache comes back in slices, so the device holds no
        # second full copy of the fresh vectors.
        host = np.empty((todo.size, enc.dim), dtype=np.float32)
        for s in range(0, todo.size, _BACK):
            part = out[s : s + _BACK] if rows is None else out[rows[s : s + _BACK]]
            host[s : s + _BACK] = part.cpu().numpy()
        return host

    def take(self, out: torch.Tensor, inverse: np.ndarray) -> torch.Tensor:
        return out[_index(inverse, self._device)]
