"""Dead-letter queue: bad records of a run with `errors.tolerance=all`, sent exactly once to a Kafka topic
(`errors.deadletterqueue.topic.name`) or to JSON-lines objects under an S3 prefix
(`errors.deadletterqueue.s3.prefix`), and replayed at most once each (`replay.py`).

The exactly-once rule: a dead letter at source offset X is written before the commit that moves the
topic-partition past X, and a rerun of an uncommitted range writes it again only where that is harmless
(the same S3 key with the same bytes) or not at all (the topic destination skips what a crashed run sent).
"""

from sink_engine.dlq.letter import DeadLetter
from sink_engine.dlq.router import DeadLetterRouter, router_for

__all__ = ["DeadLetter", "DeadLetterRouter", "router_for"]
