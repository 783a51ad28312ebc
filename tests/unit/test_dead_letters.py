"""Dead letters: wire forms, S3 keys, settings and replay requests, without I/O."""

from __future__ import annotations

import pytest

from sink_engine.config import parse_config
from sink_engine.dlq.letter import DeadLetter
from sink_engine.dlq.replay_request import request_from_payload
from sink_engine.dlq.s3_destination import WINDOW_OFFSETS, S3Destination
from sink_engine.dlq.settings import DeadLetterSettings
from sink_engine.errors import ConfigError
from tests.builders import connector_keys

BASE = connector_keys(
    {"topics": "orders", "s3.bucket.name": "lake", "value.converter.schemas.enable": "false", "errors.tolerance": "all"}
)


def letter(offset: int, **changes) -> DeadLetter:
    fields = dict(
        connector="c",
        topic="orders",
        partition=2,
        offset=offset,
        timestamp=1_700_000_000_000,
        key=b"\xff\x00",
        value=b"{bad",
        headers=(("h", b"\x01"), ("none", None)),
        error_class="ConversionError",
        stage="VALUE_CONVERTER",
        message="value is not valid JSON",
        executing_class="sink_engine.convert.json_converter.SchemalessJsonConverter",
        stacktrace="tb",
    )
    fields.update(changes)
    return DeadLetter(**fields)


@pytest.mark.parametrize("changes", [{}, {"key": None, "value": None, "headers": (), "timestamp": None}])
def test_json_line_round_trip_keeps_bytes_exactly(changes):
    original = letter(7, **changes)
    line = original.to_json_line()
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert DeadLetter.from_json_line(line) == original


def test_kafka_headers_carry_the_context_and_rebuild_the_letter():
    original = letter(7)
    headers = original.kafka_headers(with_context=True)
    names = [name for name, _ in headers]
    assert names[:2] == ["h", "none"]
    assert {
        "__connect.errors.topic",
        "__connect.errors.partition",
        "__connect.errors.offset",
        "__connect.errors.connector.name",
        "__connect.errors.task.id",
        "__connect.errors.stage",
        "__connect.errors.class.name",
        "__connect.errors.exception.class.name",
        "__connect.errors.exception.message",
        "__connect.errors.exception.stacktrace",
    } <= set(names)
    assert dict(headers)["__connect.errors.exception.class.name"] == b"sink_engine.errors.ConversionError"
    rebuilt = DeadLetter.from_kafka(original.key, original.value, headers)
    assert rebuilt.headers == original.headers and rebuilt.source_id == "orders/2/7"
    assert (rebuilt.error_class, rebuilt.message) == ("ConversionError", "value is not valid JSON")
    assert DeadLetter.from_kafka(b"k", b"v", [("other", b"x")]) is None


def test_s3_objects_are_one_per_offset_window_keyed_by_their_first_letter():
    config = parse_config({"name": "c", **BASE, "errors.deadletterqueue.s3.prefix": "/dead/"})
    destination = S3Destination.from_settings(DeadLetterSettings.from_config(config), uploader=None)
    letters = [letter(5), letter(9), letter(WINDOW_OFFSETS + 3)]
    objects = destination.objects(letters)
    assert [key for key, _ in objects] == [
        "dead/orders/partition=2/orders+2+0000000005.json",
        f"dead/orders/partition=2/orders+2+{WINDOW_OFFSETS + 3:010d}.json",
    ]
    assert objects[0][1] == letters[0].to_json_line() + letters[1].to_json_line()
    # the same letters give the same bytes (a rerun overwrites, never duplicates)
    assert destination.objects(letters) == objects


@pytest.mark.parametrize(
    "settings, key",
    [
        (
            {"errors.deadletterqueue.topic.name": "dlq", "errors.deadletterqueue.s3.prefix": "dlq"},
            "errors.deadletterqueue.s3.prefix",
        ),
        ({"errors.deadletterqueue.topic.name": "orders"}, "errors.deadletterqueue.topic.name"),
        ({"errors.deadletterqueue.s3.prefix": "topics/"}, "errors.deadletterqueue.s3.prefix"),
        ({"errors.tolerance": "some"}, "errors.tolerance"),
    ],
)
def test_dead_letter_settings_that_cannot_work_name_the_key(settings, key):
    with pytest.raises(ConfigError) as caught:
        parse_config({"name": "c", **BASE, **settings})
    assert caught.value.key == key


def test_replay_request_defaults_to_the_connectors_queue_and_reads_times():
    config = parse_config({"name": "c", **BASE, "errors.deadletterqueue.topic.name": "orders-dlq"})
    request = request_from_payload(
        {
            "connector": "c",
            "window": {"from_time": "2023-11-14T22:13:20Z", "to_time": 1_700_000_000_001},
            "filters": {"error_classes": ["ConversionError"], "partition": 2},
        },
        DeadLetterSettings.from_config(config),
    )
    assert request.source_topic == "orders-dlq" and request.source_s3_prefix is None
    assert request.matches(letter(1))
    assert not request.matches(letter(1, timestamp=1_700_000_000_001))
    assert not request.matches(letter(1, error_class="NullValueError"))
    assert not request.matches(letter(1, partition=0))


@pytest.mark.parametrize(
    "payload, field",
    [
        ({"connector": "other"}, "connector"),
        ({"connector": "c", "max_records": 0}, "max_records"),
        ({"connector": "c", "window": {"to_time": "yesterday"}}, "to_time"),
        ({"connector": "c", "source": {"topic": "a", "s3_prefix": "b"}}, "source"),
        ({"connector": "c", "window": []}, "window"),
    ],
)
def test_replay_request_errors_name_the_field(payload, field):
    config = parse_config({"name": "c", **BASE, "errors.deadletterqueue.topic.name": "orders-dlq"})
    with pytest.raises(ConfigError) as caught:
        request_from_payload(payload, DeadLetterSettings.from_config(config))
    assert caught.value.key == field
