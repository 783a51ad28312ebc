"""A continuous run's stream over records Kafka deleted before it read them (`PartitionStream.expire`): the gap is
settled unread and counted as `skipped.expired` by the commit that passes it, and only by that one."""

from __future__ import annotations

from types import SimpleNamespace

from sink_engine.config import parse_config
from sink_engine.errors import SinkError
from sink_engine.model import TopicPartition
from sink_engine.task.output import StreamOutput
from sink_engine.task.settings import TaskSettings
from sink_engine.task.stream import PartitionStream
from tests.builders import connector_keys

TP = TopicPartition("orders", 0)


class OpenFrom(StreamOutput):
    """An output holding a file open from `first_open` (None: nothing open) and no closed file."""

    def __init__(self) -> None:
        self.writer = SimpleNamespace(closed=[])
        self.partitioner = None
        self.first_open: int | None = None

    def settle(self, processed: int, error: SinkError | None) -> int:
        raise AssertionError("a stream never settles as a range does")

    def commit_point(self, processed: int) -> int:
        return self.first_open if self.first_open is not None else processed

    def cut(self, offset: int) -> None:
        self.first_open = None

    def has_open_files(self) -> bool:
        return self.first_open is not None


def stream_at(committed: int) -> PartitionStream:
    settings = TaskSettings.from_config(parse_config({"name": "c", **connector_keys({"topics": "orders"})}))
    return PartitionStream(lambda *_: OpenFrom(), settings, TP, committed, committed, None)


def test_a_gap_behind_an_open_file_is_counted_once_the_commit_passes_it():
    # given a stream that expected offset 12 with a file open from 10, when Kafka's log start moved to 20
    stream = stream_at(10)
    stream.processed, stream.output.first_open = 12, 10
    assert stream.expire(20) == 8 and stream.processed == 20
    # then nothing is committed while the file is open before the gap
    assert stream.pending() is None
    # and once the file closes (here: a cut, whose records are not counted by this output) the commit passes the gap
    # and counts it as expired, once
    stream.cut(25)
    pending = stream.pending()
    assert pending is not None and pending.commit.next_offset == 25
    assert pending.commit.skipped["expired"] == 8
    stream.settled(pending)
    stream.processed = 30
    assert "expired" not in stream.pending().commit.skipped


def test_a_log_start_not_past_the_position_expires_nothing():
    stream = stream_at(10)
    assert stream.expire(10) == 0 and stream.expire(5) == 0 and stream.processed == 10
