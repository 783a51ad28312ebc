"""What a refused fetch says: the ACL the connector's principal lacks, naming the topic or the group; and a
continuous task stops on a refusal instead of retrying it."""

from __future__ import annotations

import pytest
from confluent_kafka import KafkaError

from sink_engine.continuous.streams import _is_record
from sink_engine.errors import SourceError
from sink_engine.source.consumer import fetch_failure


class ErrorEvent:
    """A consumer's error event as confluent-kafka's Message presents it."""

    def __init__(self, code: int, topic: str | None = "orders", partition: int = 3):
        self._error, self._topic, self._partition = KafkaError(code), topic, partition

    def error(self):
        return self._error

    def topic(self):
        return self._topic

    def partition(self):
        return self._partition


def test_a_denied_topic_is_named_with_the_acl_it_needs():
    message = fetch_failure("orders", 3, KafkaError(KafkaError.TOPIC_AUTHORIZATION_FAILED))
    assert message.startswith(
        "fetch from orders-3 refused (TOPIC_AUTHORIZATION_FAILED): the connector's principal needs READ on topic orders"
    )


def test_a_denied_group_names_the_group_acl():
    message = fetch_failure(None, -1, KafkaError(KafkaError.GROUP_AUTHORIZATION_FAILED))
    assert message.startswith(
        "Kafka refused the consumer's group (GROUP_AUTHORIZATION_FAILED): the connector's "
        "principal needs DESCRIBE on the group connect-<connector name>"
    )


def test_another_error_is_shown_as_kafka_gave_it():
    assert fetch_failure("orders", 3, KafkaError(KafkaError.OFFSET_OUT_OF_RANGE)).startswith(
        "fetch from orders-3 failed: KafkaError{code=OFFSET_OUT_OF_RANGE"
    )


@pytest.mark.parametrize("code", [KafkaError.TOPIC_AUTHORIZATION_FAILED, KafkaError.GROUP_AUTHORIZATION_FAILED])
def test_a_continuous_task_stops_on_a_refusal(code):
    with pytest.raises(SourceError, match="AUTHORIZATION_FAILED"):
        _is_record(ErrorEvent(code))


def test_a_continuous_task_retries_a_transient_error():
    assert _is_record(ErrorEvent(KafkaError._TRANSPORT)) is False
