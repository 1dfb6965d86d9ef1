"""The card's components: each asks the judge again in one way judges fail.

Each ``measure_*`` function takes the rows being built (:class:`CardRows`), the lab or its
sample and the judge, and adds its measures (an estimate, its interval, its light and bound)
and the answers that show them worst; a component that cannot be measured on the lab says
why and what would make it measurable. :func:`evalnb.judge_reliability.card.judge_card`
calls them in order; the adversarial one is in
:mod:`evalnb.judge_reliability.adversarial`.
"""

from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl

from evalnb.analysis.pairwise import pairwise
from evalnb.calibration.corrected import corrected_leaderboard
from evalnb.calibration.labels import human_verdicts, reviewer_agreement
from evalnb.evaluation.engine import evaluate
from evalnb.judge_reliability.lights import bound_text, traffic_light
from evalnb.judge_reliability.measures import (
    Measured,
    icc21,
    kappa_interval,
    length_slope,
    mean_difference,
    position_measures,
    repeat_kappa,
    wilson,
    within_item_sd,
)
from evalnb.judge_reliability.probes import (
    padded,
    with_preamble,
)
from evalnb.lab.core import LabCore
from evalnb.lab.verdicts import verdicts

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from evalnb.llm.client import LLMClient

__all__ = [
    "FAMILIES",
    "KEYS",
    "CardRows",
    "card_calls",
    "details_of",
    "in_memory",
    "measure_consequence",
    "measure_contract",
    "measure_position",
    "measure_self_preference",
    "measure_stability",
    "measure_validity",
    "measure_verbosity",
    "model_family",
    "probe_lab",
    "score_with",
    "scored_rows",
]

FAMILIES = {
    "openai": r"gpt|o1|o3|o4|davinci|openai",
    "anthropic": r"claude",
    "google": r"gemini|gemma|palm|bison",
    "meta": r"llama",
    "mistral": r"mistral|mixtral|codestral",
    "qwen": r"qwen",
    "deepseek": r"deepseek",
    "microsoft": r"\bphi",
    "huggingface": r"smollm",
}
KEYS = ["case_id", "model", "sample"]


def model_family(name: str, families: Mapping[str, str] | None = None) -> str | None:
    """Return the family a model name belongs to (``families`` first), or None."""
    if families and name in families:
        return families[name]
    lowered = name.lower()
    for family, pattern in FAMILIES.items():
        if re.search(pattern, lowered):
            return family
    return None


@dataclass
class CardRows:
    """The rows as they are added, and the scale the metric's units are read on."""

    scale: float
    rows: list[dict[str, Any]] = field(default_factory=list)
    examples: dict[str, pl.DataFrame] = field(default_factory=dict)

    def add(self, component: str, measure: str, e: Measured, note: str = "") -> None:
        """Add one measure: its estimate and interval, lit against its bound."""

        def clean(v: float) -> float | None:
            return float(v) if math.isfinite(v) else None

        self.rows.append(
            {
                "component": component,
                "measure": measure,
                "estimate": clean(e.estimate),
                "ci_low": clean(e.low),
                "ci_high": clean(e.high),
                "n": e.n,
                "flag": traffic_light(measure, e, self.scale),
                "bound": bound_text(measure, self.scale),
                "note": note,
            }
        )

    def add_bounded(
        self,
        component: str,
        measure: str,
        e: Measured,
        bounds: tuple[float, float],
        note: str = "",
    ) -> None:
        """Add a measure lit against ``bounds`` given here (a bound the user chose: a target)."""
        self.add(component, measure, e, note)
        low, high = bounds
        row = self.rows[-1]
        if row["estimate"] is None:
            row["flag"] = "grey"
        elif row["ci_high"] is not None and (row["ci_high"] < low or row["ci_low"] > high):
            row["flag"] = "red"
        elif not low <= row["estimate"] <= high:
            row["flag"] = "amber"
        else:
            row["flag"] = "green"
        row["bound"] = f"{low:g} to {high:g}"

    def unmeasured(self, component: str, why: str) -> None:
        """Add a grey row: ``component`` could not be measured here, and ``why``."""
        self.rows.append(
            {
                "component": component,
                "measure": "not measured",
                "estimate": None,
                "ci_low": None,
                "ci_high": None,
                "n": 0,
                "flag": "grey",
                "bound": None,
                "note": why,
            }
        )


