"""The engine's side of the differential transform test: `engine_outcomes(config, records)` runs WireRecords
(tests/connect_transforms_oracle.py) through the engine's own path, the converters and the record model of a task's
transform step (sink_engine/task/transforms.py) and the chain `transforms.*` builds, and writes each outcome in the
oracle's form: the record out with key, value and headers as the JsonConverter envelopes Kafka's JsonConverter
writes for them (`envelope`: JsonConverter.asJsonSchema's schema document and convertToJson's payload, nulls kept
as nulls), `{"dropped": True}`, `{"error": ...}`, or `{"config_error": ...}` for a chain that does not build.
`comparable(outcome)` rounds what JSON cannot tell apart (a float32 as Java's float and Python's double)."""

from __future__ import annotations

from typing import Any

import orjson

from sink_engine.convert.connect_json import JSON_TYPE_NAMES, to_json
from sink_engine.convert.envelope_json_converter import EnvelopeJsonConverter
from sink_engine.convert.json_converter import SchemalessJsonConverter
from sink_engine.convert.schema import DATE, DECIMAL, TIME, TIMESTAMP, Schema
from sink_engine.errors import ConfigError, TransformationError
from sink_engine.records import RecordChunk
from sink_engine.task.bad_records import StepFailed
from sink_engine.task.transforms import _converted, _records
from sink_engine.transform.java_values import float32
from sink_engine.transform.settings import TransformSettings
from sink_engine.validation import parse_checked_config
from tests.builders import connector_keys
from tests.connect_transforms_oracle import WirePart, WireRecord

_TYPE_NAMES = {connect: json for json, connect in JSON_TYPE_NAMES.items()}
_BASE = connector_keys({"topics": "orders", "format.class": "io.confluent.connect.s3.format.json.JsonFormat"})


def engine_outcomes(config: dict[str, str], records: list[WireRecord]) -> dict[str, Any]:
    try:
        chain = TransformSettings.from_config(parse_checked_config({"name": "oracle", **_BASE, **config})).build()
    except ConfigError as error:
        return {"config_error": f"ConfigError: {error}"}
    results = []
    for wire in records:
        try:
            record = chain.apply(_read(wire))
        except (TransformationError, StepFailed) as error:
            results.append({"error": f"{type(error).__name__}: {error}"})
            continue
        try:
            results.append({"dropped": True} if record is None else written(record))
        except NotWritable as error:
            results.append({"error": f"NotWritable: {error}"})
    return {"results": results}


def _read(wire: WireRecord):
    """The TransformRecord a task's transform step makes of the wire record (keys converted as well)."""
    chunk = RecordChunk(
        wire.topic,
        wire.partition,
        [wire.offset],
        [_bytes(wire.value)],
        keys=[_bytes(wire.key)],
        timestamps=[-1 if wire.timestamp is None else wire.timestamp],
    )
    chunk.headers = [list(wire.headers)]
    chunk.timestamp_types = [0 if wire.timestamp is None else 1]
    values, _ = _converted(chunk, chunk.values, _converter(wire.value), "VALUE_CONVERTER")
    keys, _ = _converted(chunk, chunk.keys, _converter(wire.key), "KEY_CONVERTER")
    return _records(chunk, values, keys)[0]


def _bytes(part: WirePart | None) -> bytes | None:
    return None if part is None else part.data


def _converter(part: WirePart | None):
    return EnvelopeJsonConverter() if part is not None and part.schemas else SchemalessJsonConverter()


def written(record) -> dict[str, Any]:
    return {
        "topic": record.topic,
        "partition": record.partition,
        "offset": record.offset,
        "timestamp": record.timestamp,
        "key": envelope(record.key_schema, record.key),
        "value": envelope(record.value_schema, record.value),
        "headers": [[header.name, envelope(header.schema, header.value)] for header in record.headers],
    }


def envelope(schema: Schema | None, value: Any) -> dict | None:
    if schema is None and value is None:
        return None
    return {"schema": None if schema is None else schema_document(schema), "payload": payload(schema, value)}


