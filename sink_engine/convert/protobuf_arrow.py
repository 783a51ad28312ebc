"""Columnar decoding of Protobuf messages: the payloads of one message type parsed by upb in one call, then read
field by field into Arrow arrays (no Python value per record, no dict per message).

The payloads are framed as the repeated field of a wrapper message (`_Batch`: tag, length, payload, each) and
parsed at once; each field is then read across all messages (`map(attrgetter(name), messages)` at C speed) into
a numpy or Arrow array of the type `arrow_types` gives its Connect schema, so that the table is the one the
general path (protobuf_schema.ProtobufDecoder per message, `Table.from_pylist`) builds from the same payloads.

Contract of `ArrowProtobufReader.read`: a table equal to the general path's, or None (the caller then takes the
general path, which names a bad payload by its offset): None when upb rejects the framed payloads or a
google.protobuf.Timestamp is outside the years 1 to 9999 (the general path's datetime then fails as before).

Covered schemas (`arrow_reader` answers None for others): messages of proto3 files whose fields are scalars,
enums (unknown numbers named as the general path names them), nested messages, google.protobuf.Timestamp,
wrappers (as structs, or their nullable primitive under `wrapper.for.nullables`), proto3 `optional` fields,
oneofs, repeated fields of these, and maps. google.type.Date, google.type.TimeOfDay, confluent.type.Decimal and
proto2 or editions files (closed enums, required fields) take the general path.
"""
from __future__ import annotations

import datetime
from itertools import chain
from operator import attrgetter, methodcaller
from typing import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from google.protobuf import descriptor_pb2
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import DecodeError
from google.protobuf.message_factory import GetMessageClass

from sink_engine.convert.arrow_types import arrow_schema, arrow_type
from sink_engine.convert.connect_json import EPOCH
from sink_engine.convert.protobuf_schema import WRAPPERS, synthetic_oneofs
from sink_engine.convert.schema import DECIMAL

Build = Callable[[list], pa.Array]  # the messages holding a field -> the field's Arrow array

_NUMPY = {
    FieldDescriptor.TYPE_INT32: np.int32, FieldDescriptor.TYPE_SINT32: np.int32, FieldDescriptor.TYPE_SFIXED32: np.int32,
    FieldDescriptor.TYPE_INT64: np.int64, FieldDescriptor.TYPE_SINT64: np.int64, FieldDescriptor.TYPE_SFIXED64: np.int64,
    FieldDescriptor.TYPE_UINT32: np.int64, FieldDescriptor.TYPE_FIXED32: np.int64,
    FieldDescriptor.TYPE_UINT64: np.uint64, FieldDescriptor.TYPE_FIXED64: np.uint64,  # viewed as int64: Java's wrap
    FieldDescriptor.TYPE_FLOAT: np.float32, FieldDescriptor.TYPE_DOUBLE: np.float64, FieldDescriptor.TYPE_BOOL: np.bool_,
}
_OBJECTS = {FieldDescriptor.TYPE_STRING: pa.string(), FieldDescriptor.TYPE_BYTES: pa.binary()}
_TIMESTAMP_MS = pa.timestamp("ms", tz="UTC")
_MIN_MS = int((datetime.datetime.min.replace(tzinfo=datetime.timezone.utc) - EPOCH).total_seconds()) * 1000
_MAX_MS = int((datetime.datetime.max.replace(tzinfo=datetime.timezone.utc) - EPOCH).total_seconds()) * 1000


class _Refused(Exception):
    """A value the general path reads otherwise (or fails on): the batch takes the general path."""


class ArrowProtobufReader:
    """Reads payloads of one message type into the Arrow table of its Connect schema (module docstring)."""

    def __init__(self, descriptor: Descriptor, connect_schema, columns: list[Build]):
        self._batch = _batch_class(descriptor)
        self._columns = columns
        self._target = arrow_schema(connect_schema)
        self._prefixes = _Prefixes()

    def read(self, payloads: list) -> pa.Table | None:
        framed = b"".join(chain.from_iterable(zip(map(self._prefixes.__getitem__, map(len, payloads)), payloads)))
        try:
            messages = list(self._batch.FromString(framed).rows)
            arrays = [build(messages) for build in self._columns]
        except (DecodeError, _Refused):
            return None
        return pa.Table.from_batches([pa.RecordBatch.from_arrays(arrays, schema=self._target)])


