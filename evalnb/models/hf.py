"""Loading and running local Hugging Face models (classifiers, cross-encoders, causal LMs).

Real loading code: a local folder, or a hub name resolved from the local cache (and from
the hub when the user has access and has not set ``HF_HUB_OFFLINE``; an unreachable hub is
found out in seconds, :mod:`evalnb.models.hub`). When a model cannot
be had, :class:`ModelUnavailable` says which, why, and what to pass instead. Inference runs
in batches on CUDA (bf16) when a GPU is present, else on the CPU.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from evalnb.lab.errors import EvalnbError
from evalnb.models.engine import Batch, Engine, device_name
from evalnb.models.hub import hub_blocker, offline_advice, quiet_loading

if TYPE_CHECKING:
    from collections.abc import Sequence

    import torch

__all__ = [
    "CausalLM",
    "Classifier",
    "ModelUnavailable",
    "OnnxClassifier",
    "ScoringLM",
    "load_causal_lm",
    "load_classifier",
    "load_scoring_lm",
]


class ModelUnavailable(EvalnbError):
    """A model an evaluator needs could not be loaded (e.g. not available offline)."""


def _source(name: str) -> str:
    folder = Path(name).expanduser()
    return str(folder) if folder.is_dir() else name


def _tokenizer(transformers: Any, source: str, config: Any, local: bool, **kwargs: Any) -> Any:  # noqa: ANN401
    """Load the model's tokenizer, or its foundation model's when it ships none.

    Vectara's HHEM ships only its weights and code: it tokenizes with the tokenizer of the
    model it was fine-tuned from, named in its config (``foundation``: flan-t5-base).
    """
    try:
        return transformers.AutoTokenizer.from_pretrained(source, local_files_only=local, **kwargs)
    except (OSError, ValueError, TypeError):
        foundation = getattr(config, "foundation", None)
        if not isinstance(foundation, str):
            raise
        return transformers.AutoTokenizer.from_pretrained(
            _source(foundation), local_files_only=local, trust_remote_code=False
        )


def _why(
    name: str, evaluator: str, exc: BaseException, trust: bool, blocker: str | None = None
) -> str:
    """Say what failed and what to do, by what the loader reported."""
    first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    if "trust_remote_code" in str(exc) and not trust:
        return (
            f"{evaluator}: model {name!r} ships its own Python code, and {evaluator} does not "
            "run model code unless asked. Pass trust_remote_code=True if you trust the model's "
            f"source ({first})."
        )
    if "TensorFlow" in str(exc) or "tf_model.h5" in str(exc):
        return (
            f"{evaluator}: model {name!r} has TensorFlow weights only ({first}). Export it to "
            "ONNX (optimum-cli export onnx --model <name> <folder>) or to PyTorch, then pass "
            "model='<folder>' (ONNX needs pip install 'evalnb[onnx]')."
        )
    if isinstance(exc, OSError):
        why_not_hub = blocker or "the hub could not provide it"
        return (
            f"{evaluator}: model {name!r} is not available ({first}). It, or a model it "
            f"builds on, is not in the local Hugging Face cache, and {why_not_hub}. "
            + offline_advice(name)
        )
    return f"{evaluator}: model {name!r} could not be loaded: {first}"


def _load(
    kind: str,
    name: str,
    evaluator: str,
    *,
    trust_remote_code: bool = False,
    **kwargs: Any,  # noqa: ANN401
) -> tuple[Any, Any]:
    import transformers  # noqa: PLC0415

    source = _source(name)
    # Always said, never left to transformers: left unset it asks on stdin (and a notebook
    # kernel waits forever).
    trust = {"trust_remote_code": trust_remote_code}
    seen: dict[str, Any] = {}
    blocker: str | None = None

    def fetch(local: bool) -> tuple[Any, Any]:
        config = transformers.AutoConfig.from_pretrained(
            source, local_files_only=local, **trust, **kwargs
        )
        seen["config"] = config
        # kind "lm": a decoder-only or an encoder-decoder LM, whichever the model is
        name_of_auto = kind
        if kind == "lm":
            seq2seq = bool(getattr(config, "is_encoder_decoder", False))
            name_of_auto = "AutoModelForSeq2SeqLM" if seq2seq else "AutoModelForCausalLM"
        auto = getattr(transformers, name_of_auto)
        tok = _tokenizer(transformers, source, config, local, **trust, **kwargs)
        with quiet_loading():
            model = auto.from_pretrained(
                source, config=config, local_files_only=local, **trust, **kwargs
            )
        return tok, model

    try:
        try:  # the local copy first: no network round trips (and retries) when it is there
            tokenizer, model = fetch(local=True)
        except OSError:
            # Not cached: ask the hub only when it can answer (else ~23 s of retries).
            blocker = hub_blocker()
            if blocker is not None:
                raise
            tokenizer, model = fetch(local=False)
    except (OSError, ValueError, ImportError) as exc:
        msg = _why(name, evaluator, exc, trust_remote_code, blocker)
        foundation = getattr(seen.get("config"), "foundation", None)
        if isinstance(foundation, str):
            msg += f" It builds on {foundation!r} (its tokenizer and config), needed too."
        raise ModelUnavailable(msg) from None
    device = device_name()
    model = model.to(device).eval()
    if device.startswith("cuda"):
        import torch  # noqa: PLC0415

        model = model.to(torch.bfloat16)
    return tokenizer, model


class _Engined:
    """A loaded model with its tokenizer, and the batching engine made for them once."""

    tokenizer: Any
    model: Any

    @property
    def engine(self) -> Engine:
        """The batching engine of this model's tokenizer (made on first use, then kept)."""
        made: Engine | None = self.__dict__.get("_engine")
        if made is None:
            made = Engine(
                self.tokenizer, _model_device(self.model), max_length=_max_len(self.tokenizer)
            )
            self.__dict__["_engine"] = made
        return made


