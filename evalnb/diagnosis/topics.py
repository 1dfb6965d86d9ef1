"""Topic modeling of test cases or corpus chunks (seed 003 "Topic modeling").

Embed (the shared encoder) → reduce (UMAP) → cluster with HDBSCAN and with k-means for a
range of k → keep the configuration with the best silhouette score (computed in the reduced
space, HDBSCAN's noise left out) → keywords per topic by class-based TF-IDF. Every step is
seeded, so a seed gives the same topics. The result can be renamed, merged and pruned, and
written to a lab's ``cases.topic``.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, TypeVar

import numpy as np
import polars as pl

from evalnb.lab.core import LabCore
from evalnb.models.encoder import get_encoder
from evalnb.models.reduce import fit_transform, umap_model

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["TopicModel", "class_tfidf", "topics"]

L = TypeVar("L", bound=LabCore)

_WORD = re.compile(r"[a-z][a-z0-9'-]+")
# Words that say nothing about a topic (English function words and question words).
_STOP = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "all",
        "also",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "him",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "me",
        "more",
        "most",
        "my",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "out",
        "over",
        "own",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "tell",
        "give",
        "explain",
        "describe",
        "please",
        "much",
        "many",
        "one",
        "two",
    ]
)
OUTLIER = -1


def class_tfidf(texts: Sequence[str], labels: np.ndarray, top_n: int) -> dict[int, list[str]]:
    """Top ``top_n`` words per label by c-TF-IDF.

    Each topic is one document (its texts joined); a word's weight is its frequency in the
    topic, normalised by the topic's length, times log(1 + A / f) with A the average number
    of words per topic and f the word's frequency over all topics — frequent in this topic,
    rare elsewhere.
    """
    per_topic: dict[int, Counter[str]] = {}
    for text, label in zip(texts, labels.tolist(), strict=True):
        if label == OUTLIER:
            continue
        words = [w for w in _WORD.findall(text.lower()) if w not in _STOP]
        per_topic.setdefault(int(label), Counter()).update(words)
    if not per_topic:
        return {}
    total: Counter[str] = Counter()
    for counts in per_topic.values():
        total.update(counts)
    average = sum(total.values()) / len(per_topic)
    out = {}
    for label, counts in per_topic.items():
        size = sum(counts.values()) or 1
        weight = {w: (c / size) * np.log1p(average / total[w]) for w, c in counts.items()}
        out[label] = [w for w, _ in sorted(weight.items(), key=lambda kv: (-kv[1], kv[0]))[:top_n]]
    return out


@dataclass(frozen=True)
class TopicModel:
    """Topics found in a set of texts; edit with :meth:`rename`, :meth:`merge`, :meth:`exclude`.

    Attributes
    ----------
    assignments
        One row per text: ``text``, ``topic_id`` (-1: outlier or excluded), ``topic``.
    topics
        One row per topic: ``topic_id``, ``topic`` (name), ``keywords``, ``size``.
    candidates
        Every configuration tried with its silhouette score; ``chosen`` marks the one kept.
    """

    assignments: pl.DataFrame
    topics: pl.DataFrame
    candidates: pl.DataFrame
    embeddings: np.ndarray = field(repr=False)
    reduced: np.ndarray = field(repr=False)

    def _with_names(self, names: dict[int, str | None]) -> TopicModel:
        topics = self.topics.with_columns(
            topic=pl.col("topic_id").replace_strict(
                names, default=pl.col("topic"), return_dtype=pl.String
            )
        ).filter(pl.col("topic").is_not_null())
        kept = set(topics["topic_id"].to_list())
        lookup = dict(topics.select("topic_id", "topic").iter_rows())
        assignments = self.assignments.with_columns(
            topic_id=pl.when(pl.col("topic_id").is_in(list(kept)))
            .then("topic_id")
            .otherwise(OUTLIER),
        ).with_columns(
            topic=pl.col("topic_id").replace_strict(lookup, default=None, return_dtype=pl.String)
        )
        return replace(self, topics=topics, assignments=assignments)

    def rename(self, topic_id: int, name: str) -> TopicModel:
        """Give topic ``topic_id`` a human name."""
        self._known(topic_id)
        return self._with_names({topic_id: name})

    def exclude(self, topic_id: int) -> TopicModel:
        """Drop a topic: its texts become outliers (no topic)."""
        self._known(topic_id)
        return self._with_names({topic_id: None})

    def merge(self, topic_ids: Sequence[int], name: str | None = None) -> TopicModel:
        """Merge topics into the first of ``topic_ids`` (keywords recomputed, sizes summed)."""
        for t in topic_ids:
            self._known(t)
        keep = topic_ids[0]
        assignments = self.assignments.with_columns(
            topic_id=pl.when(pl.col("topic_id").is_in(list(topic_ids)))
            .then(keep)
            .otherwise("topic_id")
        )
        labels = assignments["topic_id"].to_numpy()
        words = class_tfidf(assignments["text"].to_list(), labels, len(self.topics["keywords"][0]))
        merged_name = name or self.topics.filter(pl.col("topic_id") == keep)["topic"][0]
        topics = self.topics.filter(~pl.col("topic_id").is_in(list(topic_ids[1:]))).with_columns(
            size=pl.col("topic_id").replace_strict(
                Counter(labels.tolist()), default=0, return_dtype=pl.Int64
            ),
            keywords=pl.col("topic_id").replace_strict(
                dict(words), default=None, return_dtype=pl.List(pl.String)
            ),
        )
        model = replace(self, assignments=assignments, topics=topics)
        return model._with_names({keep: merged_name})

    def _known(self, topic_id: int) -> None:
        if topic_id not in set(self.topics["topic_id"].to_list()):
            msg = f"no topic {topic_id}; topics are {self.topics['topic_id'].to_list()}"
            raise KeyError(msg)

    def assign(
        self, texts: Sequence[str], encoder_model: str = "all-MiniLM-L6-v2"
    ) -> list[str | None]:
        """Topic of new texts: the topic whose texts' mean embedding is closest (cosine)."""
        ids = self.assignments["topic_id"].to_numpy()
        names = dict(self.topics.select("topic_id", "topic").iter_rows())
        keys = sorted(names)
        if not keys:
            return [None] * len(texts)
        centroids = np.stack([self.embeddings[ids == k].mean(axis=0) for k in keys])
        centroids /= np.linalg.norm(centroids, axis=1, keepdims=True)
        emb = get_encoder(encoder_model).encode(list(texts))
        emb = emb / np.maximum(np.linalg.norm(emb, axis=1, keepdims=True), 1e-12)
        return [names[keys[i]] for i in (emb @ centroids.T).argmax(axis=1)]

    def to_lab(self, lab: L, *, encoder_model: str = "all-MiniLM-L6-v2") -> L:
        """Write topics to ``lab``'s ``cases.topic`` (the store too, when the lab has one).

        Fitted on the cases' prompts: each case keeps its own topic (outliers get none).
        Fitted on other texts (corpus chunks): each prompt gets the nearest topic.
        """
        prompts = lab.cases["prompt"].fill_null("").to_list()
        if prompts == self.assignments["text"].to_list():
            topic = self.assignments["topic"]
        else:
            topic = pl.Series("topic", self.assign(prompts, encoder_model), dtype=pl.String)
        lab.replace_tables({"cases": lab.cases.with_columns(topic=topic)})
        return lab


