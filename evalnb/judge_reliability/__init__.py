"""How far a judge can be trusted on a lab: the judge reliability card (``lab.judge_card``).

``measures.py`` the statistics on arrays, ``probes.py`` the answers built to test a judge,
``card.py`` the card: it samples the lab, asks the judge again in the ways judges fail, and
summarises each component with intervals and traffic lights.
"""