def arrow_reader(descriptor: Descriptor, connect_schema, wrapper_for_nullables: bool) -> ArrowProtobufReader | None:
    """The columnar reader of a message type, or None when the schema is not covered (module docstring)."""
    columns = _Compiler(wrapper_for_nullables).fields(descriptor, connect_schema)
    return None if columns is None else ArrowProtobufReader(descriptor, connect_schema, columns)


class _Compiler:
    """Column builders of a message's Connect fields (protobuf_schema's, in its order); None when not covered."""

    def __init__(self, wrapper_for_nullables: bool):
        self._wrappers = wrapper_for_nullables

    def fields(self, descriptor: Descriptor, schema) -> list[Build] | None:
        if not _proto3(descriptor):
            return None
        builds, synthetic, seen, connect = [], synthetic_oneofs(descriptor), set(), iter(schema.fields)
        for fd in descriptor.fields:
            oneof = fd.containing_oneof
            if oneof is not None and oneof.index not in synthetic:
                if oneof.index in seen:
                    continue
                seen.add(oneof.index)
                build = self._oneof(oneof, next(connect).schema)
            else:
                build = self._field(fd, next(connect).schema)
            if build is None:
                return None
            builds.append(build)
        return builds

    def _field(self, fd: FieldDescriptor, schema) -> Build | None:
        get = attrgetter(fd.name)
        if fd.message_type is not None and fd.message_type.GetOptions().map_entry:
            return self._map(fd, schema)
        values = self._values(fd, schema.items if fd.is_repeated else schema)
        if values is None:
            return None
        if fd.is_repeated:
            return _repeated(get, values, arrow_type(schema))
        if fd.has_presence:
            has = methodcaller("HasField", fd.name)
            return lambda messages: values(list(map(get, messages)), _absent(has, messages))
        return lambda messages: values(list(map(get, messages)), None)

    def _oneof(self, oneof, schema) -> Build | None:
        members = [(fd.name, attrgetter(fd.name), self._values(fd, schema.field(fd.name).schema))
                   for fd in oneof.fields]
        if any(values is None for _, _, values in members):
            return None
        which, fields = methodcaller("WhichOneof", oneof.name), list(arrow_type(schema))

        def build(messages: list) -> pa.Array:
            chosen = np.array(list(map(which, messages)), dtype=object)
            children = [values(list(map(get, messages)), chosen != name) for name, get, values in members]
            return pa.StructArray.from_arrays(children, fields=fields, mask=pa.array(chosen == None))  # noqa: E711
        return build

    def _map(self, fd: FieldDescriptor, schema) -> Build | None:
        entry = fd.message_type
        keys = self._values(entry.fields_by_name["key"], schema.keys)
        values = self._values(entry.fields_by_name["value"], schema.values)
        if keys is None or values is None:
            return None
        get, type_ = attrgetter(fd.name), arrow_type(schema)

        def build(messages: list) -> pa.Array:
            entries = [sorted(found.items()) for found in map(get, messages)]
            flat = list(chain.from_iterable(entries))
            return pa.MapArray.from_arrays(_offsets(entries), keys([key for key, _ in flat], None),
                                           values([value for _, value in flat], None), type=type_)
        return build

    def _values(self, fd: FieldDescriptor, schema):
        """`(values, nulls) -> Arrow array` of the field's (or its items') values, `schema` their Connect
        schema; None when not covered."""
        message = fd.message_type
        if message is None:
            return _scalar(fd)
        name = message.full_name
        if name == "google.protobuf.Timestamp":
            return _timestamps
        if self._wrappers and name in WRAPPERS:
            inner, get = _scalar(message.fields_by_name["value"]), attrgetter("value")
            return lambda values, nulls: inner(list(map(get, values)), nulls)
        if schema.type != "struct" or schema.name == DECIMAL:  # Date, TimeOfDay, Decimal
            return None
        fields = self.fields(message, schema)
        if fields is None:
            return None
        type_fields = list(arrow_type(schema))
        return lambda values, nulls: pa.StructArray.from_arrays(
            [build(values) for build in fields], fields=type_fields, mask=None if nulls is None else pa.array(nulls))


