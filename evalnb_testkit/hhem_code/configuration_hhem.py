"""Config of a model shaped like Vectara's HHEM-2.1-open, written for the tests.

HHEM ships its weights with its own code (loaded with ``trust_remote_code``) and no
tokenizer: its config names the model it was fine-tuned from (``foundation``) and the prompt
that joins premise and hypothesis.
"""

from __future__ import annotations

from typing import Any

from transformers import PretrainedConfig


class HHEMTestConfig(PretrainedConfig):
    """Foundation model name and prompt template."""

    model_type = "hhem_test"

    def __init__(
        self,
        foundation: str = "google/flan-t5-base",
        prompt: str = "<pad> premise: {text1} hypothesis: {text2}",
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.foundation = foundation
        self.prompt = prompt
