"""Retrieval measured as IR measures it: trec_eval's measures of ranked runs against qrels."""
