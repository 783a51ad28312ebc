"""One restore, start to end: select, lease, scan the target, produce what is missing, confirm."""

from __future__ import annotations

import signal
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from botocore.exceptions import ClientError
from confluent_kafka import KafkaError, KafkaException, Message, Producer

from sink_engine.aws_types import DynamoDBClient, S3Client
from sink_engine.doctor.grants import describe
from sink_engine.errors import OptionError, SourceError, StorageError
from sink_engine.failpoints import KillCountdown
from sink_engine.offsets import LeaseKeeper, LeaseToken, OffsetStore
from sink_engine.restore import target as kafka
from sink_engine.restore.lease import Checkpoint, RestoreLease, RestoreLeaseLost
from sink_engine.restore.objects import LIST_SID, ObjectReader
from sink_engine.restore.present import Present
from sink_engine.restore.progress import PartitionCounts
from sink_engine.restore.request import RestoreRequest
from sink_engine.restore.selection import plan, selected, without_present
from sink_engine.restore.settings import RestoreSettings
from sink_engine.restore.stored import StoredRecord, origin_header, origin_of
from sink_engine.source.settings import SourceSettings
from sink_engine.target.s3_objects.verify.listing import Lister

CONFIRM_EVERY = 10_000  # records produced between checks that every earlier one was acknowledged (and checkpoints)


@dataclass
class RestoreSummary:
    source_partitions: int
    target_partitions: int
    partition_for_partition: bool  # else through the target's partitioner
    created_target: bool
    counts: dict[int, PartitionCounts] = field(default_factory=dict)
    objects: int = 0  # data objects read (not those whose selected offsets were all present)
    s3_requests: int = 0  # ListObjectsV2 and GetObject requests
    scanned: int = 0  # target records read to find what is present
    restamped: int = 0  # records of CreateTime 0, which librdkafka produces with the produce time (see _Sender)
    seconds: float = 0.0


def restore(
    request: RestoreRequest,
    dynamodb: DynamoDBClient,
    s3: S3Client,
    on_start: Callable[[RestoreSummary], None] = lambda s: None,
    on_wait: Callable[[str, int], None] = lambda owner, until: None,
    clock: Callable[[], int] = lambda: int(time.time() * 1000),
) -> RestoreSummary:
    """Raises OptionError / ConfigError (exit 2) for a request the backup or the target cannot serve, LeaseHeldError
    when another restore into the target holds on past the wait, SourceError / StorageError on Kafka or S3."""
    started = time.monotonic()
    settings = RestoreSettings.from_config(request.config)
    if request.selects_time and settings.formats.format_class != "envelope":
        raise OptionError(
            "--from-time" if request.from_time is not None else "--to-time",
            f"{settings.formats.format_class} objects hold no record timestamps; a time range needs "
            "an EnvelopeFormat backup",
        )
    target = settings.target_source(request.target_bootstrap_servers)
    lister = Lister(s3, settings.bucket)
    objects = _listed(lister, settings, request.topic)
    committed = {
        tp.partition: c.next_offset
        for tp, c in OffsetStore(dynamodb, settings.offsets_table, clock).committed(settings.connector).items()
        if tp.topic == request.topic
    }
    plans = plan(request, objects, committed, settings.one_stream)
    source_partitions, target_partitions, created = _partitions(request, target, objects, committed)
    summary = RestoreSummary(
        source_partitions,
        target_partitions,
        target_partitions == source_partitions,
        created,
        {p.partition: PartitionCounts() for p in plans},
    )
    reader = ObjectReader(s3, settings, request.binary_headers)
    lease = RestoreLease(dynamodb, settings.offsets_table, request.target_topic, settings.lease_ms, clock)
    asked_at = time.monotonic()
    token = lease.acquire(uuid.uuid4().hex, on_wait)
    on_start(summary)
    sender = None
    try:
        with LeaseKeeper(
            lease.leases, token, settings.lease_ms, held_since=asked_at, renewals_per_lease=_HeldLease.RENEWALS
        ) as keeper:
            found, scanned_to = _present(request, target, lease, token, summary)
            sender = _Sender(
                target,
                request.target_topic,
                request.topic,
                _HeldLease(keeper, lease.name, settings.lease_ms),
                lambda acknowledged: lease.record(
                    token, request.topic, Checkpoint({**scanned_to, **acknowledged}, found)
                ),
            )
            for partition_plan in plans:
                p = partition_plan.partition
                have, tally = found.setdefault(p, Present()), summary.counts[p]
                partition_plan, known = without_present(request, partition_plan, have, settings.one_stream)
                tally.read += known
                tally.present += known
                for record in selected(request, partition_plan, reader):
                    tally.read += 1
                    if record.offset in have:
                        tally.present += 1
                        continue
                    have.add(record.offset)  # known present once the next confirm has its acknowledgement
                    sender.send(record, p if summary.partition_for_partition else -1)
                    tally.produced += 1
                summary.objects += len(partition_plan.objects)
            sender.confirm()
            summary.restamped = sender.restamped
    finally:
        if sender is None or sender.settled:  # else in-flight records may still land: the lease lapses instead
            lease.leases.release(token)
    summary.s3_requests = lister.requests + reader.requests
    summary.seconds = time.monotonic() - started
    return summary


