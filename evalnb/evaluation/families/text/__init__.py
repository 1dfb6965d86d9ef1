"""Judge-free, model-free text metrics: n-grams, matching, leakage, encoding, rules."""
