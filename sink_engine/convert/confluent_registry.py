"""What the Confluent Schema Registry converters share: the client, the wire header, lookups whose errors
name what was looked up, referenced schemas, and a schema's version under the topic's subject.

Wire format (as confluent-kafka's serializers write it and its `SchemaId` reads it): magic byte 0, the schema
id as 4 bytes big-endian, for Protobuf the message indexes (zigzag varints), then the datum. Schema GUIDs
(magic byte 1) are not supported. The version of a schema (for `schema.compatibility`) is its version under
the subject `<topic>-value` (`<topic>-key` for keys, the TopicNameStrategy), or its only version when it is
registered under a single other subject.
"""
from __future__ import annotations

import io
import struct
from typing import Any, Callable

from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.common.serde import SchemaId
from confluent_kafka.schema_registry.error import SchemaRegistryError
from confluent_kafka.serialization import SerializationError

from sink_engine.errors import SourceError


def registry_client(settings: dict) -> SchemaRegistryClient:
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


class RegistryLookups:
    """Registry calls for one converter: 404 is a ValueError (the record is bad), anything else a SourceError."""

    def __init__(self, client: SchemaRegistryClient, topic_subject: str):
        """`topic_subject` is the subject of the TopicNameStrategy, e.g. `orders-value`."""
        self.client, self.subject = client, topic_subject

    def call(self, what: str, lookup: Callable, *args, missing: str | None = None) -> Any:
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

    def schema(self, schema_id: int, schema_type: str, fmt: str | None = None):
        """The registered schema of an id; ValueError when it is of another type."""
        schema = self.call(f"schema id {schema_id}", self.client.get_schema, schema_id, None, fmt)
        if (schema.schema_type or "AVRO") != schema_type:
            raise ValueError(f"schema id {schema_id} is a {schema.schema_type or 'AVRO'} schema, not {schema_type}")
        return schema

    def version(self, schema_id: int) -> int | None:
        pairs = self.call(f"the versions of schema id {schema_id}", self.client.get_schema_versions, schema_id)
        mine = [p.version for p in pairs if p.subject == self.subject]
        if mine:
            return mine[0]
        return pairs[0].version if len(pairs) == 1 else None

    def referenced(self, schema, schema_id: int) -> list[tuple[str, Any]]:
        """(reference name, registered schema) of what `schema` refers to, recursively, each after its own."""
        found = []
        for reference in schema.references or []:
            where = f"{reference.subject} version {reference.version}"
            registered = self.call(where, self.client.get_version, reference.subject, reference.version,
                                   missing=f"schema id {schema_id} refers to {reference.name} ({where}), which is not "
                                           "in the Schema Registry")
            found += self.referenced(registered.schema, schema_id)
            found.append((reference.name, registered.schema))
        return found
