"""The RAG system under test, however it is given: an endpoint, a Python function, a baseline.

``system`` is an :class:`~evalnb.LLMClient` (an OpenAI-compatible endpoint; retrieved
contexts are read from the reply when the server returns them), any Python callable
``f(prompt) -> answer`` or ``-> (answer, contexts)`` (sync or async: a LangChain or
LlamaIndex pipeline wrapped in one function), or ``"retrieval-baseline"`` (evalnb's
extractive reference system over the workflow's corpus). Answers go to the lab's outputs
under the system's name; a function's answers are cached next to the store, so a resumed
workflow asks no case twice.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from evalnb.api.corpus import Corpus, retrieval_baseline
from evalnb.llm.client import LLMClient
from evalnb.llm.hosts import answer_with, run_suite
from evalnb.llm.redact import public_url

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from pathlib import Path

    from evalnb.api.lab import Lab

__all__ = ["BASELINE", "System", "from_spec"]

BASELINE = "retrieval-baseline"


@dataclass(frozen=True)
class System:
    """The system under test and the name its answers are recorded under."""

    target: LLMClient | Callable[[str], Any] | str
    name: str

    @classmethod
    def of(cls, system: object, name: str | None = None) -> System:
        """Wrap what the user passed; the error says what is accepted."""
        if isinstance(system, LLMClient):  # its answers are recorded under the model asked
            return cls(system, system.model)
        if system == BASELINE:
            return cls(BASELINE, name or BASELINE)
        if callable(system):
            default = getattr(system, "__qualname__", None) or type(system).__name__
            return cls(system, name or str(default))
        msg = (
            f"system must be an evalnb.LLMClient, a function f(prompt) -> answer or "
            f"(answer, contexts), or {BASELINE!r}; got {type(system).__name__}"
        )
        raise TypeError(msg)

    def spec(self) -> dict[str, str]:
        """Return what is stored to find the system again (never a key)."""
        if isinstance(self.target, LLMClient):
            return {
                "kind": "endpoint",
                "base_url": public_url(str(self.target.base_url)),
                "model": self.target.model,
                "name": self.name,
            }
        if self.target == BASELINE:
            return {"kind": "baseline", "name": self.name}
        module = getattr(self.target, "__module__", "") or ""
        return {
            "kind": "callable",
            "ref": f"{module}:{getattr(self.target, '__qualname__', '')}",
            "name": self.name,
        }

    def answer(self, lab: Lab, corpus: Corpus, cases: Sequence[str], store: Path | None) -> Lab:
        """Ask the system ``cases`` (those it has not answered); return the lab with answers."""
        if not cases:
            return lab
        if isinstance(self.target, LLMClient):
            return run_suite(lab, self.target, [self.name], cases=cases, progress=False)
        if self.target == BASELINE:
            return retrieval_baseline(lab, corpus, name=self.name, cases=cases)
        cache = None if store is None else store.with_name(store.stem + ".answers.duckdb")
        assert callable(self.target)
        return answer_with(lab, self.target, self.name, cache=cache, cases=cases, progress=False)


def from_spec(spec: dict[str, str], ref: str | None = None) -> System | None:
    """Find the stored system again, for the command line.

    The baseline; the endpoint (its key from the environment); or ``ref`` (else the stored
    ``module:function``) imported.
    """
    import importlib  # noqa: PLC0415

    kind = spec.get("kind")
    if ref == BASELINE or (ref is None and kind == "baseline"):
        return System(BASELINE, spec.get("name") or BASELINE)
    if ref is None and kind == "endpoint":
        return System(LLMClient(spec["base_url"], spec["model"]), spec.get("name") or spec["model"])
    target = ref or (spec.get("ref") if kind == "callable" else None)
    if not target:
        return None
    module, _, attr = target.partition(":")
    if not module or not attr or module == "__main__":
        msg = (
            f"cannot import the system {target!r}: expected 'module:function' of an importable "
            "module (a function defined in a notebook cannot be found again; pass --system)"
        )
        raise ValueError(msg)
    found: object = importlib.import_module(module)
    for part in attr.split("."):
        found = getattr(found, part)
    return System.of(found, spec.get("name"))
