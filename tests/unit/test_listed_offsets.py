"""ListOffsets while a partition's leader moves: Apache Kafka answers NOT_LEADER_FOR_PARTITION for a moment after
CreateTopics (seen in tests/functional/test_doctor.py on a topic just created); the watermark query asks again until
its deadline, and any other error fails at once. While the leader the client knows is gone (a broker killed,
tests/faults/test_broker_faults.py), each query waits a slice of the deadline and the topic's metadata is asked for
before the next, so that it goes to the new leader; which answers OFFSET_NOT_AVAILABLE until its high watermark has
caught up (KIP-207), asked again too."""

import time

import pytest
from confluent_kafka import KafkaError, KafkaException

from sink_engine.errors import SourceError
from sink_engine.model import TopicPartition
from sink_engine.source.metadata import LEADER_SLICE_S, watermarks

TP = TopicPartition("orders", 0)


class Answers:
    """A consumer whose ListOffsets raises the given errors in turn, then answers (0, 0)."""

    def __init__(self, *codes: int):
        self.codes, self.asked, self.waits, self.metadata_asked = list(codes), 0, [], 0

    def get_watermark_offsets(self, _tp, timeout):
        self.asked += 1
        self.waits.append(timeout)
        if self.codes:
            raise KafkaException(KafkaError(self.codes.pop(0)))
        return 0, 0

    def list_topics(self, topic, timeout):
        assert topic == TP.topic
        self.metadata_asked += 1


@pytest.mark.parametrize(
    "code", [KafkaError.NOT_LEADER_FOR_PARTITION, KafkaError.LEADER_NOT_AVAILABLE, KafkaError.OFFSET_NOT_AVAILABLE]
)
def test_a_moving_leader_is_asked_again(code):
    # given a partition whose leader answers twice that it is not (yet) the leader
    consumer = Answers(code, code)
    # when its watermarks are read, then they are those of the third answer
    assert watermarks(consumer, [TP], timeout_s=5) == {TP: (0, 0)}
    assert consumer.asked == 3


def test_another_error_fails_at_once_naming_the_partition():
    consumer = Answers(KafkaError.UNKNOWN_TOPIC_OR_PART)
    with pytest.raises(SourceError, match="cannot read offsets of orders-0"):
        watermarks(consumer, [TP], timeout_s=5)
    assert consumer.asked == 1


def test_a_leader_that_keeps_moving_fails_at_the_deadline():
    consumer = Answers(*[KafkaError.NOT_LEADER_FOR_PARTITION] * 1000)
    started = time.monotonic()
    with pytest.raises(SourceError, match="NOT_LEADER_FOR_PARTITION|Not leader"):
        watermarks(consumer, [TP], timeout_s=0.3)
    assert time.monotonic() - started < 5


@pytest.mark.parametrize("code", [KafkaError._TIMED_OUT, KafkaError._TRANSPORT, KafkaError._DESTROY_BROKER])
def test_a_gone_leader_is_looked_up_again_and_asked_in_slices(code):
    # given a partition whose leader was killed: the query waits for it in vain (timed out), its connection fails,
    # or the client drops the broker once the metadata no longer names it
    consumer = Answers(code, code)
    # when its watermarks are read within a minute
    assert watermarks(consumer, [TP], timeout_s=60) == {TP: (0, 0)}
    # then each failed query was followed by a metadata request (the next one goes to the leader named there),
    # and no query waited more than a slice of the minute
    assert (consumer.asked, consumer.metadata_asked) == (3, 2)
    assert max(consumer.waits) <= LEADER_SLICE_S


def test_a_moving_leader_needs_no_metadata_request():
    consumer = Answers(KafkaError.NOT_LEADER_FOR_PARTITION)
    watermarks(consumer, [TP], timeout_s=5)
    assert consumer.metadata_asked == 0
