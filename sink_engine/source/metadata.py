"""Partition discovery and offsets of the topics a connector reads, seen from the driver."""

from __future__ import annotations

import contextlib
import time

from confluent_kafka import Consumer, KafkaError, KafkaException
from confluent_kafka import TopicPartition as KafkaTP
from confluent_kafka.admin import AdminClient, ClusterMetadata

from sink_engine.errors import SourceError
from sink_engine.model import TopicPartition
from sink_engine.source.consumer import fetch_failure, make_consumer
from sink_engine.source.reachability import ClientErrors, check_bootstrap
from sink_engine.source.settings import SourceSettings


def list_partitions(
    consumer: Consumer, source: SourceSettings, timeout_s: float = 15.0, errors: ClientErrors | None = None
) -> list[TopicPartition]:
    """Every partition of the topics the source names or matches, sorted. Raises SourceError: naming each named
    topic that is missing or that the principal may not describe; at once when the broker refused the login
    (`errors`, the consumer's error callback)."""
    try:
        metadata = list_topics(consumer, timeout_s, errors)
    except KafkaException as e:
        raise SourceError(f"cannot list topics from {','.join(source.bootstrap_servers)}: {e}") from e
    found = [
        TopicPartition(name, p)
        for name, topic in metadata.topics.items()
        if not name.startswith("__") and source.topic_matches(name) and topic.error is None
        for p in topic.partitions
    ]
    if source.topics is not None:
        missing = sorted(set(source.topics) - {tp.topic for tp in found})
        if missing:
            raise SourceError("; ".join(topic_problem(t, e) for t, e in named_topics(consumer, missing, timeout_s)))
    return sorted(found)


def list_topics(consumer: Consumer, timeout_s: float, errors: ClientErrors | None = None) -> ClusterMetadata:
    """The cluster's metadata within `timeout_s`; SourceError as soon as the client reports a refused SASL login
    (it would retry the same credentials until the timeout). Asks in slices of 1, 2, 4, ... s, reading the client's
    errors between them: a broker slower to answer than a slice is answered in a later, longer one."""
    deadline = time.monotonic() + timeout_s
    slice_s = 1.0
    while True:
        try:
            return consumer.list_topics(timeout=max(0.001, min(slice_s, deadline - time.monotonic())))
        except KafkaException:
            consumer.poll(0)  # serves the client's errors
            if errors is not None and errors.refused_login:
                raise SourceError(f"Kafka refused the login: {errors.refused_login}") from None
            if time.monotonic() >= deadline:
                raise
            slice_s *= 2


def named_topics(consumer: Consumer, names: list[str], timeout_s: float) -> list[tuple[str, KafkaError | None]]:
    """(topic, Kafka's error for it) for topics missing from a metadata answer of every topic, asked by name: Kafka
    leaves a topic the principal may not DESCRIBE out of that answer, and answers TOPIC_AUTHORIZATION_FAILED when
    it is named (whether it exists or not, so as not to tell). None: no error, yet no partitions."""
    answer = []
    for name in names:
        topic = consumer.list_topics(topic=name, timeout=timeout_s).topics.get(name)
        answer.append((name, topic.error if topic is not None else None))
    return answer


def topic_problem(topic: str, error: KafkaError | None) -> str:
    """What is wrong with a named topic the engine cannot read, for messages."""
    if error is not None and error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED:
        return (
            f"topic {topic}: not authorized to describe it ({error.name()}): the connector's principal needs READ "
            "on it (the cluster's ACLs; with MSK IAM, kafka-cluster:DescribeTopic and kafka-cluster:ReadData)"
        )
    if error is None or error.code() == KafkaError.UNKNOWN_TOPIC_OR_PART:
        return f"topic {topic}: not found in Kafka"
    return f"topic {topic}: {error.name()} ({error.str()})"