def schema_document(schema: Schema) -> dict[str, Any]:
    """JsonConverter.asJsonSchema of a schema."""
    document: dict[str, Any] = {"type": _TYPE_NAMES.get(schema.type, schema.type), "optional": schema.optional}
    if schema.type == "struct":
        document["fields"] = [{**schema_document(f.schema), "field": f.name} for f in schema.fields]
    elif schema.type == "array":
        assert schema.items is not None
        document["items"] = schema_document(schema.items)
    elif schema.type == "map":
        assert schema.keys is not None and schema.values is not None
        document["keys"], document["values"] = schema_document(schema.keys), schema_document(schema.values)
    if schema.name is not None:
        document["name"] = schema.name
    if schema.version is not None:
        document["version"] = schema.version
    if schema.parameters:
        document["parameters"] = dict(schema.parameters)
    if schema.default_value() is not None:
        document["default"] = payload(schema, schema.default_value())
    return document


class NotWritable(Exception):
    """A null under a required schema: JsonConverter (replace.null.with.default=false) refuses to write it."""


def payload(schema: Schema | None, value: Any) -> Any:
    """JsonConverter.convertToJson of a value of `schema` (schemaless when None); a struct value whose names are
    not its schema's is written as such, so that it cannot compare equal."""
    if value is None:
        if schema is not None and not schema.optional:
            raise NotWritable(f"a null value for a required {schema.describe()}")
        return None
    if schema is None:
        return _plain(value)
    if schema.type == "struct":
        names = [f.name for f in schema.fields]
        if not isinstance(value, dict) or sorted(value) != sorted(names):
            return {"<a struct value unlike its schema>": repr(value)}
        return {f.name: payload(f.schema, value[f.name]) for f in schema.fields}
    if schema.type == "array":
        return [payload(schema.items, item) for item in value]
    if schema.type == "map":
        if schema.keys is not None and schema.keys.type == "string":
            return {k: payload(schema.values, v) for k, v in value.items()}
        return [[payload(schema.keys, k), payload(schema.values, v)] for k, v in value.items()]
    if schema.name in (DECIMAL, DATE, TIME, TIMESTAMP) or schema.type == "bytes":
        return _plain(value)
    return value


def _plain(value: Any) -> Any:
    """A schemaless value as JsonConverter writes it (to_json's encoding of bytes, Decimal and dates)."""
    return orjson.loads(to_json(value))


def comparable(outcome: dict[str, Any]) -> dict[str, Any]:
    """An outcome with float32 values (payloads and defaults) rounded to float32, a map's [key, value] pairs in one
    order, and an error's message dropped."""
    if "error" in outcome:
        return {"error": True}
    if "config_error" in outcome:
        return {"config_error": True}
    if "results" in outcome:
        return {"results": [comparable(result) for result in outcome["results"]]}
    if "dropped" in outcome:
        return outcome
    rounded = dict(outcome)
    for part in ("key", "value"):
        rounded[part] = _rounded_envelope(outcome[part])
    rounded["headers"] = [[name, _rounded_envelope(value)] for name, value in outcome["headers"]]
    return rounded


def _rounded_envelope(envelope_: dict | None) -> dict | None:
    if envelope_ is None or envelope_["schema"] is None:
        return envelope_
    return {
        "schema": _rounded_schema(envelope_["schema"]),
        "payload": _rounded(envelope_["schema"], envelope_["payload"]),
    }


def _rounded_schema(document: dict) -> dict:
    rounded = dict(document)
    for name in ("items", "keys", "values"):
        if name in document:
            rounded[name] = _rounded_schema(document[name])
    if "fields" in document:
        rounded["fields"] = [_rounded_schema(f) for f in document["fields"]]
    if "default" in document:
        rounded["default"] = _rounded(document, document["default"])
    return rounded


def _rounded(document: dict, value: Any) -> Any:
    if value is None:
        return None
    kind = document["type"]
    if kind == "float":
        return float32(float(value))
    if kind == "double":
        return float(value)
    if kind == "struct" and isinstance(value, dict):
        return {f["field"]: _rounded(f, value.get(f["field"])) for f in document["fields"]} | {
            k: v for k, v in value.items() if k not in {f["field"] for f in document["fields"]}
        }
    if kind == "array" and isinstance(value, list):
        return [_rounded(document["items"], item) for item in value]
    if kind == "map" and isinstance(value, dict):
        return {k: _rounded(document["values"], v) for k, v in value.items()}
    if kind == "map" and isinstance(value, list):  # [key, value] pairs: a map's order is not its content (HashMap)
        pairs = [[_rounded(document["keys"], k), _rounded(document["values"], v)] for k, v in value]
        return sorted(pairs, key=lambda pair: orjson.dumps(pair[0]))
    return value
