"""The schema registry of each converter that reads one: Confluent's Schema Registry (Avro, Protobuf, JSON Schema
converters: GET /subjects with the converter's URL and basic auth), or the AWS Glue Schema Registry (the
converter's only call, glue:GetSchemaVersion, asked for a version id that names no version: EntityNotFound
proves the call is allowed, AccessDenied that it is not, without reading any schema)."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING

from botocore.exceptions import ClientError

from sink_engine.config import SinkConfig
from sink_engine.convert.confluent_registry import registry_client
from sink_engine.convert.glue_converter import glue_client
from sink_engine.convert.settings import ConverterSettings
from sink_engine.doctor.checks import Check, Failed

if TYPE_CHECKING:
    from sink_engine.doctor.runner import Context

CONFLUENT = ("avro", "protobuf", "jsonschema")
NO_SUCH_VERSION = str(uuid.UUID(int=0))


def registry_of(role: str) -> Callable[[Context], str]:
    """The probe of the `role` (value or key) converter's registry."""

    def probe(context: Context) -> str:
        settings = ConverterSettings.from_config(context.config, role)
        if settings.name in CONFLUENT:
            return _confluent(settings)
        return _glue(settings)

    return probe


def _confluent(settings: ConverterSettings) -> str:
    url = settings.options["schema.registry.url"]
    try:
        subjects = registry_client(settings.options).get_subjects()
    except Exception as e:  # noqa: BLE001 - the client raises requests', httpx' and its own errors
        raise Failed(
            f"Schema Registry at {url} ({settings.role}.converter.schema.registry.url): {type(e).__name__}: {e}"
        ) from None
    return f"Schema Registry at {url}: {len(subjects)} subjects"


def _glue(settings: ConverterSettings) -> str:
    client = glue_client(settings.options)
    try:
        client.get_schema_version(SchemaVersionId=NO_SUCH_VERSION)
    except ClientError as e:
        if e.response.get("Error", {}).get("Code") == "EntityNotFoundException":
            return f"AWS Glue Schema Registry in {client.meta.region_name}: glue:GetSchemaVersion is allowed"
        raise
    return f"AWS Glue Schema Registry in {client.meta.region_name}: reachable"


def _reads_registry(role: str) -> Callable[[SinkConfig], bool]:
    return lambda config: ConverterSettings.from_config(config, role).name in (*CONFLUENT, "glueavro")


CHECKS = tuple(
    Check(f"schema registry ({role})", registry_of(role), service="glue", applies=_reads_registry(role))
    for role in ("value", "key")
)
