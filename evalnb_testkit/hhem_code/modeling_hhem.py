"""A model shaped like Vectara's HHEM-2.1-open (a T5 token classifier with a prompt).

The test writes this file next to the weights, as HHEM's repository holds its code: the
loader must pass ``trust_remote_code``, and find the tokenizer through ``foundation``.
"""

from __future__ import annotations

from typing import Any

import torch
from transformers import AutoConfig, AutoTokenizer, PreTrainedModel, T5ForTokenClassification

# Relative, as code shipped with a model is imported from its own folder.
from .configuration_hhem import HHEMTestConfig  # noqa: TID252


class HHEMTestForSequenceClassification(PreTrainedModel):
    """P(consistent) of (premise, hypothesis) pairs, read at the first position."""

    config_class = HHEMTestConfig
    base_model_prefix = "hhem"

    def __init__(self, config: HHEMTestConfig) -> None:
        super().__init__(config)
        base = AutoConfig.from_pretrained(config.foundation, num_labels=2)
        self.t5 = T5ForTokenClassification(base)
        self.tokenizer = AutoTokenizer.from_pretrained(config.foundation)
        self.post_init()

    def forward(self, **inputs: Any) -> Any:
        """Token logits of the wrapped T5."""
        return self.t5(**inputs)

    def predict(self, pairs: list[tuple[str, str]]) -> torch.Tensor:
        """Score each (premise, hypothesis): the softmax of the first token's two logits."""
        texts = [self.config.prompt.format(text1=p, text2=h) for p, h in pairs]
        enc = self.tokenizer(texts, return_tensors="pt", padding=True).to(self.t5.device)
        with torch.no_grad():
            logits = self.t5(**enc).logits[:, 0, :]
        return torch.softmax(logits.float(), dim=-1)[:, 1]
