"""Columns and SerDe of a topic's Athena (Glue) table, derived from the topic's schema as the engine writes it.

Synthesis has no registry access, so the schema is declared in the environment settings,
`catalog.tables.<topic>` (see infra/settings.py): an Avro record schema (for a registry topic, the subject's
`<topic>-value` schema as registered) or a column list of Avro types, which is the same record. Values of
StringConverter and ByteArrayConverter need none: they are one column `value` (string, binary). The schema goes
the engine's own way, then through one mapping, `hive_type` (Arrow type -> Hive type):

- records with a schema (AvroConverter, AWSKafkaAvroConverter, JsonConverter envelopes, ...): the Avro schema
  becomes the Connect schema the converter reads (sink_engine.convert.avro_schema), then its Arrow columns
  (sink_engine.convert.arrow_types): Parquet holds those; Avro files hold the Avro schema the engine derives from
  them (sink_engine.format.avro_schema, the table's `avro.schema.literal`); JSON lines hold what Connect's
  JsonConverter writes (Date as days, Time as ms of the day, Timestamp as epoch ms, bytes as base64 text,
  Decimal as base64 text, or a number with `json.decimal.format=NUMERIC`).
- schemaless JSON (`schemas.enable=false`): the schema describes the documents, in JSON's own types (null,
  boolean, int, long, float, double, string, enum, records, arrays, maps; a union of several types is a field
  whose values mix types). JSON lines keep them; Parquet and Avro hold what the engine infers per file (integers
  as long, numbers as double, records as structs, a mixed field as its JSON text: see
  sink_engine.format.json_inference), so that is what their tables declare. Maps, bytes and logical types have
  no inferred counterpart there and are refused.

Formats: Parquet (ParquetHiveSerDe), Avro (AvroSerDe with `avro.schema.literal`), JsonFormat with or without
gzip and BlockGzipFormat (the OpenX JSON SerDe; Athena reads `.gz` objects, a series of gzip members included,
as gzip). Column names are lower case; a JSON key that is not a valid column name (`user-id`) is read through
the SerDe's `mapping.<column>`. ByteArrayFormat, and JSON lines of string or bytes values (JSON strings, not
objects), have no table.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

import pyarrow as pa

from infra.errors import SettingsError
from sink_engine.config import SinkConfig
from sink_engine.convert.arrow_types import arrow_type
from sink_engine.convert.avro_schema import UNION, connect_schema
from sink_engine.convert.schema import DATE, DECIMAL, FLOAT_TYPES, INTEGER_TYPES, TIME, TIMESTAMP, Field, Schema
from sink_engine.convert.settings import ConverterSettings
from sink_engine.format.avro_schema import avro_schema
from sink_engine.format.settings import FormatSettings

_TEXT = ("org.apache.hadoop.mapred.TextInputFormat", "org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat")
_SERDES = {  # engine format -> (classification, SerDe, input format, output format)
    "json": ("json", "org.openx.data.jsonserde.JsonSerDe", *_TEXT),
    "blockgzip": ("json", "org.openx.data.jsonserde.JsonSerDe", *_TEXT),
    "parquet": (
        "parquet",
        "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe",
        "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
        "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
    ),
    "avro": (
        "avro",
        "org.apache.hadoop.hive.serde2.avro.AvroSerDe",
        "org.apache.hadoop.hive.ql.io.avro.AvroContainerInputFormat",
        "org.apache.hadoop.hive.ql.io.avro.AvroContainerOutputFormat",
    ),
}
JSON_FORMATS = ("json", "blockgzip")
_NAME = re.compile(r"[a-z_][a-z0-9_]*")
_SINGLE_COLUMN = {"string": pa.string(), "bytearray": pa.binary()}


@dataclass(frozen=True)
class TableStorage:
    """What a Glue table needs to read one connector's objects of one topic."""

    classification: str
    serde: str
    input_format: str
    output_format: str
    columns: tuple[tuple[str, str], ...]  # (name, Hive type)
    serde_parameters: dict[str, str] = field(default_factory=dict)


