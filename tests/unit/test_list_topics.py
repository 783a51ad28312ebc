"""Listing topics with the client's errors read between slices: a refused login ends it at once, a slow broker is
still answered, a silent one fails at the timeout."""

from __future__ import annotations

import pytest
from confluent_kafka import KafkaError, KafkaException

from sink_engine.errors import SourceError
from sink_engine.source import metadata
from sink_engine.source.reachability import ClientErrors


class Clock:
    def __init__(self):
        self.now = 0.0

    def monotonic(self):
        return self.now


class SlowBroker:
    """A consumer whose metadata takes `answer_s` (None: never answers); `refuses` reports a failed SASL login."""

    def __init__(self, clock: Clock, answer_s: float | None, errors: ClientErrors, refuses: bool = False):
        self.clock, self.answer_s, self.errors, self.refuses = clock, answer_s, errors, refuses
        self.asked: list[float] = []

    def list_topics(self, timeout):
        self.asked.append(round(timeout, 3))
        if self.answer_s is not None and timeout >= self.answer_s:
            self.clock.now += self.answer_s
            return "metadata"
        self.clock.now += timeout
        raise KafkaException(KafkaError(KafkaError._TRANSPORT))

    def poll(self, _timeout):
        if self.refuses:
            self.errors(KafkaError(KafkaError._AUTHENTICATION, "SASL authentication error: invalid credentials"))


@pytest.fixture
def clock(monkeypatch):
    fake = Clock()
    monkeypatch.setattr(metadata, "time", fake)
    return fake


def test_a_refused_login_ends_the_listing_after_the_first_slice(clock):
    errors = ClientErrors()
    broker = SlowBroker(clock, None, errors, refuses=True)
    with pytest.raises(SourceError, match="Kafka refused the login: SASL authentication error: invalid credentials"):
        metadata.list_topics(broker, 20.0, errors)
    assert broker.asked == [1.0]


def test_a_broker_slower_than_a_slice_is_answered_in_a_longer_one(clock):
    errors = ClientErrors()
    broker = SlowBroker(clock, 3.0, errors)
    assert metadata.list_topics(broker, 20.0, errors) == "metadata"
    assert broker.asked == [1.0, 2.0, 4.0]


def test_a_silent_broker_fails_at_the_timeout(clock):
    errors = ClientErrors()
    broker = SlowBroker(clock, None, errors)
    with pytest.raises(KafkaException):
        metadata.list_topics(broker, 10.0, errors)
    assert broker.asked == [1.0, 2.0, 4.0, 3.0] and clock.now == 10.0