def _scalar(fd: FieldDescriptor):
    if fd.type == FieldDescriptor.TYPE_ENUM:
        return _enum(fd.enum_type)
    if fd.type in _OBJECTS:
        arrow = _OBJECTS[fd.type]
        return lambda values, nulls: pa.array(values, arrow, mask=nulls)
    dtype = _NUMPY[fd.type]
    wrap = dtype is np.uint64

    def read(values: list, nulls) -> pa.Array:
        array = np.fromiter(values, dtype, len(values))
        return pa.array(array.view(np.int64) if wrap else array, mask=nulls)
    return read


def _enum(enum):
    numbers = sorted(enum.values_by_number)
    known = {number: enum.values_by_number[number].name for number in numbers}
    unknown = f"UNKNOWN_ENUM_VALUE_{enum.name}_"

    def read(values: list, nulls) -> pa.Array:
        found = np.fromiter(values, np.int64, len(values))
        codes = sorted(set(np.unique(found).tolist()) | set(numbers))
        names = pa.array([known.get(code) or f"{unknown}{code}" for code in codes], pa.string())
        return pc.take(names, pa.array(np.searchsorted(codes, found), mask=nulls))
    return read


def _timestamps(values: list, nulls) -> pa.Array:
    """Milliseconds since the epoch, as the general path's datetime (nanos floored to milliseconds)."""
    seconds = np.fromiter(map(attrgetter("seconds"), values), np.int64, len(values))
    nanos = np.fromiter(map(attrgetter("nanos"), values), np.int64, len(values))
    millis = seconds * 1000 + nanos // 1_000_000
    if len(millis) and (seconds.min() < _MIN_MS // 1000 or seconds.max() > _MAX_MS // 1000
                        or millis.min() < _MIN_MS or millis.max() > _MAX_MS):
        raise _Refused()
    return pa.array(millis, _TIMESTAMP_MS, mask=nulls)


def _repeated(get, values, type_: pa.DataType) -> Build:
    def build(messages: list) -> pa.Array:
        lists = list(map(get, messages))
        return pa.ListArray.from_arrays(_offsets(lists), values(list(chain.from_iterable(lists)), None), type=type_)
    return build


def _offsets(lists: list) -> pa.Array:
    lengths = np.fromiter(map(len, lists), np.int32, len(lists))
    offsets = np.zeros(len(lists) + 1, np.int32)
    np.cumsum(lengths, out=offsets[1:])
    return pa.array(offsets)


def _proto3(descriptor: Descriptor) -> bool:
    """Whether the message's file is proto3 (open enums, UTF-8 checked strings, no required fields)."""
    proto = descriptor_pb2.FileDescriptorProto()
    descriptor.file.CopyToProto(proto)
    return proto.syntax == "proto3"


def _absent(has, messages: list) -> np.ndarray:
    return ~np.fromiter(map(has, messages), np.bool_, len(messages))


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


def _batch_class(descriptor: Descriptor):
    """A message class with one field, `repeated <descriptor> rows = 1`, in the descriptor's own pool."""
    pool = descriptor.file.pool
    name = f"sink_engine_batch.{descriptor.full_name}"
    try:
        return GetMessageClass(pool.FindMessageTypeByName(f"{name}.Batch"))
    except KeyError:
        pass
    proto = descriptor_pb2.FileDescriptorProto(name=f"{name}.proto", package=name, syntax="proto3",
                                               dependency=[descriptor.file.name])
    proto.message_type.add(name="Batch").field.add(
        name="rows", number=1, label=FieldDescriptor.LABEL_REPEATED, type=FieldDescriptor.TYPE_MESSAGE,
        type_name=f".{descriptor.full_name}")
    pool.Add(proto)
    return GetMessageClass(pool.FindMessageTypeByName(f"{name}.Batch"))
