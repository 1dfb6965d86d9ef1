"""Metrics that ask an LLM judge: H2O's judges, ragas' LLM metrics, agent judges, fact checks."""