@dataclass
class Classifier(_Engined):
    """A sequence classifier; ``labels`` are the model's label names in output order."""

    tokenizer: Any
    model: Any
    labels: list[str]

    def logits(self, texts: Sequence[str], pairs: Sequence[str] | None = None) -> np.ndarray:
        """Raw logits for each text (or each (text, pair) when ``pairs`` is given).

        Tokenized ahead of the model by the engine (:mod:`evalnb.models.engine`), in batches
        of a token budget from length-sorted inputs.
        """
        out = np.zeros((len(texts), len(self.labels)), dtype=np.float32)
        for batch in self.engine.batches(list(texts), None if pairs is None else list(pairs)):
            out[batch.index] = self._forward(batch.arrays)
        return out

    def _forward(self, arrays: dict[str, np.ndarray]) -> np.ndarray:
        import torch  # noqa: PLC0415

        wanted = self.__dict__.get("_inputs")
        if wanted is None:  # the forward's signature, read once rather than every batch
            wanted = self.__dict__["_inputs"] = _forward_inputs(self.model)
        with torch.inference_mode():
            tensors = self.engine.to_device({k: v for k, v in arrays.items() if k in wanted})
            logits = self.model(**tensors).logits
        return logits.float().cpu().numpy()  # type: ignore[no-any-return]


def _model_device(model: Any) -> str:  # noqa: ANN401
    """Return where a PyTorch model's weights are; ``cpu`` for anything else (ONNX Runtime)."""
    parameters = getattr(model, "parameters", None)
    if parameters is None:
        return "cpu"
    return str(next(parameters()).device)


def _forward_inputs(model: Any) -> set[str]:  # noqa: ANN401
    """Return which tokenizer outputs a model's forward takes (HHEM's takes no type ids)."""
    import inspect  # noqa: PLC0415

    names = set(inspect.signature(model.forward).parameters)
    known = {"input_ids", "attention_mask", "token_type_ids"}
    takes_any = any(
        p.kind == p.VAR_KEYWORD for p in inspect.signature(model.forward).parameters.values()
    )
    return known if takes_any else known & names


def _max_len(tokenizer: Any) -> int:  # noqa: ANN401
    limit = getattr(tokenizer, "model_max_length", 512)
    return int(limit) if isinstance(limit, int) and limit < 100_000 else 512


@dataclass
class OnnxClassifier(Classifier):
    """A sequence classifier exported to ONNX, run by ONNX Runtime (CUDA when present).

    ``model`` is the ``onnxruntime.InferenceSession``; the tokenizer is the exported folder's.
    """

    def _forward(self, arrays: dict[str, np.ndarray]) -> np.ndarray:
        wanted = {i.name for i in self.model.get_inputs()}
        feed = {k: v.astype(np.int64) for k, v in arrays.items() if k in wanted}
        return np.asarray(self.model.run(None, feed)[0], dtype=np.float32)


