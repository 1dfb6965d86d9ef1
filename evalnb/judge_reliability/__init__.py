"""How far a judge can be trusted on a lab: the judge reliability card (``lab.judges.card``).

``measures.py`` the statistics on arrays, ``probes.py`` the answers built to test a judge,
``lights.py`` the bounds that light each measure and what a card concludes,
``components.py`` the components (each asks the judge again in one way judges fail) and
``adversarial.py`` the adversarial one (leniency and obedience apart),
``card.py`` the card type and :func:`~evalnb.judge_reliability.card.judge_card`, which
samples the lab and runs the components.
"""