def table_storage(
    config: SinkConfig,
    topic: str,
    declared: dict | None,
    settings_source: str,
    partition_fields: frozenset[str] = frozenset(),
) -> TableStorage | None:
    """The table storage of `topic` as `config` writes it, from its declared Avro record schema (None: none
    declared); None when the output has no table. Top-level fields named in `partition_fields` (lower case) are
    left out: their partition columns hold their values. SettingsError naming `catalog.tables.<topic>` when the
    declared schema cannot be a table of this output."""
    formats, values = FormatSettings.from_config(config), ConverterSettings.from_config(config)
    fmt, converter = formats.format_class, values.name
    setting = f"catalog.tables.{topic}"

    def refuse(message: str) -> SettingsError:
        return SettingsError(settings_source, setting, f"{message} (connector {config.name}, {fmt} output)")

    tabular = fmt in _SERDES and not (converter in _SINGLE_COLUMN and fmt in JSON_FORMATS)
    if declared is not None and (not tabular or converter in _SINGLE_COLUMN):
        raise refuse(
            f"declares columns, but {converter} values in this format are not records: they get "
            "no declared columns" + ("" if tabular else ", and no table")
        )
    if not tabular or (declared is None and converter not in _SINGLE_COLUMN):
        return None
    try:
        if converter in _SINGLE_COLUMN:
            arrow = pa.schema([pa.field("value", _SINGLE_COLUMN[converter])])
        else:
            arrow = _arrow_schema(_as_written(connect_schema(declared), formats, values))
        return _storage(fmt, arrow, partition_fields)
    except KeyError as e:
        raise refuse(f"Avro type {e} has no column type") from None
    except (TypeError, ValueError) as e:
        raise refuse(str(e)) from None


def _as_written(schema: Schema, formats: FormatSettings, values: ConverterSettings) -> Schema:
    """The Connect schema of what lands in the format, from the declared one."""
    schemaless = values.name == "json" and not values.options["schemas.enable"]
    if formats.format_class in JSON_FORMATS:
        return _json_documents(schema) if schemaless else _json_written(schema, formats.json_decimal_format)
    return _inferred(schema) if schemaless else schema


def _json_written(schema: Schema, decimal_format: str) -> Schema:
    """What Connect's JsonConverter writes for values of `schema` (sink_engine.convert.connect_json)."""
    if schema.name in (DATE, TIME):
        return Schema("int32", True)
    if schema.name == TIMESTAMP:
        return Schema("int64", True)
    if schema.name == DECIMAL:
        return (
            Schema(schema.type, True, name=DECIMAL, parameters=schema.parameters)
            if decimal_format == "numeric"
            else Schema("string", True)
        )
    if schema.type == "bytes":
        return Schema("string", True)
    if schema.type == "map" and schema.keys is not None and schema.keys.type != "string":
        raise TypeError("a map with non-string keys is written to JSON as an array of pairs; declare string keys")
    return _rebuild(schema, lambda child, name: _json_written(child, decimal_format))


def _json_documents(schema: Schema, path: str = "") -> Schema:
    """Schemaless JSON kept as it is: JSON's types only; a union of several types holds any JSON (text)."""
    _json_types_only(schema, path)
    if schema.name == UNION:
        return Schema("string", True)
    return _rebuild(schema, lambda child, name: _json_documents(child, f"{path}.{name}" if path else name))


def _inferred(schema: Schema, path: str = "") -> Schema:
    """What sink_engine.format.json_inference makes of JSON documents of this schema in Parquet and Avro."""
    _json_types_only(schema, path)
    if schema.type == "map":
        raise TypeError(
            f"field {path!r} is a map: schemaless JSON objects land as structs of their keys in "
            "Parquet and Avro; declare it as a record of its keys"
        )
    if schema.name == UNION:
        return Schema("string", True)  # a field whose values mix types is written as their JSON text
    if schema.type in INTEGER_TYPES:
        return Schema("int64", True)
    if schema.type in FLOAT_TYPES:
        return Schema("float64", True)
    return _rebuild(schema, lambda child, name: _inferred(child, f"{path}.{name}" if path else name))


def _json_types_only(schema: Schema, path: str) -> None:
    if schema.type == "bytes" or (schema.name is not None and schema.name.startswith("org.apache.kafka.connect.data")):
        raise TypeError(
            f"field {path or '(value)'!r}: schemaless JSON has no {schema.name or 'bytes'} values; "
            "declare JSON's own types (boolean, long, double, string, records, arrays, maps)"
        )


def _rebuild(schema: Schema, child) -> Schema:
    """`schema` made optional, with `child(schema, name)` applied to its fields, items (`[]`) and values (`{}`)."""
    if schema.type == "struct":
        fields = tuple(Field(f.name, child(f.schema, f.name)) for f in schema.fields)
        return Schema("struct", True, name=schema.name, fields=fields)
    if schema.type == "array":
        return Schema("array", True, items=child(schema.items, "[]"))
    if schema.type == "map":
        return Schema("map", True, keys=schema.keys, values=child(schema.values, "{}"))
    return Schema(schema.type, True, name=schema.name, parameters=schema.parameters)