def _onnx_file(name: str) -> Path | None:
    """Find the ONNX graph of a local model folder (``model.onnx``, or ``onnx/model.onnx``)."""
    folder = Path(name).expanduser()
    for candidate in (folder / "model.onnx", folder / "onnx" / "model.onnx"):
        if candidate.is_file():
            return candidate
    return None


def _load_onnx(graph: Path, name: str, evaluator: str) -> OnnxClassifier:
    try:
        import onnxruntime as ort  # noqa: PLC0415
    except ImportError:
        msg = (
            f"{evaluator}: model {name!r} is an ONNX export; running it needs ONNX Runtime: "
            "pip install 'evalnb[onnx]'"
        )
        raise ModelUnavailable(msg) from None
    import transformers  # noqa: PLC0415

    folder = graph.parent if (graph.parent / "config.json").is_file() else graph.parent.parent
    try:
        config = transformers.AutoConfig.from_pretrained(
            str(folder), local_files_only=True, trust_remote_code=False
        )
        tokenizer = transformers.AutoTokenizer.from_pretrained(
            str(folder), local_files_only=True, trust_remote_code=False
        )
    except (OSError, ValueError) as exc:
        raise ModelUnavailable(_why(name, evaluator, exc, trust=False)) from None
    wanted = ["CUDAExecutionProvider", "CPUExecutionProvider"]
    providers = [p for p in wanted if p in ort.get_available_providers()]
    session = ort.InferenceSession(str(graph), providers=providers)
    labels = [str(config.id2label[i]) for i in range(len(config.id2label))]
    return OnnxClassifier(tokenizer, session, labels)


@lru_cache(maxsize=8)
def load_classifier(name: str, evaluator: str, *, trust_remote_code: bool = False) -> Classifier:
    """Load a sequence classifier once per process.

    A local folder holding ``model.onnx`` (an ONNX export, as H2O runs the fairness bias
    model) runs with ONNX Runtime; anything else loads with transformers (PyTorch).
    ``trust_remote_code`` lets a model run the code it ships (Vectara's HHEM does).
    """
    graph = _onnx_file(name)
    if graph is not None:
        return _load_onnx(graph, name, evaluator)
    tokenizer, model = _load(
        "AutoModelForSequenceClassification", name, evaluator, trust_remote_code=trust_remote_code
    )
    id2label = model.config.id2label
    labels = [str(id2label[i]) for i in range(len(id2label))]
    return Classifier(tokenizer, model, labels)


@dataclass
class CausalLM(_Engined):
    """A causal language model scoring texts by perplexity."""

    tokenizer: Any
    model: Any

    def perplexity(self, texts: Sequence[str]) -> np.ndarray:
        """exp(mean token cross-entropy) of each text under the model (NaN: fewer than 2 tokens)."""
        import torch  # noqa: PLC0415

        if self.tokenizer.pad_token is None:  # before the engine reads the pad id
            self.tokenizer.pad_token = self.tokenizer.eos_token
        engine = self.engine
        out = np.full(len(texts), np.nan)

        def step(batch: Batch, tensors: dict[str, torch.Tensor]) -> None:
            ids, mask = tensors["input_ids"], tensors["attention_mask"]
            logits = self.model(input_ids=ids, attention_mask=mask).logits.float()
            # token t is predicted from the tokens before it; padding is left out
            loss = torch.nn.functional.cross_entropy(
                logits[:, :-1].transpose(1, 2), ids[:, 1:], reduction="none"
            )
            keep = mask[:, 1:].float()
            count = keep.sum(dim=1)
            mean = (loss * keep).sum(dim=1) / count.clamp(min=1)
            values = torch.exp(mean).cpu().numpy()
            values[count.cpu().numpy() == 0] = np.nan
            out[batch.index] = values

        engine.run(list(texts), step, type_ids=False)
        return out


@lru_cache(maxsize=4)
def load_causal_lm(name: str, evaluator: str) -> CausalLM:
    """Load a causal LM once per process."""
    tokenizer, model = _load("AutoModelForCausalLM", name, evaluator)
    return CausalLM(tokenizer, model)


