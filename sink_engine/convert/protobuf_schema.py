"""Protobuf messages as Connect schemas and values, as Confluent's ProtobufData maps them (its defaults).

- A message is a struct named by the message's simple name; every field is optional. int32, sint32,
  sfixed32 -> int32; int64, sint64, sfixed64 -> int64; uint32, fixed32 -> int64; uint64, fixed64 -> int64
  (values past 2^63 - 1 wrap to negative, as a Java long holds them); float -> float32, double -> float64,
  bool -> boolean, string -> string, bytes -> bytes; an enum -> string (the value's name; a number the
  schema does not know becomes `UNKNOWN_ENUM_VALUE_<Enum>_<number>`), named by the enum's simple name.
- repeated -> array of optional items; map -> map (entries in key order, so that the output does not depend
  on the parser's hash order); a message field -> its struct.
- A oneof -> one field `<oneof name>_<oneof index>`, a struct named `io.confluent.connect.protobuf.Union.
  <oneof name>` with one optional field per member, the set member filled (null when none is set). proto3
  `optional` fields are plain optional fields.
- Unset fields: a message, a oneof and a field with explicit presence (proto3 `optional`, proto2) are null;
  any other field takes its Protobuf default (0, "", false, the first enum value, []).
- Well-known types: google.protobuf.Timestamp -> Timestamp (milliseconds, as Connect's Timestamp holds
  them), google.type.Date -> Date, google.type.TimeOfDay -> Time, confluent.type.Decimal -> Decimal (scale
  and precision from the field's `(confluent.field_meta).params`, scale 0 when not given). Wrappers
  (google.protobuf.Int32Value, ...) are structs with one field `value`, unless `wrapper_for_nullables`
  (ProtobufConverter's `wrapper.for.nullables`) makes them the optional primitive. Duration and the others
  are structs of their fields. A message that contains itself has no finite Connect schema (ValueError).
"""

from __future__ import annotations

import datetime
import decimal
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from confluent_kafka.schema_registry.confluent import meta_pb2
from google.protobuf import descriptor_pb2
from google.protobuf.descriptor import Descriptor, FieldDescriptor, OneofDescriptor
from google.protobuf.message import DecodeError, Message
from google.protobuf.message_factory import GetMessageClass

from sink_engine.convert.connect_json import EPOCH
from sink_engine.convert.schema import DATE, DECIMAL, TIME, TIMESTAMP, Field, Schema

if TYPE_CHECKING:  # protobuf_arrow imports this module
    from sink_engine.convert.protobuf_arrow import ArrowProtobufReader

UNION_PREFIX = "io.confluent.connect.protobuf.Union."
_SCALARS = {
    FieldDescriptor.TYPE_INT32: "int32",
    FieldDescriptor.TYPE_SINT32: "int32",
    FieldDescriptor.TYPE_SFIXED32: "int32",
    FieldDescriptor.TYPE_INT64: "int64",
    FieldDescriptor.TYPE_SINT64: "int64",
    FieldDescriptor.TYPE_SFIXED64: "int64",
    FieldDescriptor.TYPE_UINT32: "int64",
    FieldDescriptor.TYPE_FIXED32: "int64",
    FieldDescriptor.TYPE_UINT64: "int64",
    FieldDescriptor.TYPE_FIXED64: "int64",
    FieldDescriptor.TYPE_FLOAT: "float32",
    FieldDescriptor.TYPE_DOUBLE: "float64",
    FieldDescriptor.TYPE_BOOL: "boolean",
    FieldDescriptor.TYPE_STRING: "string",
    FieldDescriptor.TYPE_BYTES: "bytes",
}
WRAPPERS = {
    "google.protobuf.DoubleValue",
    "google.protobuf.FloatValue",
    "google.protobuf.Int64Value",
    "google.protobuf.UInt64Value",
    "google.protobuf.Int32Value",
    "google.protobuf.UInt32Value",
    "google.protobuf.BoolValue",
    "google.protobuf.StringValue",
    "google.protobuf.BytesValue",
}
_UNSIGNED_64 = (FieldDescriptor.TYPE_UINT64, FieldDescriptor.TYPE_FIXED64)
_EXACT = decimal.Context(prec=decimal.MAX_PREC)

Reader = Callable[[Any], Any]  # a Protobuf value (message, scalar) -> its Connect value


