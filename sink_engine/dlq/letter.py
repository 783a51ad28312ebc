"""`DeadLetter`: one bad record with its coordinates and error, and its two wire forms (a JSON line for
the S3 destination, key/value/headers for the topic destination)."""

from __future__ import annotations

import base64
from dataclasses import dataclass

import orjson

# Kafka Connect's context header names (org.apache.kafka.connect.runtime.errors.DeadLetterQueueReporter).
CONNECT_PREFIX = "__connect.errors."
# Our own header, always present on topic dead letters: the source coordinates and error class, as JSON.
SOURCE_HEADER = "__sink_engine.dlq.source"

# Kafka Connect stages of the records we dead-letter.
STAGE_KEY_CONVERTER = "KEY_CONVERTER"
STAGE_VALUE_CONVERTER = "VALUE_CONVERTER"
STAGE_TASK_PUT = "TASK_PUT"
STAGE_TRANSFORMATION = "TRANSFORMATION"


@dataclass(frozen=True)
class DeadLetter:
    connector: str
    topic: str
    partition: int
    offset: int
    timestamp: int | None  # epoch milliseconds of the original record
    key: bytes | None
    value: bytes | None
    headers: tuple  # ((name, bytes or None), ...) of the original record
    error_class: str  # ConversionError, PartitioningError, NullValueError or a subclass's name
    stage: str  # Kafka Connect stage: KEY_CONVERTER, VALUE_CONVERTER, TRANSFORMATION or TASK_PUT
    message: str
    executing_class: str = ""  # the step that failed (converter, transform or partitioner class)
    stacktrace: str = ""

    @property
    def source_id(self) -> str:
        """The original record's coordinates: unique per dead letter, stable across runs and replays."""
        return f"{self.topic}/{self.partition}/{self.offset}"

    def to_json_line(self) -> bytes:
        """One JSON line (with its newline); key, value and header values in base64. Deterministic."""
        document = {
            "connector": self.connector,
            "topic": self.topic,
            "partition": self.partition,
            "offset": self.offset,
            "timestamp": self.timestamp,
            "key": b64(self.key),
            "value": b64(self.value),
            "headers": [[name, b64(value)] for name, value in self.headers],
            "error": {
                "class": self.error_class,
                "stage": self.stage,
                "message": self.message,
                "executing_class": self.executing_class,
                "stacktrace": self.stacktrace,
            },
        }
        return orjson.dumps(document) + b"\n"

    @classmethod
    def from_json_line(cls, line: bytes) -> DeadLetter:
        d = orjson.loads(line)
        e = d["error"]
        return cls(
            d["connector"],
            d["topic"],
            d["partition"],
            d["offset"],
            d["timestamp"],
            unb64(d["key"]),
            unb64(d["value"]),
            tuple((name, unb64(value)) for name, value in d["headers"]),
            e["class"],
            e["stage"],
            e["message"],
            e.get("executing_class", ""),
            e.get("stacktrace", ""),
        )

    def source_header(self) -> tuple[str, bytes]:
        return SOURCE_HEADER, orjson.dumps(
            {
                "connector": self.connector,
                "topic": self.topic,
                "partition": self.partition,
                "offset": self.offset,
                "timestamp": self.timestamp,
                "error_class": self.error_class,
                "stage": self.stage,
            }
        )

    def context_headers(self) -> list:
        """Kafka Connect's `__connect.errors.*` headers (task.id is the source partition: one task per range)."""
        context = {
            "topic": self.topic,
            "partition": self.partition,
            "offset": self.offset,
            "connector.name": self.connector,
            "task.id": self.partition,
            "stage": self.stage,
            "class.name": self.executing_class,
            "exception.class.name": f"sink_engine.errors.{self.error_class}",
            "exception.message": self.message,
            "exception.stacktrace": self.stacktrace,
        }
        return [(f"{CONNECT_PREFIX}{name}", str(value).encode()) for name, value in context.items()]

    def kafka_headers(self, with_context: bool) -> list:
        """The original headers, then the context headers (when asked for), then our source header."""
        return [*self.headers, *(self.context_headers() if with_context else []), self.source_header()]

    @classmethod
    def from_kafka(cls, key: bytes | None, value: bytes | None, headers: list) -> DeadLetter | None:
        """Rebuild from a dead-letter topic record; None for a record without our source header."""
        source = next((v for name, v in headers if name == SOURCE_HEADER), None)
        if source is None:
            return None
        s = orjson.loads(source)
        message = next(
            (
                v.decode("utf-8", "replace")
                for name, v in headers
                if name == f"{CONNECT_PREFIX}exception.message" and v is not None
            ),
            "",
        )
        original = tuple(
            (name, v) for name, v in headers if name != SOURCE_HEADER and not name.startswith(CONNECT_PREFIX)
        )
        return cls(
            s["connector"],
            s["topic"],
            s["partition"],
            s["offset"],
            s["timestamp"],
            key,
            value,
            original,
            s["error_class"],
            s["stage"],
            message,
        )


def b64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode("ascii")


def unb64(text: str | None) -> bytes | None:
    return None if text is None else base64.b64decode(text)
