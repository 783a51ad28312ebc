"""AvroConverter: values in the Confluent Schema Registry wire format, read through confluent-kafka's client.

Wire format: magic byte 0, the schema id as 4 bytes big-endian, then the Avro binary datum. The writer
schema comes from the registry by id, with the schemas it names through schema references (fetched by
subject and version, recursively); its version (for `schema.compatibility`) is the version of that
schema under its subject (`<topic>-value` by default; by a record's full name, namespace included, under the
record name strategies: see confluent_registry.py). Each id is fetched once per task.
"""

from __future__ import annotations

from functools import partial

import orjson
from confluent_kafka.schema_registry import SchemaRegistryClient

from sink_engine.convert.avro_schema import AvroDecoder
from sink_engine.convert.confluent_registry import RegistryLookups, SubjectNames, split_schema_id
from sink_engine.convert.registry_converter import SchemaRegistryConverter


class ConfluentAvroConverter(SchemaRegistryConverter):
    label = "AvroConverter"

    def __init__(self, client: SchemaRegistryClient, subjects: SubjectNames):
        super().__init__()
        self._registry = RegistryLookups(client, subjects)

    # (the 4 bytes of the schema id, the datum): the id is read once per schema, in `fetch`; one call per record
    split = staticmethod(partial(split_schema_id, schema_type="AVRO"))

    def fetch(self, id_bytes: bytes) -> AvroDecoder:
        schema_id = int.from_bytes(id_bytes, "big")
        schema = self._registry.schema(schema_id, "AVRO")
        referenced = [orjson.loads(s.schema_str) for _, s in self._registry.referenced(schema, schema_id)]
        document = orjson.loads(schema.schema_str)
        return AvroDecoder(document, self._registry.version(schema_id, record_name(document)), referenced)


def record_name(document: object) -> str | None:
    """The full name of an Avro record schema (its name when dotted, else namespace.name), None for other
    schemas: Confluent's AvroSchema.name()."""
    if not isinstance(document, dict) or document.get("type") != "record" or not document.get("name"):
        return None
    name, namespace = document["name"], document.get("namespace")
    return name if "." in name or not namespace else f"{namespace}.{name}"