class ProtobufDecoder:
    """Decodes the Protobuf binary of one message type into the values of its Connect schema."""

    def __init__(self, descriptor: Descriptor, version: int | None, wrapper_for_nullables: bool = False):
        schema, self._read = _Compiler(wrapper_for_nullables).message(descriptor)
        self.schema = Schema(**{**schema.__dict__, "optional": False, "version": version})
        self._message_class = GetMessageClass(descriptor)
        # a columnar reader (protobuf_arrow.py), set by the converter when the schema is covered
        self.arrow: ArrowProtobufReader | None = None

    def decode(self, payload: bytes) -> dict:
        """The value of one message; ValueError when the bytes are not a message of this type."""
        try:
            message = self._message_class.FromString(payload)
        except DecodeError as e:
            raise ValueError(f"Protobuf payload is not a {self._message_class.DESCRIPTOR.full_name}: {e}") from None
        return self._read(message)


class _Compiler:
    """Builds the (schema, reader) of message types, refusing a message that contains itself."""

    def __init__(self, wrapper_for_nullables: bool):
        self._wrappers = wrapper_for_nullables
        self._open: list[str] = []

    def message(self, descriptor: Descriptor) -> tuple[Schema, Reader]:
        special = _well_known(descriptor, self._wrappers)
        if special is not None:
            return special
        if descriptor.full_name in self._open:
            raise ValueError(
                f"message {descriptor.full_name} contains itself; a recursive message has no Connect schema"
            )
        self._open.append(descriptor.full_name)
        try:
            fields, readers = self._fields(descriptor)
        finally:
            self._open.pop()

        def read(message: Message) -> dict:
            return {name: reader(message) for name, reader in readers}

        return Schema("struct", True, name=descriptor.name, fields=tuple(fields)), read

    def _fields(self, descriptor: Descriptor) -> tuple[list[Field], list[tuple[str, Reader]]]:
        fields, readers, synthetic, seen = [], [], synthetic_oneofs(descriptor), set()
        for fd in descriptor.fields:
            oneof = fd.containing_oneof
            if oneof is not None and oneof.index not in synthetic:
                if oneof.index not in seen:
                    seen.add(oneof.index)
                    schema, reader = self._oneof(oneof)
                    fields.append(Field(f"{oneof.name}_{oneof.index}", schema))
                    readers.append((fields[-1].name, reader))
                continue
            schema, reader = self._field(fd)
            fields.append(Field(fd.name, schema))
            readers.append((fd.name, reader))
        return fields, readers

    def _oneof(self, oneof: OneofDescriptor) -> tuple[Schema, Reader]:
        members = [(fd.name, *self._value(fd)) for fd in oneof.fields]
        empty = dict.fromkeys(name for name, _, _ in members)
        converters = {name: convert for name, _, convert in members}
        union_name = oneof.name

        def read(message: Message) -> dict | None:
            chosen = message.WhichOneof(union_name)
            return None if chosen is None else {**empty, chosen: converters[chosen](getattr(message, chosen))}

        schema = Schema(
            "struct",
            True,
            name=UNION_PREFIX + oneof.name,
            fields=tuple(Field(name, schema) for name, schema, _ in members),
        )
        return schema, read

    def _field(self, fd: FieldDescriptor) -> tuple[Schema, Reader]:
        name = fd.name
        if fd.message_type is not None and fd.message_type.GetOptions().map_entry:
            return self._map(fd)
        item_schema, convert = self._value(fd)
        if fd.is_repeated:
            if convert is _same:
                return Schema("array", True, items=item_schema), lambda m: list(getattr(m, name))
            return Schema("array", True, items=item_schema), lambda m: [convert(v) for v in getattr(m, name)]
        if fd.has_presence:
            return item_schema, lambda m: convert(getattr(m, name)) if m.HasField(name) else None
        if convert is _same:
            return item_schema, lambda m: getattr(m, name)
        return item_schema, lambda m: convert(getattr(m, name))

    def _map(self, fd: FieldDescriptor) -> tuple[Schema, Reader]:
        entry, name = fd.message_type, fd.name
        key_schema, key = _scalar(entry.fields_by_name["key"])
        value_schema, value = self._value(entry.fields_by_name["value"])
        schema = Schema("map", True, keys=Schema(**{**key_schema.__dict__, "optional": False}), values=value_schema)
        return schema, lambda m: {key(k): value(v) for k, v in sorted(getattr(m, name).items())}

    def _value(self, fd: FieldDescriptor) -> tuple[Schema, Reader]:
        """The schema (optional) and converter of one value of the field (an item when it is repeated)."""
        if fd.message_type is not None:
            schema, read = self.message(fd.message_type)
            return Schema(**{**schema.__dict__, "parameters": _decimal_parameters(fd, schema)}), _scaled(
                read, fd, schema
            )
        return _scalar(fd)


