"""ProtobufConverter: Protobuf values in the Confluent Schema Registry wire format, read with confluent-kafka.

The header (schema id and message indexes) is read by confluent-kafka's `SchemaId`, once per distinct header
(`split` only cuts it off; the usual one, indexes [0], by slicing). Per schema id and message, once per task: the
writer schema comes from the registry through confluent-kafka's client as a serialized FileDescriptorProto
(`format=serialized`: the registry parses the .proto text), and confluent-kafka's ProtobufDeserializer resolves it
as it does for its own reads: it adds the files the schema imports through schema references (fetched the same
way, recursively) and the well-known types to a descriptor pool and finds the message the indexes name. The
message class is built from that descriptor and parses each payload directly: the deserializer's own per-record
call re-resolves the schema each time (about 10 us a record, twenty times the parse). Values are mapped to
Connect as ProtobufData maps them (protobuf_schema.py); the schema version is the one under its subject
(confluent_registry.py), named after that message's full name under the record name strategies. When ptars is
installed and covers the message, runs of records are read columnarly instead (protobuf_arrow.py,
registry_converter.py).
"""

from __future__ import annotations

import binascii

from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer
from confluent_kafka.serialization import SerializationError
from google.protobuf import empty_pb2

from sink_engine.convert import protobuf_arrow
from sink_engine.convert.confluent_registry import RegistryLookups, SubjectNames, split_header
from sink_engine.convert.protobuf_schema import ProtobufDecoder
from sink_engine.convert.registry_converter import SchemaRegistryConverter

PROTOBUF = "PROTOBUF"


class ConfluentProtobufConverter(SchemaRegistryConverter):
    label = "ProtobufConverter"

    def __init__(self, client: SchemaRegistryClient, subjects: SubjectNames, wrapper_for_nullables: bool = False):
        """`wrapper_for_nullables` is ProtobufConverter's `wrapper.for.nullables`."""
        super().__init__()
        self._registry = RegistryLookups(client, subjects)
        self._wrappers = wrapper_for_nullables
        # Used for its schema resolution only: the message type it is built with is never parsed.
        self._resolver = ProtobufDeserializer(empty_pb2.Empty, {"subject.name.strategy.type": "TOPIC"}, client)

    def split(self, value: bytes) -> tuple[bytes, bytes]:
        """(the header: magic byte, schema id and message indexes, read once per header in `fetch`; the payload)."""
        if len(value) > 5 and value[0] == 0 and value[5] == 0:  # indexes [0] (the first message) are one 0 byte
            return value[:6], value[6:]
        _, _, payload = split_header(value, PROTOBUF)
        return value[: len(value) - len(payload)], payload

    def fetch(self, header: bytes) -> ProtobufDecoder:
        schema_id, indexes, _ = split_header(header, PROTOBUF)
        assert indexes is not None  # a Protobuf header has its message indexes
        what = f"schema id {schema_id}"
        writer = self._registry.schema(schema_id, PROTOBUF, "serialized")
        resolver = self._resolver
        try:
            file_proto, pool = self._registry.call(f"the schemas {what} refers to", resolver._get_parsed_schema, writer)
            descriptor = resolver._get_message_desc(pool, pool.FindFileByName(file_proto.name), list(indexes))
        except (SerializationError, binascii.Error, TypeError) as e:
            raise ValueError(
                f"{what} is not a Protobuf schema this converter can read (the registry must answer "
                f"format=serialized with a FileDescriptorProto): {e}"
            ) from None
        decoder = ProtobufDecoder(descriptor, self._registry.version(schema_id, descriptor.full_name), self._wrappers)
        decoder.arrow = protobuf_arrow.arrow_reader(descriptor, decoder.schema, self._wrappers)
        return decoder
