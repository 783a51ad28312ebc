"""Converter by its canonical config name (see config.keys.CONVERTER_CLASSES), for values or keys."""
from __future__ import annotations

from sink_engine.config import SinkConfig
from sink_engine.config.keys import KEYS
from sink_engine.convert.base import Converter
from sink_engine.convert.confluent_avro_converter import ConfluentAvroConverter
from sink_engine.convert.confluent_registry import registry_client
from sink_engine.convert.envelope_json_converter import EnvelopeJsonConverter
from sink_engine.convert.glue_converter import GlueSchemaRegistryConverter, glue_client
from sink_engine.convert.json_converter import SchemalessJsonConverter
from sink_engine.convert.text_converters import ByteArrayConverter, StringConverter


def converter_for(config: SinkConfig, role: str = "value", topic: str = "") -> Converter:
    """The `<role>.converter` (role: value or key) for records of `topic` (the registry subject's topic)."""
    name, prefix = config[f"{role}.converter"], f"{role}.converter."
    if name == "json":
        if config[prefix + "schemas.enable"]:
            return EnvelopeJsonConverter()
        return SchemalessJsonConverter(keep_documents=role == "value" and reads_value_fields(config))
    if name == "avro":
        return ConfluentAvroConverter(registry_client(_settings(config, prefix)), f"{topic}-{role}")
    if name == "protobuf":  # imported here: Protobuf's runtime loads only for the topics that use it
        from sink_engine.convert.confluent_protobuf_converter import ConfluentProtobufConverter

        return ConfluentProtobufConverter(registry_client(_settings(config, prefix)), f"{topic}-{role}",
                                          config[prefix + "wrapper.for.nullables"])
    if name == "jsonschema":
        from sink_engine.convert.confluent_json_schema_converter import ConfluentJsonSchemaConverter

        return ConfluentJsonSchemaConverter(registry_client(_settings(config, prefix)), f"{topic}-{role}",
                                            config[prefix + "json.fail.invalid.schema"])
    if name == "glueavro":
        return GlueSchemaRegistryConverter(glue_client(_settings(config, prefix)))
    return {"string": StringConverter, "bytearray": ByteArrayConverter}[name]()


def reads_value_fields(config: SinkConfig) -> bool:
    """Whether partitioning or rotation reads fields of the values (a field partitioner, or record times from
    `timestamp.field`), so that parsed values are worth keeping (`ValueColumn.documents()`)."""
    return config["partitioner.class"] in ("field", "fieldtime") or config["timestamp.extractor"] == "recordfield"


def _settings(config: SinkConfig, prefix: str) -> dict:
    """The `<prefix>*` keys without the prefix."""
    return {k.name[len(prefix):]: config[k.name] for k in KEYS if k.name.startswith(prefix)}