def _arrow_schema(schema: Schema) -> pa.Schema:
    if schema.type != "struct" or schema.name == UNION:
        raise TypeError("the declared schema must be a record: its fields are the table's columns")
    return pa.schema([pa.field(f.name, arrow_type(f.schema), nullable=True) for f in schema.fields])


def _storage(fmt: str, arrow: pa.Schema, partition_fields: frozenset[str]) -> TableStorage:
    classification, serde, input_format, output_format = _SERDES[fmt]
    parameters: dict[str, str] = {}
    if fmt == "avro":
        literal, _ = avro_schema(arrow)  # TypeError: the engine cannot write such a column as Avro either
        # the table's schema reads the files' records without those fields (Avro schema resolution skips them)
        literal["fields"] = [f for f in literal["fields"] if f["name"].lower() not in partition_fields]
        parameters["avro.schema.literal"] = json.dumps(literal, separators=(",", ":"))
        columns = [(f["name"].lower(), hive_type(avro_arrow_type(f["type"]))) for f in literal["fields"]]
    else:
        columns = []
        for column in arrow:
            name = column.name.lower()
            if name in partition_fields:
                continue
            if not _NAME.fullmatch(name):
                if fmt not in JSON_FORMATS:
                    raise TypeError(
                        f"field {column.name!r} is not a valid column name (letters, digits, _), "
                        "which Parquet columns are read by"
                    )
                name = re.sub(r"[^a-z0-9_]", "_", name)
                name = name if _NAME.fullmatch(name) else "_" + name
                parameters[f"mapping.{name}"] = column.name
            columns.append((name, hive_type(column.type)))
    names = [name for name, _ in columns]
    for name in names:
        if names.count(name) > 1:
            raise TypeError(f"two fields give the column {name!r} (column names are lower case)")
    return TableStorage(classification, serde, input_format, output_format, tuple(columns), parameters)


def hive_type(t: pa.DataType) -> str:
    """The Hive (Glue, Athena) type of an Arrow type; TypeError for one Athena cannot read (time, null)."""
    simple = (
        (pa.types.is_boolean, "boolean"),
        (pa.types.is_int8, "tinyint"),
        (pa.types.is_int16, "smallint"),
        (pa.types.is_int32, "int"),
        (pa.types.is_int64, "bigint"),
        (pa.types.is_float32, "float"),
        (pa.types.is_float64, "double"),
        (pa.types.is_string, "string"),
        (pa.types.is_large_string, "string"),
        (pa.types.is_binary, "binary"),
        (pa.types.is_large_binary, "binary"),
        (pa.types.is_date32, "date"),
        (pa.types.is_timestamp, "timestamp"),
    )
    for predicate, name in simple:
        if predicate(t):
            return name
    if pa.types.is_decimal(t):
        return f"decimal({t.precision},{t.scale})"
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return f"array<{hive_type(t.value_type)}>"
    if pa.types.is_map(t):
        return f"map<{hive_type(t.key_type)},{hive_type(t.item_type)}>"
    if pa.types.is_struct(t):
        members = []
        for member in t:
            if not _NAME.fullmatch(member.name.lower()):
                raise TypeError(f"nested field {member.name!r} is not a valid Hive name (letters, digits, _)")
            members.append(f"{member.name.lower()}:{hive_type(member.type)}")
        return f"struct<{','.join(members)}>"
    raise TypeError(f"Arrow type {t} has no Hive type Athena reads")


def avro_arrow_type(avro) -> pa.DataType:
    """The Arrow type of an Avro type of the engine's Avro files (sink_engine.format.avro_schema's output)."""
    if isinstance(avro, list):
        (branch,) = [b for b in avro if b != "null"]
        return avro_arrow_type(branch)
    if isinstance(avro, str):
        avro = {"type": avro}
    kind, logical = avro["type"], avro.get("logicalType")
    if logical == "date":
        return pa.date32()
    if logical in ("timestamp-millis", "timestamp-micros"):
        return pa.timestamp("ms" if logical == "timestamp-millis" else "us", tz="UTC")
    if kind == "array":
        return pa.list_(avro_arrow_type(avro["items"]))
    if kind == "record":
        return pa.struct([pa.field(f["name"], avro_arrow_type(f["type"])) for f in avro["fields"]])
    return {
        "boolean": pa.bool_(),
        "int": pa.int32(),
        "long": pa.int64(),
        "float": pa.float32(),
        "double": pa.float64(),
        "string": pa.string(),
        "bytes": pa.binary(),
    }[kind]