def _listed(lister: Lister, settings: RestoreSettings, topic: str) -> list:
    """The topic's data objects; StorageError naming the grant when S3 refuses the listing."""
    folder = settings.folder_of(topic)
    try:
        return list(lister.data_objects(settings.naming, folder, settings.extension))
    except ClientError as e:
        raise StorageError(
            f"the objects of {topic} in s3://{settings.bucket} cannot be listed: {describe(e, 's3', sid=LIST_SID)}"
        ) from None


def _partitions(
    request: RestoreRequest, target: SourceSettings, objects: list, committed: dict
) -> tuple[int, int, bool]:
    """The source's partition count (the source topic's on the target cluster, else the backup's highest partition
    + 1), the target's, and whether the target was created now (`--create-target`)."""
    counts = kafka.partition_counts(target, [request.target_topic, request.topic])
    in_backup = {o.partition for o in objects} | set(committed)
    source_partitions = counts.get(request.topic) or (max(in_backup) + 1 if in_backup else 1)
    if request.target_topic in counts:
        return source_partitions, counts[request.target_topic], False
    if not request.create_target:
        raise OptionError(
            "--target-topic",
            f"{request.target_topic} does not exist on "
            f"{','.join(target.bootstrap_servers)}; create it, or pass --create-target to create it "
            f"with the source's {source_partitions} partitions",
        )
    kafka.create_topic(target, request.target_topic, source_partitions)
    return source_partitions, source_partitions, True


def _present(
    request: RestoreRequest, target: SourceSettings, lease: RestoreLease, token: LeaseToken, summary: RestoreSummary
) -> tuple[dict[int, Present], dict[int, int]]:
    """The original offsets already in the target, by source partition, and the target's end offsets now (up to
    which it was scanned). Known present: the `RESTORED#` checkpoint's intervals, and what a scan of the target
    from the checkpoint's offsets finds (what a killed restore wrote after its last confirm). The first restore of
    the source topic into the target records the target's ends as the checkpoint and finds nothing. A target
    partition now ending before the checkpoint's offset (the topic was recreated or truncated) voids the
    intervals: the whole target is scanned."""
    marks = kafka.end_offsets(target, request.target_topic, summary.target_partitions)
    ends = {p: high for p, (_, high) in marks.items()}
    checkpoint = lease.checkpoint(request.topic)
    if checkpoint is None:
        lease.record(token, request.topic, Checkpoint(ends, {}), first=True)
        return {}, ends
    if any(ends.get(p, 0) < offset for p, offset in checkpoint.scan_from.items()):
        checkpoint = Checkpoint({}, {})
    ranges = {p: (max(low, checkpoint.scan_from.get(p, low)), high) for p, (low, high) in marks.items()}
    scanned, summary.scanned = kafka.present(target, request.target_topic, ranges, request.topic)
    found = checkpoint.present
    for p, offsets in scanned.items():
        known = found.setdefault(p, Present())
        for start, end in offsets.intervals():
            known.add_range(start, end)
    return found, ends


