"""Replay dead letters into Kafka (the original topic by default), each at most once.

Used by the `dlq_replay` Lambda and by `sink-engine dlq replay`. For every dead letter of the source that
the request matches, in source order: claim it in DynamoDB (`replay_progress.py`), produce it with its
original key, value, headers and timestamp (to its original partition when the target is its original
topic), and, once the producer confirmed a batch, mark the batch replayed. A retried or repeated request
skips what is claimed or replayed, so no record is produced twice; `dry_run` claims and produces nothing.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from confluent_kafka import KafkaError, KafkaException, Message

from sink_engine.aws_types import DynamoDBClient, S3Client
from sink_engine.dlq import kafka_io
from sink_engine.dlq.letter import DeadLetter
from sink_engine.dlq.replay_progress import REPLAYED, ReplayProgress
from sink_engine.dlq.replay_request import ReplayRequest
from sink_engine.dlq.replay_sources import dead_letters
from sink_engine.dlq.settings import DeadLetterSettings
from sink_engine.errors import SourceError
from sink_engine.source.settings import SourceSettings

BATCH = 500


@dataclass
class ReplaySummary:
    """Counts by error class. `replayed` with dry_run: what a real run would replay now."""

    dry_run: bool
    found: Counter = field(default_factory=Counter)
    replayed: Counter = field(default_factory=Counter)
    already_replayed: Counter = field(default_factory=Counter)
    in_doubt: Counter = field(default_factory=Counter)
    more_remaining: bool = False

    def to_dict(self) -> dict:
        counts = ("found", "replayed", "already_replayed", "in_doubt")
        return {
            "dry_run": self.dry_run,
            "more_remaining": self.more_remaining,
            **{name: dict(sorted(getattr(self, name).items())) for name in counts},
            "totals": {name: sum(getattr(self, name).values()) for name in counts},
        }


def replay(
    settings: DeadLetterSettings,
    request: ReplayRequest,
    dynamodb: DynamoDBClient,
    s3_client: S3Client,
    clock: Callable[[], int] = lambda: int(time.time() * 1000),
) -> ReplaySummary:
    progress = ReplayProgress(dynamodb, settings.offsets_table, settings.connector, clock)
    summary = ReplaySummary(request.dry_run)
    sender = None if request.dry_run else _Sender(settings.source)
    for letter in dead_letters(settings, request, s3_client):
        if not request.matches(letter):
            continue
        if request.max_records is not None and sum(summary.replayed.values()) >= request.max_records:
            summary.more_remaining = True
            break
        summary.found[letter.error_class] += 1
        target = request.target_topic or letter.topic
        found = progress.state(letter) if sender is None else progress.claim(letter, target)
        if found is None:
            summary.replayed[letter.error_class] += 1
            if sender is not None and sender.send(letter, target) >= BATCH:
                progress.mark_replayed(sender.confirm())
        else:
            (summary.already_replayed if found == REPLAYED else summary.in_doubt)[letter.error_class] += 1
    if sender is not None:
        progress.mark_replayed(sender.confirm())
    return summary


class _Sender:
    """An idempotent producer that confirms what it sent batch by batch; failures raise SourceError."""

    def __init__(self, source: SourceSettings):
        self._producer = kafka_io.producer(source)
        self._pending: list[DeadLetter] = []
        self._errors: list[str] = []

    def send(self, letter: DeadLetter, target: str) -> int:
        partition = letter.partition if target == letter.topic else -1
        while True:
            try:
                self._producer.produce(
                    target,
                    value=letter.value,
                    key=letter.key,
                    partition=partition,
                    headers=list(letter.headers) or None,
                    timestamp=letter.timestamp or 0,
                    on_delivery=self._delivered,
                )
                break
            except BufferError:
                self._producer.poll(0.1)
            except KafkaException as e:
                raise SourceError(f"cannot replay {letter.source_id} to {target}: {e}") from e
        self._pending.append(letter)
        return len(self._pending)

    def confirm(self) -> list[DeadLetter]:
        """Wait for every pending record; returns them once all are acknowledged."""
        left = self._producer.flush(60)
        if left or self._errors:
            raise SourceError(
                f"replay could not deliver {left or len(self._errors)} records "
                f"(they stay claimed and are reported in doubt): {self._errors[:3]}"
            )
        confirmed, self._pending = self._pending, []
        return confirmed

    def _delivered(self, error: KafkaError | None, message: Message) -> None:
        if error is not None:
            self._errors.append(str(error))
