"""AvroConverter: values in the Confluent Schema Registry wire format, read through confluent-kafka's client.

Wire format: magic byte 0, the schema id as 4 bytes big-endian, then the Avro binary datum. The writer
schema comes from the registry by id, with the schemas it names through schema references (fetched by
subject and version, recursively); its version (for `schema.compatibility`) is the version of that
schema under the subject `<topic>-value` (`<topic>-key` for keys, the TopicNameStrategy), or its only
version when it is registered under a single other subject. Each id is fetched once per task.
"""
from __future__ import annotations

import orjson
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.error import SchemaRegistryError

from sink_engine.convert.avro_schema import AvroDecoder
from sink_engine.convert.registry_converter import SchemaRegistryConverter
from sink_engine.errors import SourceError

MAGIC_BYTE = 0


class ConfluentAvroConverter(SchemaRegistryConverter):
    label = "AvroConverter"

    def __init__(self, client: SchemaRegistryClient, topic_subject: str):
        """`topic_subject` is the subject of the TopicNameStrategy, e.g. `orders-value`."""
        super().__init__()
        self._client, self._subject = client, topic_subject

    def split(self, value: bytes) -> tuple[int, bytes]:
        if len(value) < 5 or value[0] != MAGIC_BYTE:
            raise ValueError(f"unknown magic byte {value[:1].hex() or 'none'}: not in the Schema Registry wire "
                             "format (magic byte 0, 4-byte schema id)")
        return int.from_bytes(value[1:5], "big"), value[5:]

    def fetch(self, schema_id: int) -> AvroDecoder:
        try:
            schema = self._client.get_schema(schema_id)
            pairs = self._client.get_schema_versions(schema_id)
        except SchemaRegistryError as e:
            if e.http_status_code == 404:
                raise ValueError(f"schema id {schema_id} is not in the Schema Registry") from None
            raise SourceError(f"Schema Registry failed to return schema id {schema_id}: {e}") from e
        except Exception as e:  # transport errors of the HTTP client: the registry is unreachable
            raise SourceError(f"Schema Registry unreachable while fetching schema id {schema_id}: {e!r}") from e
        if (schema.schema_type or "AVRO") != "AVRO":
            raise ValueError(f"schema id {schema_id} is a {schema.schema_type} schema, not Avro")
        return AvroDecoder(schema.schema_str, self._version(pairs), self._referenced(schema, schema_id))

    def _referenced(self, schema, schema_id: int) -> list:
        """The schemas that `schema` refers to (schema references), recursively, each after its own."""
        found = []
        for reference in schema.references or []:
            try:
                registered = self._client.get_version(reference.subject, reference.version)
            except SchemaRegistryError as e:
                if e.http_status_code == 404:
                    raise ValueError(f"schema id {schema_id} refers to {reference.name} ({reference.subject} "
                                     f"version {reference.version}), which is not in the Schema Registry") from None
                raise SourceError(f"Schema Registry failed to return {reference.subject} version "
                                  f"{reference.version}: {e}") from e
            found += self._referenced(registered.schema, schema_id)
            found.append(orjson.loads(registered.schema.schema_str))
        return found

    def _version(self, pairs) -> int | None:
        mine = [p.version for p in pairs if p.subject == self._subject]
        if mine:
            return mine[0]
        return pairs[0].version if len(pairs) == 1 else None


def registry_client(settings: dict) -> SchemaRegistryClient:
    """A client from the `<role>.converter.*` settings (validated by config.converters)."""
    conf = {"url": settings["schema.registry.url"]}
    if settings["basic.auth.credentials.source"] == "user_info":
        conf["basic.auth.user.info"] = settings["basic.auth.user.info"]
    return SchemaRegistryClient(conf)