def await_leaders(admin: AdminClient, topic: str, timeout_s: float) -> int:
    """Wait until every partition of a topic just created has a leader in the metadata; returns their count.

    Kafka answers CreateTopics once the controller has the topic, before every broker knows its leaders: a
    ListOffsets right after it may be answered NOT_LEADER_FOR_PARTITION (seen on Apache Kafka). SourceError when the
    leaders are not known within `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while True:
        found = admin.list_topics(topic=topic, timeout=max(0.001, deadline - time.monotonic())).topics.get(topic)
        partitions = [] if found is None or found.error is not None else list(found.partitions.values())
        if partitions and all(p.leader >= 0 and p.error is None for p in partitions):
            return len(partitions)
        if time.monotonic() > deadline:
            raise SourceError(f"the partitions of {topic} have no leader {timeout_s:g}s after its creation")
        time.sleep(0.05)


def watermarks(consumer: Consumer, tps: list[TopicPartition], timeout_s: float = 15.0) -> dict:
    """(low, high) offsets per partition; high is max(ListOffsets, the high watermark of a fetch).

    Some brokers answer ListOffsets(latest) with the base offset of the last batch + 1; the high watermark
    in fetch responses is right on every broker, so the driver fetches the last batch once and takes both.
    `timeout_s` bounds the whole call, however many partitions: a broker that stops answering fails it in time.
    """
    deadline = time.monotonic() + timeout_s
    listed = {tp: _listed_offsets(consumer, tp, deadline) for tp in tps}
    probe = [KafkaTP(tp.topic, tp.partition, max(lo, hi - 1)) for tp, (lo, hi) in listed.items() if hi > lo]
    fetched = _fetch_high_watermarks(consumer, probe, deadline)
    return {tp: (lo, max(hi, fetched.get(tp, hi))) for tp, (lo, hi) in listed.items()}


# What a partition's leader answers while it moves (a topic just created, a broker restarted), and what a leader
# just elected answers until its high watermark has caught up (OFFSET_NOT_AVAILABLE, KIP-207; seen after a broker
# was killed, tests/faults/test_broker_faults.py): asked again
LEADER_MOVING = (KafkaError.NOT_LEADER_FOR_PARTITION, KafkaError.LEADER_NOT_AVAILABLE, KafkaError.OFFSET_NOT_AVAILABLE)
# What the client reports while the leader it knows is gone (a broker killed: the controllers move its leaders once
# they fence it, broker.session.timeout.ms later, 9 s by default): asked again, which looks the leader up anew
LEADER_GONE = (KafkaError._TIMED_OUT, KafkaError._TRANSPORT, KafkaError._DESTROY_BROKER)
LEADER_SLICE_S = 2.0  # one query's wait: a query sent to a dead leader waits for it, never for the next one


def _listed_offsets(consumer: Consumer, tp: TopicPartition, deadline: float) -> tuple[int, int]:
    """ListOffsets' (low, high) for `tp`, asked again until `deadline` (monotonic time) while its leader moves or is
    gone: librdkafka's watermark query neither retries NOT_LEADER_FOR_PARTITION, which Apache Kafka answers for a
    moment after CreateTopics even once the metadata names the leader, nor turns to a new leader while it waits for a
    dead one (it waited out the whole deadline after a broker was killed, tests/faults/test_broker_faults.py), so
    each query waits at most LEADER_SLICE_S. Raises SourceError."""
    while True:
        wait_s = min(LEADER_SLICE_S, deadline - time.monotonic())
        try:
            return consumer.get_watermark_offsets(KafkaTP(tp.topic, tp.partition), timeout=max(0.001, wait_s))
        except KafkaException as e:
            error = e.args[0] if e.args else None
            code = error.code() if isinstance(error, KafkaError) else None
            if code not in LEADER_MOVING + LEADER_GONE or time.monotonic() >= deadline:
                raise SourceError(f"cannot read offsets of {tp}: {e}") from e
            if code in LEADER_GONE:
                _refresh_leader(consumer, tp, deadline)
            time.sleep(0.05)


def _refresh_leader(consumer: Consumer, tp: TopicPartition, deadline: float) -> None:
    """Ask any broker for the topic's metadata, which updates the client's cache: its next query goes to the
    leader named there (librdkafka's watermark query never refreshes it by itself). A failure is left to the next
    query, asked until the deadline."""
    with contextlib.suppress(KafkaException):
        consumer.list_topics(topic=tp.topic, timeout=max(0.001, min(LEADER_SLICE_S, deadline - time.monotonic())))


def _fetch_high_watermarks(consumer: Consumer, probe: list[KafkaTP], deadline: float) -> dict:
    """The high watermarks that fetches of the probed offsets report before `deadline` (monotonic time)."""
    if not probe:
        return {}
    consumer.assign(probe)
    pending = {(p.topic, p.partition) for p in probe}
    while pending and time.monotonic() < deadline:
        message = consumer.poll(0.2)
        if message is None:
            continue
        error = message.error()
        if error is not None and error.code() != KafkaError._PARTITION_EOF:
            raise SourceError(fetch_failure(message.topic(), message.partition(), error))
        pending.discard((message.topic(), message.partition()))
    result = {}
    for p in probe:
        _, high = consumer.get_watermark_offsets(KafkaTP(p.topic, p.partition), cached=True)
        if high is not None and high >= 0:
            result[TopicPartition(p.topic, p.partition)] = high
    consumer.unassign()
    return result


def partition_watermarks(source: SourceSettings) -> dict[TopicPartition, tuple[int, int]]:
    """Every partition the source reads, in order, with its (low, high) offsets, from one short-lived consumer,
    all within `sink.kafka.timeout.ms`. Raises SourceError naming what Kafka did not answer: within a few seconds when
    no bootstrap address can be reached at all (source/reachability.py)."""
    check_bootstrap(source.bootstrap_servers)
    timeout_s = source.timeout_ms / 1000
    deadline = time.monotonic() + timeout_s
    errors = ClientErrors()
    consumer = make_consumer(source, error_cb=errors)
    try:
        try:
            tps = list_partitions(consumer, source, timeout_s, errors)
            return watermarks(consumer, tps, max(0.001, deadline - time.monotonic()))
        except SourceError as e:
            if not isinstance(e.__cause__, KafkaException):
                raise
            consumer.poll(0)  # serves the client's errors
            seen = errors.last()
            raise SourceError(
                f"{e} (no answer within sink.kafka.timeout.ms={source.timeout_ms})"
                + (f"; the client reported: {'; '.join(seen)}" if seen else "")
            ) from e.__cause__
    finally:
        consumer.close()