@dataclass
class ScoringLM(_Engined):
    """A causal or encoder-decoder LM giving the mean NLL of a continuation after a prefix."""

    tokenizer: Any
    model: Any
    batch_size: int = 8

    def continuation_nll(self, prefixes: Sequence[str], continuations: Sequence[str]) -> np.ndarray:
        """Average negative log-likelihood of each continuation's tokens given its prefix.

        Prefix and continuation are tokenized separately, so the scored tokens are exactly
        the continuation's (GPTScore's convention). A causal LM reads ``prefix + continuation``
        and the prefix is cut from the left when the pair is too long; an encoder-decoder LM
        reads the prefix and scores the continuation as its target. NaN: empty continuation.
        """
        import torch  # noqa: PLC0415

        seq2seq = bool(getattr(self.model.config, "is_encoder_decoder", False))
        config = self.model.config
        positions = getattr(config, "n_positions", None) or getattr(
            config, "max_position_embeddings", None
        )
        limit = min(_max_len(self.tokenizer), positions or 1_000_000)
        device = next(self.model.parameters()).device
        special = {"add_special_tokens": seq2seq}  # T5 wants its </s>; GPT-2 adds nothing anyway
        # Only the last `limit` tokens of a prefix and the first of a continuation are read.
        heads = self.engine.token_ids(prefixes, max_tokens=limit, from_end=True, **special)
        tails = self.engine.token_ids(continuations, max_tokens=limit, **special)
        out = np.full(len(prefixes), np.nan)
        pad = self.tokenizer.pad_token_id
        pad = pad if pad is not None else (self.tokenizer.eos_token_id or 0)
        order = np.argsort([len(h) + len(t) for h, t in zip(heads, tails, strict=True)])
        for start in range(0, len(order), self.batch_size):
            idx = [int(i) for i in order[start : start + self.batch_size] if tails[i]]
            if not idx:
                continue
            if seq2seq:
                src = [heads[i][-limit:] for i in idx]
                tgt = [tails[i][:limit] for i in idx]
                enc, enc_mask = _pad(src, pad)
                labels, lab_mask = _pad(tgt, pad)
                with torch.inference_mode():
                    logits = self.model(
                        input_ids=enc.to(device),
                        attention_mask=enc_mask.to(device),
                        labels=labels.masked_fill(lab_mask == 0, -100).to(device),
                    ).logits.float()
                nll = _token_nll(logits, labels.to(device), lab_mask.to(device))
            else:
                seqs, scored = [], []
                for i in idx:
                    tail = tails[i][: limit - 1]
                    head = heads[i][-(limit - len(tail)) :] if len(tail) < limit else []
                    seqs.append(head + tail)
                    scored.append([0] * len(head) + [1] * len(tail))
                ids, mask = _pad(seqs, pad)
                keep, _ = _pad(scored, 0)
                with torch.inference_mode():
                    logits = self.model(
                        input_ids=ids.to(device), attention_mask=mask.to(device)
                    ).logits.float()
                # position t predicts token t + 1
                nll = _token_nll(logits[:, :-1], ids[:, 1:].to(device), keep[:, 1:].to(device))
            out[idx] = nll.cpu().numpy()
        return out


def _pad(seqs: list[list[int]], pad: int) -> tuple[Any, Any]:
    """Right-pad token id lists into (ids, mask) tensors."""
    import torch  # noqa: PLC0415

    width = max(len(s) for s in seqs)
    ids = torch.full((len(seqs), width), pad, dtype=torch.long)
    mask = torch.zeros((len(seqs), width), dtype=torch.long)
    for row, seq in enumerate(seqs):
        ids[row, : len(seq)] = torch.tensor(seq, dtype=torch.long)
        mask[row, : len(seq)] = 1
    return ids, mask


def _token_nll(logits: Any, targets: Any, keep: Any) -> Any:  # noqa: ANN401
    """Mean cross-entropy over the kept target positions of each row."""
    import torch  # noqa: PLC0415

    loss = torch.nn.functional.cross_entropy(
        logits.transpose(1, 2), targets.masked_fill(keep == 0, 0), reduction="none"
    )
    weight = keep.float()
    return (loss * weight).sum(dim=1) / weight.sum(dim=1).clamp(min=1)


@lru_cache(maxsize=4)
def load_scoring_lm(name: str, evaluator: str) -> ScoringLM:
    """Load a causal or encoder-decoder LM (by its config) once per process."""
    tokenizer, model = _load("lm", name, evaluator)
    return ScoringLM(tokenizer, model)