class _HeldLease:
    """The restore's lease as its producer sees it: a record is handed to the producer only while the lease is
    surely this restore's for longer than the record can take to be acknowledged or given up (the producer's
    message timeout, half the lease, and a tenth of the lease as margin). A non-transactional producer has no
    fencing: a restore that stalled (its renewals late, the machine loaded) could otherwise still append records
    after its lease lapsed and another restore had scanned the target, writing them twice. Renewals every fifth
    of the lease (RENEWALS) keep the window open; when one is late, sending waits for it, and stops once the lease
    was taken.
    (What librdkafka sent before its message timeout but a broker appends later, a request delayed in the network
    past that timeout, is not covered.)"""

    RENEWALS = 5  # per lease: the window (0.6 of it) stays open while renewals start less than 0.4 of it apart

    def __init__(self, keeper: LeaseKeeper, name: str, lease_ms: int):
        self._keeper, self._name = keeper, name
        self.message_timeout_ms = lease_ms // 2
        self._window_s = (self.message_timeout_ms + lease_ms / 10) / 1000

    def wait_to_send(self, where: str, producer: Producer) -> None:
        """Return once a record may be handed to `producer`, serving its callbacks (poll) while it waits;
        RestoreLeaseLost naming `where` when the lease was taken meanwhile."""
        while self._keeper.held_for() < self._window_s:
            if self._keeper.lost:
                raise RestoreLeaseLost(
                    f"the restore lease {self._name} was lost at {where}; a rerun goes on from there"
                )
            producer.poll(0.05)


class _Sender:
    """Produces with the origin header; every CONFIRM_EVERY records, and at the end, waits for the
    acknowledgements and raises SourceError naming the first record Kafka refused, else calls `on_confirmed` with,
    per target partition, the offset after the last record acknowledged (every record sent is then in Kafka).

    A record's timestamp goes as its CreateTime, and a record without one gets the produce time (0: librdkafka stamps
    the current time). So does a record whose timestamp is 0 (1970-01-01T00:00:00Z): librdkafka takes a timestamp of
    0 for none (rdkafka_msg.c, rd_kafka_msg_new0: `if (timestamp) ... else rkm_timestamp = rd_uclock() / 1000`), and
    no other value means 0. `restamped` counts those, which the restore reports."""

    def __init__(
        self,
        target: SourceSettings,
        topic: str,
        source_topic: str,
        lease: _HeldLease,
        on_confirmed: Callable[[dict[int, int]], object],
    ) -> None:
        self._topic, self._source_topic, self._lease = topic, source_topic, lease
        message_timeout_ms = lease.message_timeout_ms
        self._on_confirmed = on_confirmed
        self._ends: dict[int, int] = {}
        self._failed: list[tuple[str, str]] = []
        self._producer = kafka.producer(target, message_timeout_ms, self._delivered)
        self._timeout_s = message_timeout_ms / 1000 + 30
        self._unconfirmed = 0
        self._killed = KillCountdown("restore_sigkill")  # tests: a SIGKILL at the n-th record (failpoints.py)
        self._stopped = KillCountdown("restore_sigstop", signal.SIGSTOP, lambda: self._producer.flush(self._timeout_s))
        self.restamped = 0

    def send(self, record: StoredRecord, partition: int) -> None:
        headers = [*(record.headers or []), origin_header(self._source_topic, record.partition, record.offset)]
        if record.timestamp == 0:
            self.restamped += 1
        self._lease.wait_to_send(f"{self._source_topic}-{record.partition}@{record.offset}", self._producer)
        while True:
            try:
                self._producer.produce(
                    self._topic,
                    value=record.value,
                    key=record.key,
                    partition=partition,
                    headers=headers,
                    timestamp=record.timestamp or 0,
                )
                break
            except BufferError:
                self._producer.poll(0.1)
            except KafkaException as e:
                raise SourceError(
                    f"cannot produce {self._source_topic}-{record.partition}@{record.offset} to {self._topic}: {e}"
                ) from e
        self._killed.tick()
        self._stopped.tick()
        self._unconfirmed += 1
        if self._unconfirmed >= CONFIRM_EVERY:
            self.confirm()

    def confirm(self) -> None:
        left = self._producer.flush(self._timeout_s)
        if left or self._failed:
            where, error = self._failed[0] if self._failed else ("?", f"{left} records unacknowledged")
            raise SourceError(
                f"Kafka did not take {where} into {self._topic}: {error}; a rerun produces what is missing"
            )
        self._unconfirmed = 0
        self._on_confirmed(self._ends)

    @property
    def settled(self) -> bool:
        """Whether nothing produced is still queued or in flight."""
        return len(self._producer) == 0

    def _delivered(self, error: KafkaError | None, message: Message) -> None:
        if error is None:
            partition, offset = message.partition(), message.offset()
            assert partition is not None and offset is not None  # a delivered record has both
            self._ends[partition] = offset + 1  # in order per partition (idempotence)
        else:
            headers = message.headers()  # a list, as produced here (confluent_kafka also types it a dict)
            origin = origin_of(headers if isinstance(headers, list) else None)
            self._failed.append((f"{origin[0]}-{origin[1]}@{origin[2]}" if origin else "a record", str(error)))