def scored_rows(lab: LabCore, evaluator: str, metric: str) -> pl.DataFrame:
    """Each scored row's value, verdict and detail."""
    rows = lab.metric_scores(evaluator, metric)
    v = verdicts(rows, lab.metrics, lab.thresholds).select(*KEYS, "passed")
    return rows.select(*KEYS, "value", "detail").join(v, on=KEYS, how="left")


def score_with(lab: LabCore, evaluator: str, metric: str, judge: LLMClient) -> pl.DataFrame:
    """Score ``lab`` with the judge; return each row's value, verdict and detail."""
    return scored_rows(evaluate(lab, [evaluator], judge=judge, progress=False), evaluator, metric)


def in_memory(lab: LabCore, outputs: pl.DataFrame) -> LabCore:
    """Return a lab of these answers only, in memory: the card never writes to the user's store."""
    return LabCore(
        {
            "cases": lab.cases.filter(
                pl.col("case_id").is_in(outputs["case_id"].unique().implode())
            ),
            "outputs": outputs,
            "metrics": lab.metrics,
            "thresholds": lab.thresholds,
            "info": lab.table("info"),
            "media": lab.table("media"),  # the judge sees what the user's lab shows it
        }
    )


def details_of(base: pl.DataFrame) -> pl.DataFrame:
    """Return each row's judge detail (contract, salvages, cost …) as columns."""
    return base.with_columns(
        d=pl.col("detail").str.json_decode(
            pl.Struct(
                {
                    "parse_failed": pl.Boolean,
                    "judge_error": pl.Boolean,
                    "reason": pl.String,
                    "contract": pl.String,
                    "cost": pl.Float64,
                }
            )
        )
    ).unnest("d")


def measure_contract(card: CardRows, base: pl.DataFrame) -> None:
    """Add the contract component: the share of replies read, failures by reason."""
    d = details_of(base)
    asked = d.filter(pl.col("contract").is_not_null() | pl.col("parse_failed").is_not_null())
    failed = asked.filter(pl.col("parse_failed").fill_null(value=False))
    contracts = ", ".join(sorted(set(asked["contract"].drop_nulls().to_list()))) or "none"
    reasons = (
        failed.group_by("reason").len().sort("len", descending=True).head(3).iter_rows()
        if failed.height
        else []
    )
    shapes = "; ".join(f"{c}× {str(r)[:60]}" for r, c in reasons)
    note = f"contract {contracts}; {asked.height} judged of {base.height}" + (
        f"; failures: {shapes}" if shapes else ""
    )
    card.add("contract", "parse success", wilson(asked.height - failed.height, asked.height), note)
    if failed.height:
        card.examples["parse success"] = failed.select(*KEYS, "reason")


def measure_stability(
    card: CardRows,
    sub: LabCore,
    evaluator: str,
    metric: str,
    judge: LLMClient,
    repeats: int,
) -> None:
    """Add the stability component: ``repeats`` fresh runs, κ, ICC(2,1) and σᵢ."""
    if repeats < 2:
        card.unmeasured("stability", "repeats=2 or more fresh runs are needed")
        return
    fresh = judge.with_settings(cache=False)
    runs = [score_with(sub, evaluator, metric, fresh).sort(KEYS) for _ in range(repeats)]
    joined = runs[0].select(*KEYS, v0="value", p0="passed")
    for i, r in enumerate(runs[1:], start=1):
        joined = joined.join(
            r.select(*KEYS, pl.col("value").alias(f"v{i}"), pl.col("passed").alias(f"p{i}")),
            on=KEYS,
        )
    values = joined.select([f"v{i}" for i in range(repeats)]).drop_nulls()
    passes = joined.select([f"p{i}" for i in range(repeats)]).drop_nulls()
    note = f"{repeats} fresh runs, the reply cache bypassed"
    if passes.height >= 2:
        retest = repeat_kappa(passes.to_numpy())
        constant = passes.to_numpy().all() or not passes.to_numpy().any()
        card.add(
            "stability",
            "test-retest kappa",
            retest,
            note + (_CONSTANT if constant and not math.isfinite(retest.estimate) else ""),
        )
    matrix = values.to_numpy()
    if len(np.unique(matrix)) > 2:  # scores, not verdicts
        card.add("stability", "ICC(2,1)", icc21(matrix), note)
    card.add(
        "stability", "within-item SD", within_item_sd(matrix), "Miller's σᵢ, in the metric's units"
    )
    spread = joined.with_columns(
        spread=pl.max_horizontal(pl.col("^v\\d+$")) - pl.min_horizontal(pl.col("^v\\d+$"))
    )
    card.examples["within-item SD"] = (
        spread.filter(pl.col("spread") > 0).sort("spread", descending=True).head(10)
    )


