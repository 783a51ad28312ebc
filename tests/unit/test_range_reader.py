"""A task's RangeReader: one consumer for all of its ranges, and never a record of another range."""

from __future__ import annotations

import pytest
from confluent_kafka import KafkaError, Message

from sink_engine.errors import SourceError
from sink_engine.model import PartitionRange
from sink_engine.source.reader import BATCH, RangeReader
from sink_engine.source.settings import SourceSettings

SOURCE = SourceSettings("c", ("127.0.0.1:9",), ("a", "b"), None, 2000, {}, {}, None, None, "us-east-1")


def record(topic: str, partition: int, offset: int) -> Message:
    return Message(topic=topic, partition=partition, offset=offset, value=f"{topic}-{partition}@{offset}".encode())


def end_of(topic: str, partition: int, offset: int) -> Message:
    return Message(topic=topic, partition=partition, offset=offset, error=KafkaError(KafkaError._PARTITION_EOF))


class FakeConsumer:
    """Hands out its queue in order, `num_messages` at most per call, whatever is assigned: a consumer that still
    holds what it fetched for earlier assignments."""

    def __init__(self, queue: list[Message]):
        self.queue, self.asked, self.assigned, self.closed = list(queue), [], [], False

    def assign(self, partitions) -> None:
        self.assigned.append([(p.topic, p.partition, p.offset) for p in partitions])

    def unassign(self) -> None:
        self.assigned.append([])

    def consume(self, num_messages: int, timeout: float) -> list[Message]:
        self.asked.append(num_messages)
        taken, self.queue = self.queue[:num_messages], self.queue[num_messages:]
        return taken

    def close(self) -> None:
        self.closed = True


def read(reader: RangeReader, planned: PartitionRange) -> list[str]:
    return [value.decode() for chunk in reader.read(planned) for value in chunk.values]


STALE = {
    "another topic, same partition": [record("a", 0, n) for n in range(95, 100)],
    "same topic, another partition": [record("b", 1, n) for n in range(7, 12)],
    "same partition, before the range": [record("b", 0, n) for n in range(3, 10)],
    "another partition's end": [end_of("a", 0, 100)],
}


@pytest.mark.parametrize("stale", list(STALE.values()), ids=list(STALE))
def test_a_reused_consumer_yields_only_the_records_of_its_range(stale):
    # given a consumer that still holds what it fetched for another assignment ahead of the range's records
    consumer = FakeConsumer(stale + [record("b", 0, n) for n in range(10, 30)])
    reader = RangeReader(SOURCE, lambda _: consumer)
    # when the range b-0 [10, 20) is read
    values = read(reader, PartitionRange("b", 0, 10, 20, None))
    # then exactly its records come out, in order
    assert values == [f"b-0@{n}" for n in range(10, 20)]
    assert consumer.assigned == [[("b", 0, 10)], []]


def test_ranges_one_after_another_share_one_consumer_and_never_mix():
    # given one consumer for a task's three ranges, each followed in the queue by records past its end
    queue = (
        [record("a", 0, n) for n in range(0, 8)]
        + [record("b", 0, n) for n in range(0, 5)]
        + [end_of("b", 0, 5)]
        + [record("a", 1, n) for n in range(4, 9)]
    )
    made = []

    def factory(source):
        made.append(FakeConsumer(queue))
        return made[-1]

    with RangeReader(SOURCE, factory) as reader:
        # when the ranges are read in turn (the first stops before what the consumer fetched past it)
        first = read(reader, PartitionRange("a", 0, 0, 4, None))
        second = read(reader, PartitionRange("b", 0, 0, 5, None))
        third = read(reader, PartitionRange("a", 1, 4, 9, None))
    # then each yields its own records only, through one consumer, closed with the reader
    assert (first, second, third) == (
        [f"a-0@{n}" for n in range(4)],
        [f"b-0@{n}" for n in range(5)],
        [f"a-1@{n}" for n in range(4, 9)],
    )
    assert len(made) == 1 and made[0].closed


@pytest.mark.parametrize(
    "start, end, asked",
    [
        (0, 25, [25]),
        (100, 100 + BATCH + 5, [BATCH, 5]),
    ],
)
def test_a_fetch_asks_for_no_more_records_than_the_range_has_left(start, end, asked):
    # given a partition with records past the range (a read may not wait for a batch the range cannot fill)
    consumer = FakeConsumer([record("b", 0, n) for n in range(start, end + 10)])
    # when the range is read
    values = read(RangeReader(SOURCE, lambda _: consumer), PartitionRange("b", 0, start, end, None))
    # then each consume call asked for at most what was left, so none waited for its timeout
    assert len(values) == end - start and consumer.asked == asked


def test_a_range_whose_last_offsets_are_gaps_ends_at_the_end_of_the_partition():
    # given a range [0, 10) whose offsets 8 and 9 hold no record (transaction markers), then the partition's end
    consumer = FakeConsumer([record("b", 0, n) for n in range(8)] + [end_of("b", 0, 10)])
    # when it is read, then its 8 records come out and the end-of-partition event ends it
    assert len(read(RangeReader(SOURCE, lambda _: consumer), PartitionRange("b", 0, 0, 10, None))) == 8


def test_an_error_event_of_the_consumer_as_a_whole_is_not_taken_for_another_ranges():
    # given a consumer-wide error (no topic) in the middle of the range
    consumer = FakeConsumer([record("b", 0, 0), Message(error=KafkaError(KafkaError._ALL_BROKERS_DOWN))])
    # when the range is read, then the error stops it
    with pytest.raises(SourceError, match="b-0"):
        read(RangeReader(SOURCE, lambda _: consumer), PartitionRange("b", 0, 0, 5, None))


def test_a_partition_read_again_gets_a_new_consumer():
    # given a reader that read b-0 [0, 5) while its consumer fetched on to offset 9
    made = []

    def factory(source):
        made.append(
            FakeConsumer(
                [record("b", 0, n) for n in range(10)] if not made else [record("b", 0, n) for n in range(3, 6)]
            )
        )
        return made[-1]

    with RangeReader(SOURCE, factory) as reader:
        first = read(reader, PartitionRange("b", 0, 0, 5, None))
        # when b-0 [3, 6) is read with it (what the first consumer holds, offsets 5 to 9, would pass for records)
        again = read(reader, PartitionRange("b", 0, 3, 6, None))
    # then the second read went through a consumer of its own, and the first was closed
    assert (first, again) == ([f"b-0@{n}" for n in range(5)], [f"b-0@{n}" for n in range(3, 6)])
    assert len(made) == 2 and all(c.closed for c in made)


def test_a_range_abandoned_by_a_failed_task_finishes_quietly_after_the_reader_closed():
    # given a task reading a range that stops on a bad record (errors.tolerance none): its generator is left
    # suspended, and the reader (the task's `with`) closes before the generator is collected
    consumer = FakeConsumer([record("b", 0, n) for n in range(10, 30)])
    reader = RangeReader(SOURCE, lambda source: consumer)
    chunks = reader.read(PartitionRange("b", 0, 10, 30, None))
    next(chunks)
    reader.close()
    # when the generator is finished (as the garbage collector does), then nothing is raised: no traceback of
    # "'NoneType' object has no attribute 'unassign'" reaches the user's stderr
    chunks.close()
    assert consumer.closed and consumer.assigned == [[("b", 0, 10)]]
