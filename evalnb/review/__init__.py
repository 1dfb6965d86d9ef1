"""Review as a team: queues on a PostgreSQL server, agreement between reviewers.

:mod:`~evalnb.review.queue` holds the queue (leases, exactly-N overlap, blind review,
history), :mod:`~evalnb.review.publish` makes one from a lab and pulls its labels back,
:mod:`~evalnb.review.agreement` measures agreement. ``evalnb.review(...)`` and
``evalnb.ReviewQueue`` are the public entry points.
"""