def measure_position(card: CardRows, lab: LabCore, sample: pl.DataFrame, judge: LLMClient) -> None:
    """Add the position component: two models' answers asked in both orders."""
    models = lab.models
    if len(models) < 2:
        card.unmeasured("position", "needs two models' answers to the same cases")
        return
    a, b = models[0], models[1]
    cases = sample["case_id"].unique()
    pair_lab = in_memory(
        lab,
        lab.outputs.filter(
            pl.col("case_id").is_in(cases.implode()) & pl.col("model").is_in([a, b])
        ),
    )
    try:
        pairs = pairwise(pair_lab, a, b, judge)
    except ValueError as err:
        card.unmeasured("position", f"{err}")
        return
    read = pairs.filter(~pl.col("parse_failed"))
    if read.is_empty():
        card.unmeasured("position", "no pair's replies could be read in both orders")
        return
    measures = position_measures(read["winner_a_first"].to_list(), read["winner_b_first"].to_list())
    note = f"{a} vs {b}, each pair in both orders"
    card.add("position", "flip rate", measures["flip_rate"], note)
    card.add("position", "first-position rate", measures["first_position_rate"], "0.5: no lean")
    card.add(
        "position",
        "position lean of flips",
        measures["position_lean"],
        "+1: first shown, −1: second",
    )
    card.examples["flip rate"] = read.filter(~pl.col("consistent")).select(
        "case_id",
        model=pl.lit(a),
        sample=pl.lit(0),
        other=pl.lit(b),
        winner_a_first="winner_a_first",
        winner_b_first="winner_b_first",
    )


def probe_lab(sub: LabCore, kinds: Mapping[str, Callable[[str], str]]) -> LabCore:
    """Return the sampled answers again, one copy per probe kind, told apart by the model name."""
    answers = sub.outputs["actual"].fill_null("").to_list()
    copies = [
        sub.outputs.with_columns(
            actual=pl.Series([make(a) for a in answers], dtype=pl.String),
            model=pl.concat_str(pl.col("model"), pl.lit(f" ⟨{kind}⟩")),
        )
        for kind, make in kinds.items()
    ]
    return in_memory(sub, pl.concat(copies))


