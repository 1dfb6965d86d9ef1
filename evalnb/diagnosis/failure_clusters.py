"""Failure clustering (seed 003 "Failure clustering"): groups of failed test cases.

The groups are for a human to name the weakness behind each. Failed rows (the metric's
verdict at the threshold in force) are described by the embedding of question and answer
(PCA-reduced) and by which metrics they failed. An unsupervised random forest defines
proximity as the share of trees in which two rows end in the same leaf (see
:func:`rf_proximity`); average-linkage clustering of 1 − proximity, with the number of clusters chosen by
silhouette, gives the groups. Too few failures: nothing to cluster, and that is a success.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from evalnb.diagnosis.topics import class_tfidf
from evalnb.lab.offline_charts import offline
from evalnb.lab.verdicts import verdicts
from evalnb.models.encoder import get_encoder
from evalnb.models.reduce import fit_transform, umap_model

if TYPE_CHECKING:
    import altair as alt

    from evalnb.lab.core import LabCore

__all__ = ["FailureClusters", "failure_clusters", "rf_proximity"]

_KEY = ["case_id", "model", "sample"]


@dataclass(frozen=True)
class FailureClusters:
    """Clusters of failed rows; ``message`` says why there are none when there are none."""

    rows: pl.DataFrame
    """One row per failed (case, model, sample) with its ``cluster`` and context."""
    clusters: pl.DataFrame
    """Per cluster: size, keywords, shares of topics / question types / models / metrics,
    and representative cases (the rows closest to all others in the cluster)."""
    silhouette: float | None = None
    message: str | None = None
    projection: np.ndarray = field(default_factory=lambda: np.zeros((0, 2)), repr=False)

    def chart(self) -> alt.Chart:
        """Scatter of the failed rows in two dimensions, coloured by cluster (Altair)."""
        import altair as alt  # noqa: PLC0415

        data = self.rows.select(
            "cluster", "topic", "question_type", "model", "prompt"
        ).with_columns(
            x=pl.Series(self.projection[:, 0] if len(self.projection) else []),
            y=pl.Series(self.projection[:, 1] if len(self.projection) else []),
            cluster=pl.col("cluster").cast(pl.String),
        )
        chart: alt.Chart = (
            alt.Chart(alt.Data(values=data.to_dicts()))  # type: ignore[no-untyped-call]
            .mark_circle(size=60, opacity=0.8)
            .encode(
                x=alt.X("x:Q", axis=None),
                y=alt.Y("y:Q", axis=None),
                color="cluster:N",
                tooltip=["cluster:N", "topic:N", "question_type:N", "model:N", "prompt:N"],
            )
            .properties(width=420, height=320, title="Failed test cases by cluster")
        )
        return offline(chart)


def rf_proximity(x: np.ndarray, *, n_trees: int = 300, seed: int = 0) -> np.ndarray:
    """Share of trees in which two rows of ``x`` land in the same leaf.

    The forest is unsupervised and totally random (scikit-learn's RandomTreesEmbedding),
    grown to a depth of about log2(n / 8) (3 to 8), so a leaf holds a handful of rows.
    Breiman's real-versus-shuffled contrast forest was tried first: it keeps splitting a
    dense group of alike failures to isolate it from the shuffled copy, and a planted
    weakness came out in up to eight pieces; random splits rarely fall inside such a group.
    """
    from sklearn.ensemble import RandomTreesEmbedding  # noqa: PLC0415

    depth = int(np.clip(np.ceil(np.log2(max(len(x), 2) / 8)), 3, 8))
    leaves = (
        RandomTreesEmbedding(n_estimators=n_trees, max_depth=depth, random_state=seed)
        .fit(x)
        .apply(x)
    )
    prox = np.zeros((len(x), len(x)))
    for t in range(leaves.shape[1]):
        prox += leaves[:, t][:, None] == leaves[:, t][None, :]
    return np.asarray(prox / leaves.shape[1])


def _shares(values: list[str | None]) -> list[str]:
    counts = Counter(v if v is not None else "(none)" for v in values)
    total = sum(counts.values())
    return [f"{k}: {c / total:.0%}" for k, c in counts.most_common(3)]


def failure_clusters(
    lab: LabCore,
    evaluator: str | None = None,
    metric: str | None = None,
    *,
    min_failures: int = 10,
    max_clusters: int = 8,
    max_rows: int = 2000,
    n_trees: int = 300,
    model: str = "all-MiniLM-L6-v2",
    seed: int = 0,
) -> FailureClusters:
    """Cluster the failed rows of one metric (or of every evaluator's primary metric)."""
    from sklearn.cluster import AgglomerativeClustering  # noqa: PLC0415
    from sklearn.decomposition import PCA  # noqa: PLC0415
    from sklearn.metrics import silhouette_score  # noqa: PLC0415

    v = verdicts(lab.scores, lab.metrics, lab.thresholds)
    if evaluator is not None:
        v = v.filter(pl.col("evaluator") == evaluator)
        v = v.filter(pl.col("metric") == metric) if metric else v.filter(pl.col("primary"))
    else:
        v = v.filter(pl.col("primary"))
    failed = v.filter(pl.col("passed") == False)  # noqa: E712 - null (unscored) is not a failure
    scores = failed.with_columns(key=pl.col("evaluator") + "/" + pl.col("metric")).pivot(
        on="key", index=_KEY, values="value", aggregate_function="first"
    )
    metric_cols = [c for c in scores.columns if c not in _KEY]
    rows = (
        (
            scores.join(
                lab.cases.select("case_id", "prompt", "topic", "question_type"),
                on="case_id",
                how="left",
            )
            .join(lab.outputs.select(*_KEY, "actual"), on=_KEY, how="left")
            .with_columns(
                failed_metrics=pl.concat_list(
                    [pl.when(pl.col(c).is_not_null()).then(pl.lit(c)) for c in metric_cols]
                ).list.drop_nulls()
            )
            .sort(_KEY)
        )
        if metric_cols
        else pl.DataFrame(schema=dict.fromkeys(_KEY, pl.String))
    )
    empty = pl.DataFrame(schema={"cluster": pl.Int64, "size": pl.Int64})
    if rows.height < min_failures:
        msg = (
            f"{rows.height} failed row(s), fewer than min_failures={min_failures}: nothing to "
            "cluster (as H2O does, this counts as success)"
        )
        return FailureClusters(rows, empty, message=msg)
    if rows.height > max_rows:  # proximity is n²: cluster a seeded sample
        rows = rows.sample(max_rows, seed=seed).sort(_KEY)
    texts = [f"{p or ''}\n{a or ''}" for p, a in rows.select("prompt", "actual").iter_rows()]
    emb = get_encoder(model).encode(texts)
    # PCA, not UMAP: near-duplicate failures (one weakness hit many times) must stay
    # together, and UMAP's neighbour graph spreads such a tight group apart.
    reduced = PCA(n_components=min(10, len(texts) - 1), random_state=seed).fit_transform(emb)
    # Which metrics failed (not by how much: within the failing range the amount says
    # little about the cause, and with one metric it would only split alike rows).
    metric_x = rows.select(pl.col(metric_cols).is_not_null().cast(pl.Float64)).to_numpy()
    x = np.column_stack([reduced, metric_x])
    prox = rf_proximity(x, n_trees=n_trees, seed=seed)
    dist = 1.0 - prox
    np.fill_diagonal(dist, 0.0)
    best: tuple[float, np.ndarray] | None = None
    for k in range(2, min(max_clusters, len(texts) - 1) + 1):
        labels = AgglomerativeClustering(
            n_clusters=k, metric="precomputed", linkage="average"
        ).fit_predict(dist)
        sil = float(silhouette_score(dist, labels, metric="precomputed"))
        if best is None or sil > best[0]:
            best = (sil, labels)
    assert best is not None  # min_failures ≥ 4 guarantees one k
    sil, raw = best
    order = [c for c, _ in Counter(raw.tolist()).most_common()]
    labels = np.array([order.index(c) for c in raw.tolist()])
    rows = rows.with_columns(cluster=pl.Series(labels, dtype=pl.Int64))
    words = class_tfidf(rows["prompt"].fill_null("").to_list(), labels, 6)
    summary = []
    for c in range(len(order)):
        members = np.flatnonzero(labels == c)
        part = rows[members]
        centrality = prox[np.ix_(members, members)].mean(axis=1)
        reps = part[np.argsort(-centrality)[:3]]
        summary.append(
            {
                "cluster": c,
                "size": len(members),
                "keywords": words.get(c, []),
                "topics": _shares(part["topic"].to_list()),
                "question_types": _shares(part["question_type"].to_list()),
                "models": _shares(part["model"].to_list()),
                "failed_metrics": _shares(
                    [m for ms in part["failed_metrics"].to_list() for m in ms]
                ),
                "representative_cases": reps["case_id"].to_list(),
                "representative_prompts": reps["prompt"].to_list(),
            }
        )
    flat = fit_transform(
        umap_model(len(texts), n_neighbors=15, n_components=2, min_dist=0.1, seed=seed), x
    )
    return FailureClusters(rows, pl.DataFrame(summary), silhouette=sil, projection=flat)
