"""A stand-in for a confluent_kafka Message: what RecordChunk reads of one (key, value, headers, timestamp), for
tests that build record chunks without a broker."""

from __future__ import annotations


class Message:
    def __init__(self, key, value, headers=None, timestamp=(1, 1483425001864)):
        """`timestamp` as confluent_kafka gives it: (timestamp type, epoch ms)."""
        self._key, self._value, self._headers, self._timestamp = key, value, headers, timestamp

    def key(self):
        return self._key

    def value(self):
        return self._value

    def headers(self):
        return self._headers

    def timestamp(self):
        return self._timestamp