def measure_verbosity(
    card: CardRows,
    sub: LabCore,
    base: pl.DataFrame,
    evaluator: str,
    metric: str,
    judge: LLMClient,
    sample: pl.DataFrame,
) -> None:
    """Add the verbosity component: padded answers' score change, score per length."""
    kinds = {"own sentences again": padded, "a courteous preamble": with_preamble}
    probed = score_with(probe_lab(sub, kinds), evaluator, metric, judge)
    originals = sub.outputs.select(*KEYS, original=pl.col("actual").fill_null(""))
    for kind, make in kinds.items():
        part = probed.filter(pl.col("model").str.ends_with(f" ⟨{kind}⟩")).with_columns(
            pl.col("model").str.strip_suffix(f" ⟨{kind}⟩")
        )
        both = base.select(*KEYS, before="value").join(part.select(*KEYS, after="value"), on=KEYS)
        card.add(
            "verbosity",
            f"padding: {kind}",
            mean_difference(both["after"].to_numpy(), both["before"].to_numpy()),
            "score change, in the metric's units",
        )
        card.examples[f"padding: {kind}"] = (
            both.with_columns(change=pl.col("after") - pl.col("before"))
            # Only rows scored both times: an unscored row is no example of anything.
            .filter(pl.col("change").is_not_null() & pl.col("change").is_not_nan())
            .sort("change", descending=True)
            .head(10)
            .join(originals, on=KEYS, how="left")
            .with_columns(original_value="before", probe_value="after")
        )
        worst = card.examples[f"padding: {kind}"]
        card.examples[f"padding: {kind}"] = worst.with_columns(
            probe=pl.Series([make(a) for a in worst["original"]], dtype=pl.String)
        )
    words = sample.select(*KEYS, words=pl.col("actual").str.count_matches(r"\S+"))
    lengths = base.join(words, on=KEYS)
    card.add(
        "verbosity",
        "score per 100 words",
        length_slope(lengths["value"].to_numpy(), lengths["words"].to_numpy()),
        # No light: on a lab where the longer answers are the better ones a fair judge has
        # a slope too. The padding rows, same content longer, are the causal test.
        "slope on the sampled answers; longer may be better here, the padding rows tell",
    )


def measure_self_preference(
    card: CardRows,
    sub: LabCore,
    base: pl.DataFrame,
    evaluator: str,
    metric: str,
    judge: LLMClient,
    cross_judge: LLMClient | None,
    families: Mapping[str, str] | None,
) -> None:
    """Add self-preference: this judge against ``cross_judge`` on its own family's rows."""
    if cross_judge is None:
        card.unmeasured(
            "self-preference", "pass cross_judge= another family's judge to compare with"
        )
        return
    own = model_family(judge.model, families)
    if own is None:
        card.unmeasured(
            "self-preference",
            f"the judge {judge.model!r} has no known family: pass families={{model: family}}",
        )
        return
    other = score_with(sub, evaluator, metric, cross_judge)
    gap = (
        base.select(*KEYS, mine="value")
        .join(other.select(*KEYS, theirs="value"), on=KEYS)
        .drop_nulls()
    )
    mine = [m for m in gap["model"].unique().to_list() if model_family(m, families) == own]
    same = gap.filter(pl.col("model").is_in(mine))
    rest = gap.join(same, on=KEYS, how="anti")
    if same.height < 2 or rest.height < 2:
        card.unmeasured(
            "self-preference",
            f"needs answers of the {own} family and of others; found {same.height} and {rest.height}",
        )
        return
    d_same = (same["mine"] - same["theirs"]).to_numpy()
    d_rest = (rest["mine"] - rest["theirs"]).to_numpy()
    diff = float(d_same.mean() - d_rest.mean())
    se = math.sqrt(d_same.var(ddof=1) / d_same.size + d_rest.var(ddof=1) / d_rest.size)
    card.add(
        "self-preference",
        "self-preference gap",
        Measured(diff, diff - 1.96 * se, diff + 1.96 * se, gap.height),
        f"{own} answers against others, this judge − {cross_judge.model}",
    )


_CONSTANT = (
    "; one verdict on every item, on both sides: κ is undefined (a constant rater agrees by "
    "default, which says nothing of its judgement)"
)


