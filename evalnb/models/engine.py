"""The batched model engine under every model-backed evaluator.

Measured on an H200 before this module existed, the GPU idled behind one Python thread: the
end-to-end answer similarity ran at 8.2k sentences/s while the model's forward pass alone did
228k/s, and on a 2-core CPU a model with no forward cost still ran at a quarter of the
tokenizer's own speed. The time went to the ``transformers`` tokenizer wrapper called on
batches of 16, to per-text hashing and caching, and to stacking arrays row by row. Here:

* **Tokenizing** uses the Rust ``tokenizers`` library directly (``encode_batch_fast`` runs on
  all cores, releases the GIL and skips the character offsets no model reads) on large
  chunks of length-sorted texts, in a producer thread that stays ahead of the model through
  a bounded queue (:func:`prefetch`).
* **Batches** are cut by a token budget from length-sorted texts, not by a row count: short
  texts make wide batches, long ones narrow batches, and padding stays small.
* **Tensors** are built with NumPy from the flat token ids (one scatter per batch). On CUDA a
  batch's arrays (and its positions) go in one ``non_blocking`` copy from pinned buffers
  used in turn (:class:`~evalnb.models.staging.Staging`), which overlaps the previous
  batch's forward pass.
* **Two producers on CUDA.** A producer spends part of each chunk in the Rust tokenizer
  (without the GIL, on all cores) and part in Python (reading the ids, padding); with two,
  one pads while the other tokenizes. Measured there: the tokenizer alone ran at 181k
  texts/s on 16 cores, tokenizing and padding in one thread at 114k/s.
* **Results stay on the device** (:meth:`Engine.run` hands each batch's outputs to a callback
  that pools, normalises or scores there); only what the caller asks for comes back.

The device is CUDA when present (bf16 weights, PyTorch's SDPA attention), else the CPU;
``EVALNB_DEVICE=cpu|cuda|cuda:N`` forces one.
"""

from __future__ import annotations

import itertools
import os
import queue
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from evalnb.models.staging import Staging

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Sequence

    import torch
    from tokenizers import Tokenizer

__all__ = [
    "CLIP_CHARS_PER_TOKEN",
    "Batch",
    "Engine",
    "cpu_token_budget",
    "device_name",
    "encode_many",
    "is_low_precision",
    "length_order",
    "prefetch",
    "prefetch_all",
    "rust_tokenizer",
]

T = TypeVar("T")

# Texts tokenized per encode_batch call. On a GPU: large enough that the Rust side spreads
# them over every core, small enough that the first batch reaches the model at once and the
# tokenizer keeps ahead of it. On a CPU the tokenizer and the model share the cores: large
# chunks keep them from taking turns on every batch (measured on two cores, 65,536 texts
# a chunk ran end to end in 1.10 s where 8,192 took 1.2-1.4 s, the tokenizer alone 0.95 s).
GPU_CHUNK = 8192
CPU_CHUNK = 65536
# Tokens per batch (rows × padded width). On a GPU the forward pass of MiniLM stops gaining
# past ~64k tokens. On a CPU the best size depends on the model: measured on two cores,
# MiniLM (384 wide, 6 layers) ran at 200 texts/s with 4k tokens a batch, 175 with 16k and
# 110 with 32k (the activations leave the caches), while a model with next to no layers
# gains from 16k (its per-batch Python overhead dominates). Hence a budget by the model's
# size: about 8M hidden units × layers per batch, between 4k and 64k tokens.
# The largest budgets go to models whose hidden units × layers are 128 or fewer (a layer 32
# wide, or none): their batches cost Python overhead more than arithmetic.
GPU_TOKEN_BUDGET = 65_536
CPU_TOKEN_BUDGET = 4_096