def _texts_of(source: LabCore | Sequence[str], on: str) -> list[str]:
    if not isinstance(source, LabCore):
        return [str(t) for t in source]
    if on == "cases":
        return source.cases["prompt"].fill_null("").to_list()
    if on == "corpus":
        chunks = source.outputs["context"].explode().drop_nulls().unique(maintain_order=True)
        docs = source.cases["corpus"].explode().drop_nulls().unique(maintain_order=True)
        return pl.concat([chunks, docs]).unique(maintain_order=True).to_list()
    msg = (
        f"on must be 'cases' (the prompts) or 'corpus' (retrieved chunks and documents); got {on!r}"
    )
    raise ValueError(msg)


def topics(
    source: LabCore | Sequence[str],
    *,
    on: str = "cases",
    top_n_words: int = 8,
    min_topic_size: int = 5,
    umap_neighbors: int = 15,
    umap_components: int = 5,
    umap_min_dist: float = 0.0,
    hdbscan_min_cluster_size: int | None = None,
    hdbscan_min_samples: int | None = None,
    hdbscan_epsilon: float = 0.0,
    k_range: Sequence[int] | None = None,
    model: str = "all-MiniLM-L6-v2",
    seed: int = 0,
) -> TopicModel:
    """Find topics in texts, or in a lab's prompts (``on="cases"``) or corpus (``"corpus"``).

    Parameters are the seed's: keywords per topic, minimum topic size, UMAP neighbours /
    components / minimum distance, HDBSCAN minimum cluster size / minimum samples /
    epsilon; ``k_range`` are the k-means sizes tried (default 2 … 12, bounded by the number
    of texts over the minimum topic size). The configuration with the best silhouette wins.

    Examples
    --------
    >>> texts = [f"loan rate question {i}" for i in range(12)] + [
    ...     f"card fee question {i}" for i in range(12)]
    >>> tm = topics(texts, min_topic_size=4, seed=0)  # doctest: +SKIP
    >>> tm.topics["size"].sum()  # doctest: +SKIP
    24
    """
    from sklearn.cluster import HDBSCAN, KMeans  # noqa: PLC0415
    from sklearn.metrics import silhouette_score  # noqa: PLC0415

    texts = _texts_of(source, on)
    if len(texts) < 2 * min_topic_size:
        msg = (
            f"topic modeling needs at least {2 * min_topic_size} texts (twice min_topic_size="
            f"{min_topic_size}); got {len(texts)}. Lower min_topic_size or add texts"
        )
        raise ValueError(msg)
    emb = get_encoder(model).encode(texts)
    reduced = fit_transform(
        umap_model(
            len(texts),
            n_neighbors=umap_neighbors,
            n_components=umap_components,
            min_dist=umap_min_dist,
            seed=seed,
        ),
        emb,
    )
    tried: list[dict[str, object]] = []
    labelings: list[np.ndarray] = []

    def score(name: str, labels: np.ndarray) -> None:
        inside = labels != OUTLIER
        k = len(set(labels[inside].tolist()))
        sil = (
            float(silhouette_score(reduced[inside], labels[inside], random_state=seed))
            if 2 <= k < inside.sum()
            else float("nan")
        )
        tried.append(
            {"config": name, "n_topics": k, "outliers": int((~inside).sum()), "silhouette": sil}
        )
        labelings.append(labels)

    hdb = HDBSCAN(
        min_cluster_size=hdbscan_min_cluster_size or min_topic_size,
        min_samples=hdbscan_min_samples,
        cluster_selection_epsilon=hdbscan_epsilon,
        copy=True,
    )
    score(
        f"hdbscan(min_cluster_size={hdbscan_min_cluster_size or min_topic_size}, "
        f"min_samples={hdbscan_min_samples}, epsilon={hdbscan_epsilon})",
        hdb.fit_predict(reduced),
    )
    ks = list(k_range) if k_range is not None else list(range(2, 13))
    for k in ks:
        if k * min_topic_size > len(texts):
            continue
        labels = KMeans(n_clusters=k, n_init=10, random_state=seed).fit_predict(reduced)
        small = [t for t, c in Counter(labels.tolist()).items() if c < min_topic_size]
        labels = np.where(np.isin(labels, small), OUTLIER, labels)  # below the minimum size
        score(f"kmeans(k={k})", labels)
    sil = np.array([t["silhouette"] for t in tried], dtype=float)
    if np.isnan(sil).all():
        msg = "no configuration produced two topics or more; lower min_topic_size or add texts"
        raise ValueError(msg)
    best = int(np.nanargmax(sil))
    raw = labelings[best]
    # Renumber topics by size (0 = largest), so ids read naturally and are stable for a seed.
    order = [t for t, _ in Counter(raw[raw != OUTLIER].tolist()).most_common()]
    labels = np.array([order.index(t) if t != OUTLIER else OUTLIER for t in raw.tolist()])
    words = class_tfidf(texts, labels, top_n_words)
    names = {t: "_".join(words[t][:3]) or f"topic {t}" for t in range(len(order))}
    topic_table = pl.DataFrame(
        {
            "topic_id": list(range(len(order))),
            "topic": [names[t] for t in range(len(order))],
            "keywords": [words[t] for t in range(len(order))],
            "size": [int((labels == t).sum()) for t in range(len(order))],
        },
        schema={
            "topic_id": pl.Int64,
            "topic": pl.String,
            "keywords": pl.List(pl.String),
            "size": pl.Int64,
        },
    )
    assignments = pl.DataFrame({"text": texts, "topic_id": labels.astype(np.int64)}).with_columns(
        topic=pl.col("topic_id").replace_strict(names, default=None, return_dtype=pl.String)
    )
    candidates = pl.DataFrame(tried).with_columns(chosen=pl.int_range(pl.len()) == best)
    return TopicModel(assignments, topic_table, candidates, emb, reduced)