def measure_validity(card: CardRows, lab: LabCore, evaluator: str, metric: str) -> None:
    """Add the validity component: κ with the lab's human labels, leniency."""
    human = human_verdicts(lab.labels, evaluator, metric).drop_nulls("human_pass")
    if human.is_empty():
        card.unmeasured(
            "validity",
            f"label 40 rows of {evaluator}.{metric} (evalnb.labeler) to measure agreement with humans",
        )
        return
    scores = lab.metric_scores(evaluator, metric)
    if scores.is_empty():
        card.unmeasured(
            "validity",
            f"the lab has {human.height} labels but no {evaluator}.{metric} scores to hold them "
            "against: evaluate it with this judge first",
        )
        return
    judged = verdicts(scores, lab.metrics, lab.thresholds).select(*KEYS, "passed")
    both = human.select(*KEYS, "human_pass").join(judged, on=KEYS).drop_nulls()
    if both.height < 10:
        card.unmeasured(
            "validity",
            f"{both.height} labelled rows carry this judge's verdict: label at least 10 (40 for a useful interval)",
        )
        return
    h, j = both["human_pass"].to_numpy(), both["passed"].to_numpy()
    tp, fp = int((h & j).sum()), int((~h & j).sum())
    fn, tn = int((h & ~j).sum()), int((~h & ~j).sum())
    agreement = kappa_interval(h, j)
    card.add(
        "validity",
        "kappa with humans",
        agreement,
        f"confusion: {tp} both pass, {fp} judge-only pass, {fn} human-only pass, {tn} both fail"
        + (_CONSTANT if not math.isfinite(agreement.estimate) else ""),
    )
    card.add(
        "validity",
        "leniency (false-pass rate)",
        wilson(fp, fp + tn),
        "of the answers humans failed, the share the judge passed",
    )
    peers = reviewer_agreement(lab.labels, evaluator, metric)
    if peers.height and "kappa" in peers.columns and peers["kappa"].drop_nulls().len():
        k = float(np.mean(peers["kappa"].drop_nulls().to_numpy()))
        card.add(
            "validity",
            "reviewers' own kappa",
            Measured(k, math.nan, math.nan, peers.height),
            "the ceiling a judge can be held to",
        )
    card.examples["kappa with humans"] = both.filter(pl.col("human_pass") != pl.col("passed"))


def measure_consequence(
    card: CardRows,
    lab: LabCore,
    base: pl.DataFrame,
    evaluator: str,
    metric: str,
    started: float,
    calls: int,
    *,
    assume_random: bool = False,
) -> None:
    """Add the consequence component: corrected pass rates, noise, time and cost."""
    try:
        board = corrected_leaderboard(lab, evaluator, metric, assume_random=assume_random)
    except KeyError:
        board = pl.DataFrame()
    corrected = board.filter(pl.col("corrected").is_not_null()) if board.height else board
    if corrected.height:
        for r in corrected.iter_rows(named=True):
            card.add(
                "consequence",
                f"corrected pass rate: {r['model']}",
                Measured(r["corrected"], r["ci_low"], r["ci_high"], r["labels_used"]),
                f"the metric says {r['automatic']:.3f}",
            )
    else:
        card.unmeasured(
            "consequence",
            "label a random sample (evalnb.labeler(strategy='random')) for the pass rate humans would give",
        )
    sd_rows = [
        r for r in card.rows if r["measure"] == "within-item SD" and r["estimate"] is not None
    ]
    values = base["value"].drop_nulls().to_numpy()
    if sd_rows and values.size > 2:
        noise = sd_rows[0]["estimate"] ** 2
        total = float(np.var(values, ddof=1))
        factor = math.sqrt(total / (total - noise)) if total > noise else math.inf
        card.add(
            "consequence",
            "interval widening from judge noise",
            Measured(factor, math.nan, math.nan, values.size),
            "a comparison's interval against a noise-free judge's",
        )
    cost = details_of(base)["cost"].drop_nulls()
    seconds = time.monotonic() - started
    card.add(
        "consequence",
        "seconds per verdict",
        Measured(seconds / max(calls, 1), math.nan, math.nan, calls),
        f"{calls} calls for this card",
    )
    if cost.len():
        card.add(
            "consequence",
            "cost per verdict",
            Measured(float(np.mean(cost.to_numpy())), math.nan, math.nan, cost.len()),
            "US dollars, at the judge client's prices",
        )


def card_calls(judge: LLMClient) -> int:
    """Return the judge's requests so far, less its format probe's and its retries.

    The probe is made once per endpoint and cache file (in one run and not the next) and a
    retry once per dropped connection: neither is the card's, and without them a seed gives
    the same count again.
    """
    stats = judge.stats
    return stats.calls - stats.probe_calls - stats.retries
