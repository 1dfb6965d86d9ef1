"""Loading and running local Hugging Face models (classifiers, cross-encoders, causal LMs).

Real loading code: a local folder, or a hub name resolved from the local cache (and from
the hub when the user has access and has not set ``HF_HUB_OFFLINE``). When a model cannot
be had, :class:`ModelUnavailable` says which, why, and what to pass instead. Inference runs
in batches on CUDA (bf16) when a GPU is present, else on the CPU.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from evalnb._errors import EvalnbError

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["CausalLM", "Classifier", "ModelUnavailable", "load_causal_lm", "load_classifier"]


class ModelUnavailable(EvalnbError):
    """A model an evaluator needs could not be loaded (e.g. not available offline)."""


def _device() -> str:
    import torch  # noqa: PLC0415

    return "cuda" if torch.cuda.is_available() else "cpu"


def _load(kind: str, name: str, evaluator: str, **kwargs: Any) -> tuple[Any, Any]:  # noqa: ANN401
    import transformers  # noqa: PLC0415

    source = str(Path(name).expanduser()) if Path(name).expanduser().is_dir() else name
    auto = getattr(transformers, kind)
    try:
        try:  # the local copy first: no network round trips (and retries) when it is there
            tokenizer = transformers.AutoTokenizer.from_pretrained(
                source, local_files_only=True, **kwargs
            )
            model = auto.from_pretrained(source, local_files_only=True, **kwargs)
        except OSError:
            if os.environ.get("HF_HUB_OFFLINE", "") not in ("", "0"):
                raise
            tokenizer = transformers.AutoTokenizer.from_pretrained(source, **kwargs)
            model = auto.from_pretrained(source, **kwargs)
    except (OSError, ValueError) as exc:
        msg = (
            f"{evaluator}: model {name!r} is not available ({str(exc).splitlines()[0]}). "
            "It is not in the local Hugging Face cache and the hub cannot be reached (or "
            "HF_HUB_OFFLINE is set). Pass model='<local folder>' with a copy of it, or run "
            "once with hub access to cache it."
        )
        raise ModelUnavailable(msg) from None
    device = _device()
    model = model.to(device).eval()
    if device == "cuda":
        import torch  # noqa: PLC0415

        model = model.to(torch.bfloat16)
    return tokenizer, model


@dataclass
class Classifier:
    """A sequence classifier; ``labels`` are the model's label names in output order."""

    tokenizer: Any
    model: Any
    labels: list[str]
    batch_size: int = 32

    def logits(self, texts: Sequence[str], pairs: Sequence[str] | None = None) -> np.ndarray:
        """Raw logits for each text (or each (text, pair) when ``pairs`` is given)."""
        import torch  # noqa: PLC0415

        order = np.argsort([len(t) for t in texts], kind="stable")  # similar lengths batch well
        out = np.zeros((len(texts), len(self.labels)), dtype=np.float32)
        device = next(self.model.parameters()).device
        for start in range(0, len(texts), self.batch_size):
            idx = order[start : start + self.batch_size]
            first = [texts[i] for i in idx]
            second = [pairs[i] for i in idx] if pairs is not None else None
            enc = self.tokenizer(first, second, padding=True, truncation=True,
                                 max_length=_max_len(self.tokenizer), return_tensors="pt")  # fmt: skip
            with torch.inference_mode():
                logits = self.model(**{k: v.to(device) for k, v in enc.items()}).logits
            out[idx] = logits.float().cpu().numpy()
        return out


def _max_len(tokenizer: Any) -> int:  # noqa: ANN401
    limit = getattr(tokenizer, "model_max_length", 512)
    return int(limit) if isinstance(limit, int) and limit < 100_000 else 512


@lru_cache(maxsize=8)
def load_classifier(name: str, evaluator: str) -> Classifier:
    """Load a sequence classifier once per process."""
    tokenizer, model = _load("AutoModelForSequenceClassification", name, evaluator)
    id2label = model.config.id2label
    labels = [str(id2label[i]) for i in range(len(id2label))]
    return Classifier(tokenizer, model, labels)


@dataclass
class CausalLM:
    """A causal language model scoring texts by perplexity."""

    tokenizer: Any
    model: Any
    batch_size: int = 16

    def perplexity(self, texts: Sequence[str]) -> np.ndarray:
        """exp(mean token cross-entropy) of each text under the model (NaN: fewer than 2 tokens)."""
        import torch  # noqa: PLC0415

        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        device = next(self.model.parameters()).device
        out = np.full(len(texts), np.nan)
        order = np.argsort([len(t) for t in texts], kind="stable")
        for start in range(0, len(texts), self.batch_size):
            idx = order[start : start + self.batch_size]
            enc = self.tokenizer([texts[i] for i in idx], padding=True, truncation=True,
                                 max_length=_max_len(self.tokenizer), return_tensors="pt")  # fmt: skip
            ids, mask = enc["input_ids"].to(device), enc["attention_mask"].to(device)
            with torch.inference_mode():
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
            out[idx] = values
        return out


@lru_cache(maxsize=4)
def load_causal_lm(name: str, evaluator: str) -> CausalLM:
    """Load a causal LM once per process."""
    tokenizer, model = _load("AutoModelForCausalLM", name, evaluator)
    return CausalLM(tokenizer, model)
