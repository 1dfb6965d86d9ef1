"""Review as a team: queues on a PostgreSQL server, agreement between reviewers.

:mod:`~evalnb.team.queue` holds the queue (leases, exactly-N overlap, blind review,
history), :mod:`~evalnb.team.publish` makes one from a lab and pulls its labels back,
:mod:`~evalnb.team.agreement` measures agreement. ``evalnb.review(...)`` and
``evalnb.ReviewQueue`` are the public entry points; ``evalnb.team.LocalServer`` starts a
private PostgreSQL server to try it on one machine.
"""

from evalnb.team.local_server import LocalServer

__all__ = ["LocalServer"]
