"""The evaluator families, in drawers by what they read and need.

* :mod:`~evalnb.evaluation.families.text`: judge-free and model-free text metrics (BLEU,
  ROUGE, H2O's text matching and its condition language, leakage, encoding, rules,
  looping, ragas' non-LLM metrics);
* :mod:`~evalnb.evaluation.families.models`: metrics that run a local model (embeddings,
  classifiers, causal LMs, summarisation);
* :mod:`~evalnb.evaluation.families.judges`: metrics that ask an LLM judge (H2O's judges,
  ragas' LLM metrics, agent judges, fact checks);
* :mod:`~evalnb.evaluation.families.agents`: metrics over an agent's steps and tool calls.

A family imports the contract (:mod:`evalnb.evaluation.base`), the helpers every drawer
shares (:mod:`evalnb.evaluation.families.shared`) and its own drawer, never another drawer
nor a runner (the ``families`` contracts in ``pyproject.toml``). Importing a family module
registers its evaluators; :mod:`evalnb.evaluation.catalog` imports them all.
"""
