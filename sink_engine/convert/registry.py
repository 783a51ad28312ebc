"""Converter by its canonical config name (see config.keys.CONVERTER_CLASSES), for values or keys."""

from __future__ import annotations

from sink_engine.convert.base import Converter
from sink_engine.convert.confluent_avro_converter import ConfluentAvroConverter
from sink_engine.convert.confluent_registry import SubjectNames, registry_client
from sink_engine.convert.envelope_json_converter import EnvelopeJsonConverter
from sink_engine.convert.glue_converter import GlueSchemaRegistryConverter, glue_client
from sink_engine.convert.json_converter import SchemalessJsonConverter
from sink_engine.convert.settings import ConverterSettings
from sink_engine.convert.text_converters import ByteArrayConverter, StringConverter


def converter_for(settings: ConverterSettings, topic: str = "") -> Converter:
    """The converter of `settings.role` (value or key) for records of `topic` (the registry subject's topic)."""
    name, options = settings.name, settings.options
    subject = SubjectNames(topic, settings.role, options[f"{settings.role}.subject.name.strategy"])
    if name == "json":
        if options["schemas.enable"]:
            return EnvelopeJsonConverter()
        return SchemalessJsonConverter(keep_documents=settings.keep_documents)
    if name == "avro":
        return ConfluentAvroConverter(registry_client(options), subject)
    if name == "protobuf":  # imported here: Protobuf's runtime loads only for the topics that use it
        from sink_engine.convert.confluent_protobuf_converter import ConfluentProtobufConverter  # imports protobuf

        return ConfluentProtobufConverter(registry_client(options), subject, options["wrapper.for.nullables"])
    if name == "jsonschema":
        from sink_engine.convert.confluent_json_schema_converter import ConfluentJsonSchemaConverter  # imports pyarrow

        return ConfluentJsonSchemaConverter(registry_client(options), subject, options["json.fail.invalid.schema"])
    if name == "glueavro":
        return GlueSchemaRegistryConverter(glue_client(options))
    plain: dict[str, type[Converter]] = {"string": StringConverter, "bytearray": ByteArrayConverter}
    return plain[name]()
