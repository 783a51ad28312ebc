"""Columnar decoding of Protobuf messages: the payloads of one message type read by ptars (Rust, straight from the
wire format into Arrow), then shaped into the Arrow types of the message's Connect schema, so that the table is the
one the general path (protobuf_schema.ProtobufDecoder per message, `Table.from_pylist`) builds from the same payloads.

Shaping: uint32 and fixed32 to int64, uint64 and fixed64 wrapped to int64 (a Java long); enum numbers to their
names (`UNKNOWN_ENUM_VALUE_<Enum>_<n>` for a number the schema does not know); google.protobuf.Timestamp from
nanoseconds to milliseconds, floored as the general path floors them; wrappers, which ptars reads as their nullable
primitive, back to a struct `{value}` unless `wrapper.for.nullables`; the members of a oneof into its union struct;
map entries sorted by key; every field nullable as the Connect schema makes it.

Contract of `ArrowProtobufReader.read`: a table equal to the general path's, or None (the caller then takes the
general path, which names a bad payload by its offset). None when upb, the general path's parser, refuses a payload
(the payloads are framed as the repeated field of a wrapper message and parsed in one call, to check them, not to
read them); when ptars refuses one (or panics); when a Timestamp is outside the years 1677 to 2262, which ptars'
nanoseconds cannot hold; or where ptars reads valid bytes otherwise than upb: two members of one oneof set (upb
keeps the last) or a map key twice (upb keeps the last entry).

Covered schemas (`arrow_reader` answers None for others): messages of proto3 files with at least one field, of
scalars, enums, nested messages, google.protobuf.Timestamp, wrappers, proto3 `optional` fields, oneofs, maps, and
repeated fields of these. google.type.Date, google.type.TimeOfDay, google.protobuf.Duration,
confluent.type.Decimal, messages without fields and proto2 or editions files take the general path.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import chain
from types import ModuleType
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from google.protobuf import descriptor_pb2
from google.protobuf.descriptor import Descriptor, EnumDescriptor, FieldDescriptor, OneofDescriptor
from google.protobuf.message import DecodeError, Message
from google.protobuf.message_factory import GetMessageClass

from sink_engine.convert.arrow_types import arrow_schema, arrow_type
from sink_engine.convert.native import import_optional, or_none
from sink_engine.convert.protobuf_schema import WRAPPERS, synthetic_oneofs
from sink_engine.convert.schema import Schema

_UNLOADED = object()
ptars: Any = _UNLOADED  # the module once a Protobuf schema asks for it; None if not installed

Shape = Callable[[pa.Array], pa.Array]  # what ptars read for a field -> the array of the field's Connect type
_NOT_COVERED = {"google.type.Date", "google.type.TimeOfDay", "google.protobuf.Duration", "confluent.type.Decimal"}
_WRAPPED_64 = (FieldDescriptor.TYPE_UINT64, FieldDescriptor.TYPE_FIXED64)
_TIMESTAMP_MS = pa.timestamp("ms", tz="UTC")
_INT64 = np.iinfo(np.int64)


class _Refused(Exception):
    """Values ptars reads otherwise than upb: the run takes the general path."""


class ArrowProtobufReader:
    """Reads payloads of one message type into the Arrow table of its Connect schema (module docstring)."""

    def __init__(self, descriptor: Descriptor, connect_schema: Schema, columns: Callable):
        config = ptars.PtarsConfig(timestamp_unit="ns")
        self._handler = ptars.HandlerPool([descriptor.file], config=config).get_for_message(descriptor)
        self._batch = _batch_class(descriptor)
        self._columns = columns
        self._target = arrow_schema(connect_schema)
        self._prefixes = _Prefixes()

    def read(self, payloads: list) -> pa.Table | None:
        framed = b"".join(chain.from_iterable(zip(map(self._prefixes.__getitem__, map(len, payloads)), payloads)))
        try:
            self._batch.FromString(framed)
        except DecodeError:
            return None
        read = or_none(self._handler.list_to_record_batch, payloads)
        if read is None:
            return None
        try:
            columns = self._columns(read.to_struct_array())
        except _Refused:
            return None
        return pa.Table.from_batches([pa.RecordBatch.from_arrays(columns, schema=self._target)])


def arrow_reader(
    descriptor: Descriptor,
    connect_schema: Schema,
    wrapper_for_nullables: bool,
) -> ArrowProtobufReader | None:
    """The columnar reader of a message type, or None when ptars is missing, the schema is not covered or ptars
    cannot build a handler for it."""
    columns = _Shaper(wrapper_for_nullables).message(descriptor, connect_schema)
    if columns is None or _load_ptars() is None:
        return None
    return or_none(ArrowProtobufReader, descriptor, connect_schema, columns)  # None: a schema ptars cannot take


def _load_ptars() -> ModuleType | None:
    """ptars, imported on first use; None without it (every batch then takes the general path)."""
    global ptars
    if ptars is _UNLOADED:
        ptars = import_optional("ptars")
    return ptars


class _Shaper:
    """Shapes of a message's Connect fields (protobuf_schema's, in its order); None when not covered."""

    def __init__(self, wrapper_for_nullables: bool):
        self._wrappers = wrapper_for_nullables

    def message(self, descriptor: Descriptor, schema: Schema) -> Callable[[pa.StructArray], list] | None:
        if not descriptor.fields or not _proto3(descriptor):
            return None
        parts, synthetic, seen, connect = [], synthetic_oneofs(descriptor), set(), iter(schema.fields)
        for fd in descriptor.fields:
            oneof = fd.containing_oneof
            if oneof is not None and oneof.index not in synthetic:
                if oneof.index in seen:
                    continue
                seen.add(oneof.index)
                part = self._oneof(oneof, next(connect).schema)
            else:
                shape = self._field(fd, next(connect).schema)
                part = None if shape is None else _child(fd.name, shape)
            if part is None:
                return None
            parts.append(part)
        return lambda struct: [part(struct) for part in parts]

    def _field(self, fd: FieldDescriptor, schema: Schema) -> Shape | None:
        if fd.message_type is not None and fd.message_type.GetOptions().map_entry:
            return self._map(fd.message_type, schema)
        if not fd.is_repeated:
            return self._value(fd, schema)
        assert schema.items is not None  # a repeated field's array
        items, type_ = self._value(fd, schema.items), arrow_type(schema)
        if items is None:
            return None
        return lambda lists: pa.ListArray.from_arrays(lists.offsets, items(lists.values), type=type_)

    def _oneof(self, oneof: OneofDescriptor, schema: Schema) -> Shape | None:
        members: list[tuple[str, Shape]] = []
        for fd in oneof.fields:
            field = schema.field(fd.name)
            assert field is not None  # protobuf_schema gives the oneof's struct a field per member
            shape = self._value(fd, field.schema)
            if shape is None:
                return None
            members.append((fd.name, shape))
        fields = list(arrow_type(schema))

        def part(struct: pa.StructArray) -> pa.Array:
            read = [struct.field(name) for name, _ in members]
            set_ = np.sum([array.is_valid().to_numpy(zero_copy_only=False) for array in read], axis=0)
            if set_.max(initial=0) > 1:
                raise _Refused()
            return pa.StructArray.from_arrays(
                [shape(array) for (_, shape), array in zip(members, read)], fields=fields, mask=pa.array(set_ == 0)
            )

        return part

    def _map(self, entry: Descriptor, schema: Schema) -> Shape | None:
        assert schema.keys is not None and schema.values is not None
        keys = self._value(entry.fields_by_name["key"], schema.keys)
        values = self._value(entry.fields_by_name["value"], schema.values)
        if keys is None or values is None:
            return None
        type_ = arrow_type(schema)

        def shape(maps: pa.MapArray) -> pa.Array:
            found, items = maps.keys, maps.items
            if len(found):
                rows = pa.array(np.repeat(np.arange(len(maps)), np.diff(maps.offsets.to_numpy())))
                order = pc.sort_indices(
                    pa.table({"row": rows, "key": found}), sort_keys=[("row", "ascending"), ("key", "ascending")]
                )
                rows, found, items = rows.take(order), found.take(order), items.take(order)
                if pc.any(pc.and_(pc.equal(rows[1:], rows[:-1]), pc.equal(found[1:], found[:-1]))).as_py():
                    raise _Refused()
            return pa.MapArray.from_arrays(maps.offsets, keys(found), values(items), type=type_)

        return shape

    def _value(self, fd: FieldDescriptor, schema: Schema) -> Shape | None:
        """The shape of one value of the field (an item when it is repeated), `schema` its Connect schema."""
        message = fd.message_type
        if message is None:
            return _enum(fd.enum_type) if fd.type == FieldDescriptor.TYPE_ENUM else _scalar(fd, schema)
        name = message.full_name
        if name == "google.protobuf.Timestamp":
            return _timestamps
        if name in WRAPPERS:
            inner = _scalar(message.fields_by_name["value"], schema if self._wrappers else schema.fields[0].schema)
            return inner if self._wrappers else _struct(lambda values: [inner(values)], arrow_type(schema))
        if name in _NOT_COVERED:
            return None
        children = self.message(message, schema)
        return None if children is None else _struct(children, arrow_type(schema))


def _child(name: str, shape: Shape) -> Callable[[pa.StructArray], pa.Array]:
    return lambda struct: shape(struct.field(name))


def _struct(children: Callable, type_: pa.DataType) -> Shape:
    fields = list(type_)
    return lambda array: pa.StructArray.from_arrays(
        children(array), fields=fields, mask=pc.is_null(array) if array.null_count else None
    )


def _scalar(fd: FieldDescriptor, schema: Schema) -> Shape:
    target = arrow_type(schema)
    if fd.type in _WRAPPED_64:
        return lambda array: pc.cast(array, target, safe=False)
    return lambda array: array.cast(target)


def _enum(enum: EnumDescriptor) -> Shape:
    known = {number: value.name for number, value in enum.values_by_number.items()}
    unknown = f"UNKNOWN_ENUM_VALUE_{enum.name}_"

    def shape(array: pa.Array) -> pa.Array:
        numbers = array.fill_null(0).to_numpy(zero_copy_only=False)
        codes = np.unique(numbers)
        names = pa.array([known.get(code) or f"{unknown}{code}" for code in codes.tolist()], pa.string())
        nulls = pc.is_null(array).to_numpy(zero_copy_only=False) if array.null_count else None
        return pc.take(names, pa.array(np.searchsorted(codes, numbers), mask=nulls))

    return shape


def _timestamps(array: pa.Array) -> pa.Array:
    """Nanoseconds to milliseconds, floored as the general path floors a Timestamp's nanos. ptars saturates a
    Timestamp that nanoseconds cannot hold (outside 1677-09-21 to 2262-04-11) to the int64 bounds: refused."""
    nanos = array.cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False)
    if len(nanos) and (nanos.min() == _INT64.min or nanos.max() == _INT64.max):
        raise _Refused()
    nulls = pc.is_null(array).to_numpy(zero_copy_only=False) if array.null_count else None
    return pa.array(np.floor_divide(nanos, 1_000_000), _TIMESTAMP_MS, mask=nulls)


def _proto3(descriptor: Descriptor) -> bool:
    """Whether the message's file is proto3 (open enums, UTF-8 checked strings, no required fields)."""
    proto = descriptor_pb2.FileDescriptorProto()
    descriptor.file.CopyToProto(proto)
    return proto.syntax == "proto3"


