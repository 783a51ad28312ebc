"""JsonSchemaConverter: JSON values in the Confluent Schema Registry wire format, read with confluent-kafka.

The header is magic byte 0 and the schema id (4 bytes, big-endian); a value without it is read by confluent-kafka's
`SchemaId`, which names what is wrong (magic byte 1, a schema GUID, is not supported). Per schema id, once per task,
the writer schema and the schemas it refers to (schema references, by subject and version, recursively)
come from the registry through confluent-kafka's client (its version under its subject: confluent_registry.py,
by the schema's `title` under the record name strategies) and are mapped to a Connect schema
(json_schema_mapping.py); for that mapping `$ref`s resolve within them only, never over the network. Each
payload is parsed as JSON and read as a value of that schema (connect_json.py), which checks every field's
type. With `json.fail.invalid.schema` (Confluent's deserializer setting, false by default as there) each
value is also validated against the writer schema by confluent-kafka's JSONDeserializer (jsonschema, its
references resolved as that deserializer resolves them), which costs about 60 us per record. Values of the
schemas json_schema_arrow.py covers are read columnarly, a run of one schema id at a time, after that validation
(registry_converter.py).
"""

from __future__ import annotations

from typing import Any

import orjson
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.json_schema import JSONDeserializer
from confluent_kafka.serialization import MessageField, SerializationContext, SerializationError

from sink_engine.convert.confluent_registry import RegistryLookups, SubjectNames, split_schema_id
from sink_engine.convert.connect_json import compile_decoder
from sink_engine.convert.json_schema_arrow import arrow_reader
from sink_engine.convert.json_schema_mapping import connect_schema, resource_registry
from sink_engine.convert.registry_converter import SchemaRegistryConverter
from sink_engine.convert.schema import Schema

JSON = "JSON"


class ConfluentJsonSchemaConverter(SchemaRegistryConverter):
    label = "JsonSchemaConverter"

    def __init__(self, client: SchemaRegistryClient, subjects: SubjectNames, validate: bool = False):
        """`validate` is `json.fail.invalid.schema`."""
        super().__init__()
        self._registry = RegistryLookups(client, subjects)
        self._validator = None
        if validate:  # the deserializer validates against the writer schema by id: its subject name plays no part
            field = MessageField.KEY if subjects.role == "key" else MessageField.VALUE
            self._context = SerializationContext(subjects.topic, field)
            self._validator = JSONDeserializer(
                None, schema_registry_client=client, conf={"subject.name.strategy.type": "TOPIC"}
            )

    def split(self, value: bytes) -> tuple[bytes, bytes]:
        """(the 4 bytes of the schema id, the payload): the id is read once per schema, in `fetch`. A value
        not in the wire format is read by confluent-kafka's SchemaId, whose error names what is wrong."""
        id_bytes, payload = split_schema_id(value, JSON)
        if self._validator is not None:
            self._validate(value, int.from_bytes(id_bytes, "big"))
        return id_bytes, payload

    def fetch(self, id_bytes: bytes) -> _JsonSchemaDecoder:
        schema_id = int.from_bytes(id_bytes, "big")
        schema = self._registry.schema(schema_id, JSON)
        references = {
            name: _parsed(s.schema_str, f"{name} (referenced by schema id {schema_id})")
            for name, s in self._registry.referenced(schema, schema_id)
        }
        document = _parsed(schema.schema_str, f"schema id {schema_id}")
        version = self._registry.version(schema_id, _title(document))
        try:
            mapped = connect_schema(document, version, resource_registry(references))
        except ValueError as e:
            raise ValueError(f"schema id {schema_id} has no Connect schema: {e}") from None
        return _JsonSchemaDecoder(mapped)

    def _validate(self, value: bytes, schema_id: int) -> None:
        assert self._validator is not None  # split validates only with one
        try:
            self._registry.call(f"schema id {schema_id}", self._validator, value, self._context)
        except SerializationError as e:
            raise ValueError(f"value does not validate against schema id {schema_id}: {e}") from None


class _JsonSchemaDecoder:
    def __init__(self, schema: Schema) -> None:
        self.schema, self._decode, self.arrow = schema, compile_decoder(schema), arrow_reader(schema)

    def decode(self, payload: bytes) -> Any:
        try:
            document = orjson.loads(payload)
        except orjson.JSONDecodeError as e:
            raise ValueError(f"JSON payload is not valid JSON: {e}") from None
        return self._decode(document, "")


def _title(document: object) -> str | None:
    """Confluent's JsonSchema.name(): the schema's `title`."""
    title = document.get("title") if isinstance(document, dict) else None
    return title if isinstance(title, str) else None


def _parsed(text: str, what: str) -> Any:
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError as e:
        raise ValueError(f"{what} is not valid JSON: {e}") from None
