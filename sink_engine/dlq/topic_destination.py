"""Dead letters to the Kafka topic `errors.deadletterqueue.topic.name`, exactly once across reruns.

Each source topic-partition has a fixed dead-letter partition and a transactional producer whose id is
derived from the connector and the source topic-partition. Before producing, the destination
1. initializes the transactions of that id, which fences any older producer of the same source range
   (a crashed or zombie attempt) and aborts its open transaction;
2. scans the dead-letter partition, read committed, from the position stored with the last commit of the
   source topic-partition (`dlq_scan_from` on its offsets item; the partition's start the first time) to
   its end, and skips the source offsets found there: a committed transaction of an attempt that crashed
   before its offset commit;
3. produces the rest in one transaction and commits it, before the task returns and so before the offset
   commit; the end seen in step 2 becomes the `dlq_scan_from` stored with this attempt's commit.
"""

from __future__ import annotations

import time
from collections.abc import Iterable

from confluent_kafka import KafkaException, Producer

from sink_engine.aws import dynamodb_client
from sink_engine.dlq import kafka_io
from sink_engine.dlq.letter import DeadLetter
from sink_engine.dlq.settings import DeadLetterSettings
from sink_engine.errors import SourceError
from sink_engine.model import PartitionRange, TopicPartition
from sink_engine.offsets import OffsetStore

TIMEOUT_S = 60.0


class TopicDestination:
    def __init__(self, settings: DeadLetterSettings, planned: PartitionRange):
        self._settings, self._planned = settings, planned
        assert settings.topic is not None  # the topic destination's settings
        self._topic = settings.topic
        self.scan_from: int | None = None

    def write(self, letters: Iterable[DeadLetter]) -> None:
        source, planned = self._settings.source, self._planned
        partitions = kafka_io.ensure_topic(source, self._topic, self._settings.replication_factor)
        dlq = TopicPartition(self._topic, kafka_io.partition_for(planned.tp, partitions))
        producer = kafka_io.producer(source, **{"transactional.id": self.transactional_id()})
        try:
            producer.init_transactions(TIMEOUT_S)
            low, end = kafka_io.end_offsets(source, dlq)
            stored = self._stored_scan_from()
            sent = kafka_io.already_sent(source, dlq, max(low, stored if stored is not None else low), end, planned)
            self.scan_from = end
            self._produce(producer, dlq, (letter for letter in letters if letter.offset not in sent))
        except KafkaException as e:
            raise SourceError(f"dead letters of {planned.topic}-{planned.partition} to {self._topic}: {e}") from e

    def transactional_id(self) -> str:
        return f"sink-engine-dlq.{self._settings.connector}.{self._planned.topic}.{self._planned.partition}"

    def _produce(self, producer: Producer, dlq: TopicPartition, letters: Iterable[DeadLetter]) -> None:
        with_context = self._settings.context_headers
        producer.begin_transaction()
        for letter in letters:
            while True:
                try:
                    producer.produce(
                        dlq.topic,
                        value=letter.value,
                        key=letter.key,
                        partition=dlq.partition,
                        headers=letter.kafka_headers(with_context),
                    )
                    break
                except BufferError:
                    producer.poll(0.1)
        producer.commit_transaction(TIMEOUT_S)

    def _stored_scan_from(self) -> int | None:
        store = OffsetStore(
            dynamodb_client(self._settings.region), self._settings.offsets_table, lambda: int(time.time() * 1000)
        )
        return store.dlq_scan_from(self._settings.connector, self._planned.tp)