def _scalar(fd: FieldDescriptor) -> tuple[Schema, Reader]:
    if fd.type == FieldDescriptor.TYPE_ENUM:
        enum = fd.enum_type
        names = {number: value.name for number, value in enum.values_by_number.items()}
        unknown = f"UNKNOWN_ENUM_VALUE_{enum.name}_"
        return Schema("string", True, name=enum.name), lambda n: names.get(n) or f"{unknown}{n}"
    if fd.type in _UNSIGNED_64:
        return Schema("int64", True), lambda n: n - (1 << 64) if n >= 1 << 63 else n
    return Schema(_SCALARS[fd.type], True), _same


def _same(value: object) -> object:
    return value


def _well_known(descriptor: Descriptor, wrappers: bool) -> tuple[Schema, Reader] | None:
    name = descriptor.full_name
    if name == "google.protobuf.Timestamp":
        return Schema("int64", True, name=TIMESTAMP), _timestamp
    if name == "google.type.Date":
        return Schema("int32", True, name=DATE), _date
    if name == "google.type.TimeOfDay":
        return Schema("int32", True, name=TIME), _time_of_day
    if name == "confluent.type.Decimal":
        return Schema("bytes", True, name=DECIMAL), _decimal
    if wrappers and name in WRAPPERS:
        schema, convert = _scalar(descriptor.fields_by_name["value"])
        return schema, lambda message: convert(message.value)
    return None


def _timestamp(message: Message) -> datetime.datetime:
    return EPOCH + datetime.timedelta(seconds=message.seconds, milliseconds=message.nanos // 1_000_000)


def _date(message: Message) -> datetime.date:
    try:
        return datetime.date(message.year, message.month, message.day)
    except ValueError:
        raise ValueError(f"google.type.Date {message.year}-{message.month}-{message.day} is not a full date") from None


def _time_of_day(message: Message) -> datetime.time:
    try:
        return datetime.time(message.hours, message.minutes, message.seconds, message.nanos // 1_000_000 * 1000)
    except ValueError:
        raise ValueError(
            f"google.type.TimeOfDay {message.hours}:{message.minutes}:{message.seconds} is not a time of day"
        ) from None


def _decimal(message: Message) -> decimal.Decimal:
    return decimal.Decimal(f"{int.from_bytes(message.value, 'big', signed=True)}E{-message.scale}")  # exact


def _decimal_parameters(fd: FieldDescriptor, schema: Schema) -> tuple:
    if schema.name != DECIMAL:
        return schema.parameters
    # field_meta is made by protobuf's generated-code builder at import (confluent-kafka ships no meta_pb2.pyi)
    params = dict(fd.GetOptions().Extensions[meta_pb2.field_meta].params)  # type: ignore[attr-defined]
    found = {"scale": params.get("scale", "0")}
    if "precision" in params:
        found["connect.decimal.precision"] = params["precision"]
    return tuple(sorted(found.items()))


def _scaled(read: Reader, fd: FieldDescriptor, schema: Schema) -> Reader:
    """A Decimal reader that gives values at the schema's scale (exactly, else ValueError)."""
    if schema.name != DECIMAL:
        return read
    scale = int(dict(_decimal_parameters(fd, schema))["scale"])
    exponent = decimal.Decimal(1).scaleb(-scale)

    def scaled(message: Message) -> decimal.Decimal:
        value = read(message)
        fitted = value.quantize(exponent, context=_EXACT)
        if fitted != value:
            raise ValueError(
                f"{fd.name}: decimal {value} has more digits after the point than the field's scale "
                f"({scale}; set (confluent.field_meta).params scale)"
            )
        return fitted

    return scaled


def synthetic_oneofs(descriptor: Descriptor) -> set[int]:
    """Indexes of the oneofs protoc makes for proto3 `optional` fields (not unions)."""
    proto = descriptor_pb2.DescriptorProto()
    descriptor.CopyToProto(proto)
    return {field.oneof_index for field in proto.field if field.proto3_optional}
