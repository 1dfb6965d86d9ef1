"""The Lab's human-calibration methods: labels, sampling, recalibration, exports.

A mixin like :mod:`evalnb.analysis.derived`; the logic lives in ``_labels``, ``_calibrate`` and
``_guardrail``. Every label is appended to the lab's store in its own transaction before
the call returns, so a crash loses nothing that was acknowledged.
"""

from __future__ import annotations

import datetime as dt
import json
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from evalnb.calibration.recalibrate import Calibration, calibrate, sample_rows
from evalnb.calibration.guardrail import corpus_patch, corpus_patch_markdown, guardrail_config
from evalnb.calibration.labels import disagreements, label_row, reviewer_agreement
from evalnb.lab.schema import SCHEMAS

if TYPE_CHECKING:
    from evalnb.lab.core import Lab

__all__ = ["Labelling"]


class Labelling:
    """Methods mixed into :class:`evalnb.Lab`."""

    def add_label(self: Lab, case_id: str, model: str, evaluator: str, metric: str,  # type: ignore[misc]
                  verdict: str | None, *, reviewer: str, note: str | None = None,
                  sample: int = 0, batch_id: str | None = None) -> pl.DataFrame:  # fmt: skip
        """Record a human verdict (``"pass"``/``"fail"``; None retracts the last one).

        Appended to the ``labels`` table — and to the lab's store, committed, before this
        returns — never updated in place. Returns the new row.
        """
        item = {"case_id": case_id, "model": model, "sample": sample, "evaluator": evaluator,
                "metric": metric}  # fmt: skip
        row = label_row(item, verdict, reviewer=reviewer, note=note, batch_id=batch_id)
        self._append("labels", row)
        return row

    def calibration_sample(self: Lab, evaluator: str, metric: str, *, n: int = 20,  # type: ignore[misc]
                           strategy: str = "active", seed: int = 0) -> pl.DataFrame:  # fmt: skip
        """Draw up to ``n`` scored rows of one metric for a human to label (never a labelled one).

        ``strategy``: ``random``, ``stratified`` (one per score quantile bin) or ``active``
        (nearest the current pass/fail boundary — where a label teaches most). Seeded.
        Returns the rows with ``value``, ``passed`` (the metric's verdict now), prompt,
        expected answer, the model's answer and retrieved context.
        """
        rows = sample_rows(self, evaluator, metric, n, strategy, seed)
        spec = self.metric_spec(evaluator, metric)
        thr, higher = spec["threshold"], bool(spec["higher_is_better"])
        keys = ["case_id", "model", "sample"]
        return (
            rows.with_columns(
                threshold=pl.lit(thr, pl.Float64),
                passed=(pl.col("value") >= thr) if higher else (pl.col("value") <= thr),
            )
            .join(self.cases.select("case_id", "prompt", "expected"), on="case_id", how="left")
            .join(self.outputs.select(*keys, "actual", "context"), on=keys, how="left")
        )

    def recalibrate(self: Lab, evaluator: str, metric: str, *,  # type: ignore[misc]
                    criterion: str = "balanced_accuracy", apply: bool = True, n_boot: int = 1000,
                    seed: int = 0, target_width: float = 0.05) -> Calibration:  # fmt: skip
        """Fit the metric's threshold to the human verdicts, with bootstrap CIs and κ.

        ``criterion``: ``balanced_accuracy`` (default), ``accuracy``, ``f1`` or ``logistic``
        (where P(human pass | score) crosses 0.5). With ``apply`` the new threshold is
        stored as a ``calibrated`` version; problems, insights, the eye and reports follow.
        """
        result = calibrate(self, evaluator, metric, criterion=criterion, n_boot=n_boot,
                           seed=seed, target_width=target_width)  # fmt: skip
        if apply:
            row = pl.DataFrame(
                [{"evaluator": evaluator, "metric": metric, "threshold": result.threshold,
                  "source": "calibrated", "n_labels": result.n_labels,
                  "agreement": result.agreement, "ci_low": result.ci[0], "ci_high": result.ci[1],
                  "created_at": dt.datetime.now(dt.UTC)}],
                schema=SCHEMAS["thresholds"],
            )  # fmt: skip
            self._append("thresholds", row)
        return result

    def reviewer_agreement(self: Lab, evaluator: str, metric: str) -> pl.DataFrame:  # type: ignore[misc]
        """Cohen's κ between every two reviewers on the items both labelled."""
        return reviewer_agreement(self.labels, evaluator, metric)

    def label_disagreements(self: Lab, evaluator: str, metric: str) -> pl.DataFrame:  # type: ignore[misc]
        """Items the reviewers disagree on, with each verdict and note."""
        return disagreements(self.labels, evaluator, metric)

    def judge_report(self: Lab) -> pl.DataFrame:  # type: ignore[misc]
        """Per judge evaluator and model: parse failures, failed calls, tokens, cost."""
        from evalnb.llm.pairwise import judge_report  # noqa: PLC0415

        return judge_report(self)

    def judge_agreement(self: Lab, evaluator: str, metric: str) -> dict[str, float | int]:  # type: ignore[misc]
        """Cohen's κ between a judge metric's verdicts and the humans' labels of it."""
        from evalnb.llm.pairwise import judge_agreement  # noqa: PLC0415

        return judge_agreement(self, evaluator, metric)

    def guardrail_config(self: Lab, path: str | Path | None = None, *,  # type: ignore[misc]
                         include_uncalibrated: bool = False) -> dict[str, Any]:  # fmt: skip
        """Return the guardrail configuration (calibrated thresholds); write it to ``path``."""
        config = guardrail_config(self, include_uncalibrated=include_uncalibrated)
        if path is not None:
            Path(path).write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
        return config

    def corpus_patch(self: Lab, markdown: str | Path | None = None,  # type: ignore[misc]
                     json_path: str | Path | None = None) -> pl.DataFrame:  # fmt: skip
        """Failed-by-metric answers the humans passed (FAQ style); write Markdown/JSON when asked."""
        patch = corpus_patch(self)
        if markdown is not None:
            Path(markdown).write_text(corpus_patch_markdown(patch), encoding="utf-8")
        if json_path is not None:
            Path(json_path).write_text(
                json.dumps(patch.to_dicts(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
            )
        return patch


def new_batch_id() -> str:
    """Return a fresh id for one labelling batch."""
    return uuid.uuid4().hex[:12]
