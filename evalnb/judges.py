"""LLM judges in one door: the client, the local judge, the card, costs and their knobs.

``from evalnb.judges import LLMClient, judge_card, BOUNDS`` instead of the paths the parts
live at. The same objects as there (nothing is wrapped): the client for any
OpenAI-compatible endpoint and its format contract, the local llama.cpp judge, the tolerant
reader of replies, cascades of judges calibrated on reviewers' labels, the judge reliability card with the bounds that light it, pairwise
comparison with position swap, and the cost estimate with its price table.
"""

from __future__ import annotations

from evalnb.analysis.estimate import PRICES, Estimate, estimate
from evalnb.analysis.pairwise import pairwise
from evalnb.evaluation.families.judges.lmms_judges import rubric_judge
from evalnb.judge_reliability.card import JudgeCard, judge_card
from evalnb.judge_reliability.cascade import Cascade, cascade
from evalnb.judge_reliability.cascade_report import cascade_report
from evalnb.judge_reliability.components import FAMILIES
from evalnb.judge_reliability.lights import BOUNDS
from evalnb.llm.budget import Budget
from evalnb.llm.client import ChatResult, EndpointUnreachable, LLMClient
from evalnb.llm.contract import Capabilities, ContractError
from evalnb.llm.local_judge import LocalJudgeError, local_judge
from evalnb.llm.reader import read_object, read_score, read_verdict

__all__ = [
    "BOUNDS",
    "FAMILIES",
    "PRICES",
    "Budget",
    "Capabilities",
    "Cascade",
    "ChatResult",
    "ContractError",
    "EndpointUnreachable",
    "Estimate",
    "JudgeCard",
    "LLMClient",
    "LocalJudgeError",
    "cascade",
    "cascade_report",
    "estimate",
    "judge_card",
    "local_judge",
    "pairwise",
    "read_object",
    "read_score",
    "read_verdict",
    "rubric_judge",
]
