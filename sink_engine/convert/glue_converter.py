"""AWSKafkaAvroConverter: values in the AWS Glue Schema Registry wire format, read through boto3.

Wire format: header version byte 3, compression byte (0 none, 5 zlib), the 16-byte schema version UUID,
then the datum (zlib-compressed when the compression byte is 5). The schema version comes from
`glue.get_schema_version` once per UUID and task. An AVRO schema decodes the datum as Avro binary (the
version number is the schema's version for `schema.compatibility`); a JSON schema keeps the datum as a
schemaless JSON document. Settings follow the AWS converter's: `<role>.converter.region`, `.endpoint`.
"""

from __future__ import annotations

import uuid
import zlib
from collections.abc import Mapping
from typing import Any

import boto3
import orjson
from botocore.exceptions import BotoCoreError, ClientError

from sink_engine.aws_types import GlueClient
from sink_engine.convert.avro_schema import AvroDecoder
from sink_engine.convert.registry_converter import SchemaRegistryConverter
from sink_engine.errors import SourceError

HEADER_VERSION = 3
COMPRESSION_NONE, COMPRESSION_ZLIB = 0, 5
HEADER_LENGTH = 18


class GlueSchemaRegistryConverter(SchemaRegistryConverter):
    label = "AWSKafkaAvroConverter"

    def __init__(self, glue_client: GlueClient) -> None:
        super().__init__()
        self._glue = glue_client

    def split(self, value: bytes) -> tuple[bytes, bytes]:
        """(the 16 bytes of the schema version UUID, the datum)."""
        if len(value) < HEADER_LENGTH or value[0] != HEADER_VERSION:
            raise ValueError(
                f"header version byte {value[:1].hex() or 'none'} is not 03: not in the AWS Glue "
                "Schema Registry wire format"
            )
        payload = value[HEADER_LENGTH:]
        if value[1] == COMPRESSION_ZLIB:
            try:
                payload = zlib.decompress(payload)
            except zlib.error as e:
                raise ValueError(f"zlib-compressed payload does not decompress: {e}") from None
        elif value[1] != COMPRESSION_NONE:
            raise ValueError(f"unknown compression byte {value[1]} (0 none, 5 zlib)")
        return value[2:HEADER_LENGTH], payload

    def fetch(self, version_bytes: bytes) -> AvroDecoder | _JsonDocument:
        version_id = uuid.UUID(bytes=version_bytes)
        try:
            found = self._glue.get_schema_version(SchemaVersionId=str(version_id))
        except ClientError as e:
            if e.response["Error"]["Code"] == "EntityNotFoundException":
                raise ValueError(f"schema version {version_id} is not in the Glue Schema Registry") from None
            raise SourceError(f"Glue Schema Registry failed to return schema version {version_id}: {e}") from e
        except BotoCoreError as e:
            raise SourceError(f"Glue Schema Registry unreachable for schema version {version_id}: {e}") from e
        data_format = found.get("DataFormat", "AVRO")
        if data_format == "AVRO":
            return AvroDecoder(found["SchemaDefinition"], found.get("VersionNumber"))
        if data_format == "JSON":
            return _JsonDocument()
        raise ValueError(f"schema version {version_id} has data format {data_format}, which is not supported")


class _JsonDocument:
    """A JSON-format datum: kept as a schemaless JSON document."""

    schema = None

    def decode(self, payload: bytes) -> Any:
        try:
            return orjson.loads(payload)
        except orjson.JSONDecodeError as e:
            raise ValueError(f"JSON payload is not valid JSON: {e}") from None


def glue_client(settings: Mapping[str, Any]) -> GlueClient:
    """A Glue client for `region` (else boto3's default region) and `endpoint` (else boto3's resolution)."""
    return boto3.client("glue", region_name=settings.get("region"), endpoint_url=settings.get("endpoint"))
