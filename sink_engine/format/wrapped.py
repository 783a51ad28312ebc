"""Values that are not structs in the columnar formats: a struct of one field, which AvroFormat writes bare.

The Confluent connector writes each record view with the Avro schema AvroData gives its Connect schema. Its
AvroRecordWriterProvider asks RecordViews for the views as they are (`getViewSchema(record, false)`): a value, key
or header list that is not a struct makes an Avro file of that bare type (an int32 value an `"int"` file, a string
key a `"string"` `.keys.avro`, the headers an array of `{key, value}` records). Its ParquetRecordWriterProvider asks
for them enveloped (`getViewSchema(record, true)`), since Parquet needs a record at the top: keys as
`RecordKey{key}`, headers as `RecordHeaders{headers}`. A value that is not a struct the connector cannot write to
Parquet (AvroData gives a NonRecordContainer, which ParquetRecordWriterProvider casts to a GenericRecord); here it
is a record of one column `value`. StringConverter and ByteArrayConverter values stay such a record in Avro too
(the connector writes them bare): the deployed Athena tables read them (Hive's AvroSerDe needs a record).

`wrapped` builds the struct column; the BARE parameter of its schema tells AvroFormat to write the field alone.
"""

from __future__ import annotations

from functools import lru_cache

from sink_engine.convert.connect_json import Decoder, compile_decoder
from sink_engine.convert.schema import BARE, Field, Schema
from sink_engine.records import ValueColumn

_PLAIN = {"string": Schema("string"), "bytes": Schema("bytes")}


def wrapped(values: ValueColumn, field: str, name: str | None, bare: bool = True) -> ValueColumn:
    """A "struct" column of one field `field` (its struct named `name`, BARE unless not `bare`) holding each value of
    `values`: a string, bytes or struct column, or a "json" column with schemas (values with a schema that are not
    structs, kept as their Connect JSON text, read back here with their schemas)."""
    if values.kind in _PLAIN:
        schemas = [_PLAIN[values.kind]] * len(values)
        items = values.items
    else:
        assert values.schemas is not None, "a schemaless JSON column has no schema to wrap"
        schemas = values.schemas
        items = values.items if values.kind == "struct" else _decoded(values.documents(), schemas)
    rows = [{field: item} for item in items]
    return ValueColumn("struct", rows, rows, [wrapper(schema, field, name, bare) for schema in schemas])


@lru_cache(maxsize=256)
def wrapper(schema: Schema, field: str, name: str | None, bare: bool = True) -> Schema:
    """The struct of one field `field` of `schema`, marked BARE when `bare`."""
    parameters = ((BARE, "true"),) if bare else ()
    return Schema("struct", name=name, parameters=parameters, fields=(Field(field, schema),))


def _decoded(documents: list, schemas: list) -> list:
    """Python values (bytes, Decimal, dates) of the JSON view of values with a schema (connect_json.py)."""
    return [_decoder(schema)(document, "") for document, schema in zip(documents, schemas)]


@lru_cache(maxsize=256)
def _decoder(schema: Schema) -> Decoder:
    return compile_decoder(schema)