class _Prefixes(dict):
    """Length -> the wrapper's field tag and the length as a varint (field 1, wire type 2)."""

    def __missing__(self, length: int) -> bytes:
        out, n = bytearray(b"\x0a"), length
        while n > 0x7F:
            out.append((n & 0x7F) | 0x80)
            n >>= 7
        out.append(n)
        self[length] = prefix = bytes(out)
        return prefix


def _batch_class(descriptor: Descriptor) -> type[Message]:
    """A message class with one field, `repeated <descriptor> rows = 1`, in the descriptor's own pool."""
    pool, package = descriptor.file.pool, f"sink_engine_batch.{descriptor.full_name}"
    try:
        return GetMessageClass(pool.FindMessageTypeByName(f"{package}.Batch"))
    except KeyError:
        pass
    proto = descriptor_pb2.FileDescriptorProto(
        name=f"{package}.proto", package=package, syntax="proto3", dependency=[descriptor.file.name]
    )
    proto.message_type.add(name="Batch").field.add(
        name="rows",
        number=1,
        label=FieldDescriptor.LABEL_REPEATED,
        type=FieldDescriptor.TYPE_MESSAGE,
        type_name=f".{descriptor.full_name}",
    )
    pool.Add(proto)
    return GetMessageClass(pool.FindMessageTypeByName(f"{package}.Batch"))
