"""What the Confluent Schema Registry converters share: the client, the wire header, lookups whose errors
name what was looked up, referenced schemas, and a schema's version under its subject.

Wire format (as confluent-kafka's serializers write it and its `SchemaId` reads it): magic byte 0, the schema
id as 4 bytes big-endian, for Protobuf the message indexes (zigzag varints), then the datum. Schema GUIDs
(magic byte 1) are not supported. The version of a schema (for `schema.compatibility`) is its version under
the subject that `<role>.converter.<role>.subject.name.strategy` names (SubjectNames), or its only version when
it is registered under a single other subject.
"""

from __future__ import annotations

import io
import struct
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from confluent_kafka.schema_registry import Schema as RegistrySchema
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.common.serde import SchemaId
from confluent_kafka.schema_registry.error import SchemaRegistryError
from confluent_kafka.serialization import SerializationError

from sink_engine.errors import SourceError


def registry_client(settings: Mapping[str, Any]) -> SchemaRegistryClient:
    """A client from the `<role>.converter.*` settings (validated by config.converters)."""
    conf = {"url": settings["schema.registry.url"]}
    if settings["basic.auth.credentials.source"] == "user_info":
        conf["basic.auth.user.info"] = settings["basic.auth.user.info"]
    return SchemaRegistryClient(conf)


def split_header(value: bytes, schema_type: str) -> tuple[int, tuple[int, ...] | None, bytes]:
    """(schema id, message indexes (Protobuf) or None, datum) of a value in the wire format; ValueError."""
    schema_id = SchemaId(schema_type)
    try:
        payload = schema_id.from_bytes(io.BytesIO(value))
    except (SerializationError, struct.error, IndexError, ValueError) as e:
        raise ValueError(f"not in the Schema Registry wire format (magic byte 0, 4-byte schema id): {e}") from None
    if schema_id.id is None:
        raise ValueError("schema GUIDs (magic byte 1) are not supported: the value must carry a schema id")
    indexes = tuple(schema_id.message_indexes) if schema_id.message_indexes is not None else None
    return schema_id.id, indexes, payload.read()


def split_schema_id(value: bytes, schema_type: str) -> tuple[bytes, bytes]:
    """(the 4 bytes of the schema id, the payload) of an Avro or JSON Schema value, cut off by slicing: the id is
    read once per schema. A value not in the wire format is read by confluent-kafka's SchemaId (`split_header`),
    whose ValueError names what is wrong (magic byte 1: schema GUIDs are not supported)."""
    if value[:1] != b"\x00" or len(value) < 5:
        split_header(value, schema_type)
    return value[1:5], value[5:]


@dataclass(frozen=True)
class SubjectNames:
    """The subject of a writer schema, as Confluent's subject name strategies name it (RecordNameStrategy and
    TopicRecordNameStrategy in io.confluent.kafka.serializers.subject): `topic` (TopicNameStrategy)
    `<topic>-<role>`; `record` the record's full name; `topicrecord` `<topic>-<record full name>`. The record
    name is the schema's `name()` in Confluent's ParsedSchema: an Avro record's full name, the full name of the
    Protobuf message the value's indexes name, a JSON Schema's `title`."""

    topic: str
    role: str = "value"  # value or key
    strategy: str = "topic"  # config.keys.SUBJECT_NAME_STRATEGIES

    def subject(self, record_name: str | None) -> str:
        """The subject; ValueError when the strategy needs a record name and the schema has none."""
        if self.strategy == "topic":
            return f"{self.topic}-{self.role}"
        if not record_name:
            raise ValueError(
                f"{self.role}.converter.{self.role}.subject.name.strategy names subjects by the "
                "record's full name, and this schema has none (not an Avro record, or a JSON Schema "
                "without a title)"
            )
        return record_name if self.strategy == "record" else f"{self.topic}-{record_name}"


class RegistryLookups:
    """Registry calls for one converter: 404 is a ValueError (the record is bad), anything else a SourceError."""

    def __init__(self, client: SchemaRegistryClient, subjects: SubjectNames):
        self.client, self.subjects = client, subjects

    def call(self, what: str, lookup: Callable[..., Any], *args: object, missing: str | None = None) -> Any:
        """`lookup(*args)`, with errors naming `what` (e.g. "schema id 7"); `missing` replaces the message of
        a 404."""
        try:
            return lookup(*args)
        except SchemaRegistryError as e:
            if e.http_status_code == 404:
                raise ValueError(missing or f"{what} is not in the Schema Registry") from None
            raise SourceError(f"Schema Registry failed to return {what}: {e}") from e
        except (ValueError, SerializationError):
            raise
        except Exception as e:  # transport errors of the HTTP client: the registry is unreachable
            raise SourceError(f"Schema Registry unreachable while fetching {what}: {e!r}") from e

    def schema(self, schema_id: int, schema_type: str, fmt: str | None = None) -> Any:
        """The registered schema of an id (a confluent_kafka Schema, whose `schema_str` a registry's answer always
        holds though the class types it Optional); ValueError when it is of another type."""
        schema = self.call(f"schema id {schema_id}", self.client.get_schema, schema_id, None, fmt)
        if (schema.schema_type or "AVRO") != schema_type:
            raise ValueError(f"schema id {schema_id} is a {schema.schema_type or 'AVRO'} schema, not {schema_type}")
        return schema

    def version(self, schema_id: int, record_name: str | None = None) -> int | None:
        """The version of `schema_id` under its subject (`record_name`: the schema's record full name, which
        RecordNameStrategy and TopicRecordNameStrategy name it by); ValueError when they need one it lacks."""
        try:
            subject = self.subjects.subject(record_name)
        except ValueError as e:
            raise ValueError(f"schema id {schema_id}: {e}") from None
        pairs = self.call(f"the versions of schema id {schema_id}", self.client.get_schema_versions, schema_id)
        mine = [p.version for p in pairs if p.subject == subject]
        if mine:
            return mine[0]
        return pairs[0].version if len(pairs) == 1 else None

    def referenced(self, schema: RegistrySchema, schema_id: int) -> list[tuple[str, Any]]:
        """(reference name, registered schema) of what `schema` refers to, recursively, each after its own."""
        found: list[tuple[str, Any]] = []
        for reference in schema.references or []:
            assert reference.name is not None  # Confluent's SchemaReference types it Optional; a registry's has one
            where = f"{reference.subject} version {reference.version}"
            registered = self.call(
                where,
                self.client.get_version,
                reference.subject,
                reference.version,
                missing=f"schema id {schema_id} refers to {reference.name} ({where}), which is not "
                "in the Schema Registry",
            )
            found += self.referenced(registered.schema, schema_id)
            found.append((reference.name, registered.schema))
        return found