def cpu_token_budget(hidden_size: int, layers: int) -> int:
    """Tokens per CPU batch for a model ``hidden_size`` wide and ``layers`` deep."""
    return int(min(65_536, max(CPU_TOKEN_BUDGET, (1 << 23) // max(1, hidden_size * layers))))


def encode_many(tok: Tokenizer, inputs: list[Any], *, add_special_tokens: bool = True) -> list[Any]:
    """Encode ``inputs`` on all cores, without character offsets where ``tokenizers`` can.

    ``encode_batch_fast`` (tokenizers 0.21 and later) gives the same ids and segment ids as
    ``encode_batch`` but skips tracking each token's offsets in the text: measured on two
    cores and 23k real sentences, 0.86 s against 0.93 s.
    """
    fast = getattr(tok, "encode_batch_fast", None)
    if fast is not None:
        return list(fast(inputs, add_special_tokens=add_special_tokens))
    return list(tok.encode_batch(inputs, add_special_tokens=add_special_tokens))


def device_name(requested: str | None = None) -> str:
    """Return the device models run on: ``requested``, ``$EVALNB_DEVICE``, else CUDA if any.

    Raises
    ------
    ValueError
        When CUDA is asked for (by argument or ``EVALNB_DEVICE``) and this torch has none.
    """
    import torch  # noqa: PLC0415

    wanted = requested or os.environ.get("EVALNB_DEVICE") or ""
    if not wanted:
        return "cuda" if torch.cuda.is_available() else "cpu"
    if wanted.startswith("cuda") and not torch.cuda.is_available():
        msg = (
            f"device {wanted!r} was asked for (argument or EVALNB_DEVICE) but this torch "
            f"({torch.__version__}) sees no CUDA GPU; unset EVALNB_DEVICE or pass device='cpu'"
        )
        raise ValueError(msg)
    if wanted != "cpu" and not wanted.startswith("cuda"):
        msg = f"device must be 'cpu', 'cuda' or 'cuda:N', got {wanted!r}"
        raise ValueError(msg)
    return wanted


def is_low_precision(device: str) -> bool:
    """Tell whether models run in bf16 on ``device`` (any CUDA device).

    Scores then agree with fp32
    to about 5e-3 rather than 1e-5.
    """
    return device.startswith("cuda")


def rust_tokenizer(hf_tokenizer: Any) -> Tokenizer | None:  # noqa: ANN401
    """Copy the Rust tokenizer of a ``transformers`` fast tokenizer (None: a slow one).

    A copy, so that setting its truncation and padding never changes the caller's.
    """
    backend = getattr(hf_tokenizer, "backend_tokenizer", None)
    if backend is None:
        return None
    from tokenizers import Tokenizer  # noqa: PLC0415

    tok = Tokenizer.from_str(backend.to_str())
    tok.no_padding()
    tok.no_truncation()
    return tok


def prefetch(items: Iterable[T], depth: int = 4) -> Iterator[T]:
    """Iterate ``items`` in a producer thread that stays up to ``depth`` items ahead.

    An exception in the producer is raised in the consumer at the item where it happened;
    a consumer that stops early (or fails) stops the producer at its next item.
    """
    return prefetch_all([items], depth)


def prefetch_all(sources: Sequence[Iterable[T]], depth: int = 4) -> Iterator[T]:
    """:func:`prefetch` with a producer thread for each of ``sources``, all into one queue.

    The sources' items interleave in no set order. The first exception in any producer is
    raised in the consumer; a consumer that stops stops them all.
    """
    box: queue.Queue[tuple[int, Any]] = queue.Queue(maxsize=max(1, depth))
    stop = threading.Event()
    done, failed = 0, 1

    def produce(source: Iterable[T]) -> None:
        items = iter(source)
        try:
            for item in items:
                while not stop.is_set():
                    try:
                        box.put((2, item), timeout=0.1)
                        break
                    except queue.Full:
                        continue
                if stop.is_set():
                    return
            box.put((done, None))
        except BaseException as exc:
            box.put((failed, exc))
        finally:  # a generator stopped early runs its own clean-up now, in its thread
            close = getattr(items, "close", None)
            if close is not None:
                close()

    workers = [
        threading.Thread(target=produce, args=(source,), name=f"evalnb-tokenize-{k}", daemon=True)
        for k, source in enumerate(sources)
    ]
    for worker in workers:
        worker.start()
    try:
        running = len(workers)
        while running:
            kind, value = box.get()
            if kind == done:
                running -= 1
                continue
            if kind == failed:
                raise value
            yield value
    finally:
        stop.set()
        for worker in workers:
            worker.join(timeout=5)


@dataclass
class Batch:
    """One padded batch: the input positions it holds and its NumPy arrays.

    ``arrays`` has ``input_ids``, ``attention_mask`` and, for pairs, ``token_type_ids``
    (int64, rows × width); ``lengths`` the tokens of each row.
    """

    index: np.ndarray
    arrays: dict[str, np.ndarray]
    lengths: np.ndarray
    # ``index`` on the model's device, set by :meth:`Engine.run` on CUDA (sent with the
    # arrays in one copy); None elsewhere.
    device_index: torch.Tensor | None = None


def plan_batches(
    tokenizer: Tokenizer,
    texts: Sequence[str],
    pairs: Sequence[str] | None = None,
    *,
    max_length: int,
    pad_id: int,
    token_budget: int,
    max_rows: int = 8192,
    add_special_tokens: bool = True,
    type_ids: bool = False,
    chunk_size: int = CPU_CHUNK,
    part: tuple[int, int] = (0, 1),
    order: np.ndarray | None = None,
) -> Iterator[Batch]:
    """Tokenize and cut into padded batches of at most ``token_budget`` tokens.

    Texts are taken in order of character length (a cheap proxy of token length), tokenized
    ``chunk_size`` at a time, and each chunk sorted by token length before it is cut, so a batch
    holds texts of nearly one length. Truncation is the tokenizer's ``longest_first`` (as
    ``transformers`` truncates pairs). ``part=(k, m)`` takes every ``m``-th chunk from the
    ``k``-th: ``m`` producers share the texts (and ``order``, :func:`length_order`'s, computed
    once for them all).
    """
    n = len(texts)
    if pairs is not None and len(pairs) != n:
        msg = f"texts and pairs must be as many; got {n} texts and {len(pairs)} pairs"
        raise ValueError(msg)
    if n == 0:
        return
    tok = tokenizer
    if (tok.truncation or {}).get("max_length") != max_length:
        tok.enable_truncation(max_length)
    if order is None:
        order = length_order(texts, pairs)
    k, m = part
    for start in range(k * chunk_size, n, m * chunk_size):
        chunk = order[start : start + chunk_size]
        if pairs is None:
            inputs: list[Any] = [texts[i] for i in chunk.tolist()]
        else:
            inputs = [(texts[i], pairs[i]) for i in chunk.tolist()]
        encs = encode_many(tok, inputs, add_special_tokens=add_special_tokens)
        lengths = np.fromiter((len(e) for e in encs), dtype=np.int64, count=len(encs))
        inner = np.argsort(lengths, kind="stable")
        at = 0
        while at < inner.size:
            # The widest row of a batch is its last (sorted): grow while the budget holds.
            first_width = max(int(lengths[inner[at]]), 1)
            rows = max(1, min(max_rows, token_budget // first_width))
            end = min(at + rows, inner.size)
            while end - at > 1 and int(lengths[inner[end - 1]]) * (end - at) > token_budget:
                end = at + max(1, token_budget // max(int(lengths[inner[end - 1]]), 1))
            sel = inner[at:end]
            yield _pad(
                [encs[i] for i in sel],
                lengths[sel],
                chunk[sel],
                pad_id,
                type_ids,
                pairs is not None,
            )
            at = end


# Characters a token may span at the most, for clipping (Engine.clip): a bound, not an
# average (about 4 for English); a text cut there holds its first tokens with room to spare.
CLIP_CHARS_PER_TOKEN = 12
_CLIP_MARGIN = 16  # tokens beyond the limit a cut text must still give: the cut word's share


def _cut(text: str, bound: int, *, from_end: bool) -> str:
    """Cut ``text`` to about ``bound`` characters at a space (keeping its end with ``from_end``)."""
    if from_end:
        tail = text[-bound:]
        space = tail.find(" ", 0, 256)
        return tail[space:] if space >= 0 else tail
    head = text[:bound]
    space = head.rfind(" ", bound - 256)
    return head[:space] if space > 0 else head


def length_order(texts: Sequence[str], pairs: Sequence[str] | None = None) -> np.ndarray:
    """Positions of the texts (with their pairs) by character length, stable."""
    n = len(texts)
    chars = np.fromiter((len(t) for t in texts), dtype=np.int64, count=n)
    if pairs is not None:
        chars += np.fromiter((len(t) for t in pairs), dtype=np.int64, count=n)
    return np.argsort(chars, kind="stable")


def _pad(
    encs: list[Any],
    lengths: np.ndarray,
    index: np.ndarray,
    pad_id: int,
    type_ids: bool,
    paired: bool,
) -> Batch:
    width = max(int(lengths.max()), 1)
    mask = np.arange(width)[None, :] < lengths[:, None]
    total = int(lengths.sum())
    ids = np.full((len(encs), width), pad_id, dtype=np.int64)
    ids[mask] = np.fromiter(
        itertools.chain.from_iterable(e.ids for e in encs), dtype=np.int64, count=total
    )
    arrays = {"input_ids": ids, "attention_mask": mask.astype(np.int64)}
    if type_ids:
        types = np.zeros_like(ids)
        if paired:  # single texts are all segment 0: no need to read the ids
            types[mask] = np.fromiter(
                itertools.chain.from_iterable(e.type_ids for e in encs), dtype=np.int64, count=total
            )
        arrays["token_type_ids"] = types
    return Batch(index=index, arrays=arrays, lengths=lengths)


class Engine:
    """Runs a model over texts in token-budget batches with tokenizing ahead of it.

    Parameters
    ----------
    tokenizer
        The model's ``transformers`` tokenizer (its Rust tokenizer is used when it is fast;
        a slow one is called on each batch in the producer thread).
    device
        Where the model is (``"cpu"``, ``"cuda"``, ``"cuda:N"``).
    max_length
        Truncation length in tokens.
    token_budget
        Tokens per batch; default by device (65,536 on CUDA, 4,096 on a CPU).
    """

    def __init__(
        self,
        tokenizer: Any,  # noqa: ANN401
        device: str,
        *,
        max_length: int,
        token_budget: int | None = None,
        max_rows: int = 8192,
    ) -> None:
        self.hf_tokenizer = tokenizer
        self.rust = rust_tokenizer(tokenizer)
        self.device = device
        self.max_length = max_length
        self.token_budget = token_budget or (
            GPU_TOKEN_BUDGET if device.startswith("cuda") else CPU_TOKEN_BUDGET
        )
        self.max_rows = max_rows
        cuda = device.startswith("cuda")
        self.chunk_size = GPU_CHUNK if cuda else CPU_CHUNK
        # Batches ready ahead of the model: on a GPU, a chunk's worth and more, so the model
        # never waits while the tokenizer starts on the next chunk.
        self.queue_depth = 16 if cuda else 4
        # On a CPU the model needs the cores the second producer would take.
        self.producers = 2 if cuda else 1
        self._staging = Staging(device) if cuda else None
        pad = getattr(tokenizer, "pad_token_id", None)
        if pad is None:
            pad = getattr(tokenizer, "eos_token_id", None)
        self.pad_id = int(pad) if pad is not None else 0
        if self.rust is not None:
            self.rust.enable_truncation(max_length)
        self._tokenizers: list[Tokenizer] = [] if self.rust is None else [self.rust]
        self._whole: Tokenizer | None = None
        # Handing BERT its segment ids spares it building them from a buffer every batch.
        self.wants_type_ids = "token_type_ids" in getattr(tokenizer, "model_input_names", ())

    def token_ids(
        self,
        texts: Sequence[str],
        *,
        add_special_tokens: bool = True,
        max_tokens: int | None = None,
        from_end: bool = False,
    ) -> list[list[int]]:
        """Token ids of each text, not truncated (the caller cuts them), on all cores.

        With ``max_tokens``, a long text is first clipped (:meth:`clip`) to the characters
        that can give its first ``max_tokens`` tokens (its last, ``from_end``): the caller
        still cuts the ids, and gets the same ones as from the whole text.
        """
        if max_tokens is not None:
            texts = self.clip(texts, max_tokens, from_end=from_end)
        if self.rust is None:
            enc = self.hf_tokenizer
            return [enc(t, add_special_tokens=add_special_tokens)["input_ids"] for t in texts]
        if self._whole is None:  # a copy without the engine's truncation, made once
            self._whole = rust_tokenizer(self.hf_tokenizer)
        assert self._whole is not None  # the tokenizer is fast: it has a Rust copy
        encs = encode_many(self._whole, list(texts), add_special_tokens=add_special_tokens)
        return [e.ids for e in encs]

    def clip(
        self, texts: Sequence[str], max_tokens: int | None = None, *, from_end: bool = False
    ) -> Sequence[str]:
        """Cut each long text to the characters that can give its first ``max_tokens`` tokens.

        A model reads at most ``max_length`` tokens (the default ``max_tokens``), but a
        tokenizer handed a whole text tokenizes all of it: a 50 MB answer took 5.8 GB and,
        under a memory limit, aborted the process in the Rust tokenizer. A text longer than
        :data:`CLIP_CHARS_PER_TOKEN` characters a token is cut at a space near that bound,
        and kept cut only if the cut text still gives ``max_tokens`` tokens and a margin
        (so the first ``max_tokens`` are the whole text's: pre-tokenizers split at spaces);
        else the bound grows fourfold, up to the whole text. ``from_end`` keeps the end.
        """
        limit = self.max_length if max_tokens is None else max_tokens
        bound = max(limit * CLIP_CHARS_PER_TOKEN, 1024)
        todo = [i for i, t in enumerate(texts) if len(t) > bound]
        if not todo:
            return texts
        out = list(texts)
        while todo:
            cut = [_cut(texts[i], bound, from_end=from_end) for i in todo]
            counts = self._token_counts(cut)
            again = []
            for i, text, n in zip(todo, cut, counts, strict=True):
                if n >= limit + _CLIP_MARGIN:
                    out[i] = text
                elif len(texts[i]) > 4 * bound:
                    again.append(i)
                # else: the whole text is barely longer than the bound; it stays whole
            todo, bound = again, 4 * bound
        return out

    def _token_counts(self, texts: Sequence[str]) -> list[int]:
        """Tokens of each text, untruncated, special tokens left out."""
        return [len(ids) for ids in self.token_ids(texts, add_special_tokens=False)]

    def batches(
        self,
        texts: Sequence[str],
        pairs: Sequence[str] | None = None,
        *,
        add_special_tokens: bool = True,
        type_ids: bool | None = None,
    ) -> Iterator[Batch]:
        """Yield the padded batches of ``texts`` (and ``pairs``), built in a producer thread."""
        if type_ids is None:
            type_ids = self.wants_type_ids
        texts = self.clip(texts)
        if pairs is not None:
            pairs = self.clip(pairs)
        if self.rust is None:
            source = self._slow_batches(texts, pairs, add_special_tokens=add_special_tokens)
            yield from prefetch(source, depth=self.queue_depth)
            return
        producers = max(1, min(self.producers, -(-len(texts) // self.chunk_size)))
        # Each producer has a tokenizer of its own: none shares the Rust object's settings.
        while len(self._tokenizers) < producers:
            self._tokenizers.append(self._copy_rust())
        order = length_order(texts, pairs) if producers > 1 else None
        sources = [
            plan_batches(
                self._tokenizers[k],
                texts,
                pairs,
                max_length=self.max_length,
                pad_id=self.pad_id,
                token_budget=self.token_budget,
                max_rows=self.max_rows,
                add_special_tokens=add_special_tokens,
                type_ids=type_ids,
                chunk_size=self.chunk_size,
                part=(k, producers),
                order=order,
            )
            for k in range(producers)
        ]
        yield from prefetch_all(sources, depth=self.queue_depth)

    def _copy_rust(self) -> Tokenizer:
        tok = rust_tokenizer(self.hf_tokenizer)
        assert tok is not None  # only called when the tokenizer is fast
        tok.enable_truncation(self.max_length)
        return tok

    def _slow_batches(
        self, texts: Sequence[str], pairs: Sequence[str] | None, *, add_special_tokens: bool
    ) -> Iterator[Batch]:
        """Batches from a tokenizer with no Rust core (rows by a fixed count)."""
        order = length_order(texts)
        rows = max(1, self.token_budget // 128)
        for start in range(0, len(order), rows):
            idx = order[start : start + rows]
            enc = self.hf_tokenizer(
                [texts[i] for i in idx],
                [pairs[i] for i in idx] if pairs is not None else None,
                padding=True,
                truncation=True,
                max_length=self.max_length,
                add_special_tokens=add_special_tokens,
                return_tensors="np",
            )
            arrays = {k: np.asarray(v, dtype=np.int64) for k, v in enc.items()}
            yield Batch(index=idx, arrays=arrays, lengths=arrays["attention_mask"].sum(axis=1))

    def to_device(self, arrays: dict[str, np.ndarray]) -> dict[str, torch.Tensor]:
        """Move the batch's arrays to the device (on CUDA: one pinned, non-blocking copy)."""
        import torch  # noqa: PLC0415

        if self._staging is not None:
            return self._staging.send(arrays)
        return {key: torch.from_numpy(value) for key, value in arrays.items()}

    def run(
        self,
        texts: Sequence[str],
        step: Callable[[Batch, dict[str, torch.Tensor]], None],
        pairs: Sequence[str] | None = None,
        *,
        add_special_tokens: bool = True,
        type_ids: bool | None = None,
    ) -> None:
        """Call ``step(batch, tensors)`` for every batch, under ``torch.inference_mode``.

        On CUDA the batch's positions come along in the same copy: ``batch.device_index``.
        """
        import torch  # noqa: PLC0415

        with torch.inference_mode():
            for batch in self.batches(
                texts, pairs, add_special_tokens=add_special_tokens, type_ids=type_ids
            ):
                if self._staging is None:
                    step(batch, self.to_device(batch.arrays))
                    continue
                tensors = self._staging.send({**batch.arrays, _INDEX: batch.index})
                batch.device_index = tensors.pop(_INDEX)
                step(batch, tensors)


_INDEX = "\x00index"  # a key no model input has
