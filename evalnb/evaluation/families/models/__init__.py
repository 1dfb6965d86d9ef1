"""Metrics that run a local model: embeddings, classifiers, causal LMs, summarisation."""
