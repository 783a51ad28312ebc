"""The length of each row's canonical Avro binary encoding, computed over Arrow columns (numpy, no row loop).

Canonical means as Avro's and fastavro's binary encoders write it: minimal zig-zag varints, an array as one
block of all its items then 0 (or 0 alone when empty). A datum's length equal to its row's canonical length,
for every row, proves that a reader of the datums back to back read each datum exactly: canonical is the
shortest encoding of a value, so no row could have read past its datum's end without another row reading
less than its own. Covers the schemas `avro_arrow` reads.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

_FIXED = {"boolean": 1, "float": 4, "double": 8}
_WIDEST = {"int": (5, 0x0F), "long": (10, 0x01)}  # the longest zig-zag varint of each, and its last byte's largest
_VARINT_LIMITS = np.array([1 << (7 * k) for k in range(1, 10)], dtype=np.uint64)


def datum_sizes(table: pa.Table, record: dict) -> np.ndarray:
    """Each row's encoded length in bytes, for a table read with the Avro record schema `record`."""
    total = np.zeros(table.num_rows, dtype=np.int64)
    for column, field in zip(table.columns, record["fields"]):
        total += _sizes(column.combine_chunks(), field["type"])
    return total


def _sizes(array: pa.Array, avro: Any) -> np.ndarray:
    if isinstance(avro, list):  # a union of null and one type: the branch index, then the value if not null
        branch = next(b for b in avro if b != "null")
        valid = _valid(array)
        return 1 + np.where(valid, _sizes(array, branch), 0)
    if isinstance(avro, dict) and isinstance(avro["type"], (dict, list)):
        return _sizes(array, avro["type"])
    kind = avro if isinstance(avro, str) else avro["type"]
    if kind in _FIXED:
        return np.full(len(array), _FIXED[kind], dtype=np.int64)
    if kind in ("int", "long"):
        return _varint_sizes(_integers(array))
    if kind in ("string", "bytes"):
        lengths = _integers(pc.binary_length(array))
        return _varint_sizes(lengths) + lengths
    if kind == "enum":
        index = pc.index_in(array.cast(pa.large_string()), value_set=pa.array(avro["symbols"], pa.large_string()))
        return _varint_sizes(_integers(index))
    if kind == "record":
        children = array.flatten()
        total = np.zeros(len(array), dtype=np.int64)
        for child, field in zip(children, avro["fields"]):
            total += _sizes(child, field["type"])
        return total
    if kind == "array":
        return _array_sizes(array, avro["items"])
    raise AssertionError(f"no Avro size rule for {kind!r}")


def _array_sizes(array: pa.Array, items: Any) -> np.ndarray:
    offsets = array.offsets.to_numpy().astype(np.int64)
    start, stop = offsets[0], offsets[-1]
    item_sizes = _sizes(array.values.slice(start, stop - start), items)
    cumulative = np.concatenate(([0], np.cumsum(item_sizes)))
    relative = offsets - start
    counts = np.diff(relative)
    content = cumulative[relative[1:]] - cumulative[relative[:-1]]
    return np.where(counts == 0, 1, _varint_sizes(counts) + content + 1)


def _integers(array: pa.Array) -> np.ndarray:
    if pa.types.is_temporal(array.type):
        array = array.cast(pa.int64() if array.type.bit_width == 64 else pa.int32())
    return pc.fill_null(array, 0).to_numpy(zero_copy_only=False).astype(np.int64)


def _valid(array: pa.Array) -> np.ndarray:
    return pc.is_valid(array).to_numpy(zero_copy_only=False)


def _varint_sizes(values: np.ndarray) -> np.ndarray:
    """Bytes of the zig-zag varint of each int64."""
    zigzag = ((values << 1) ^ (values >> 63)).astype(np.uint64)
    return 1 + np.searchsorted(_VARINT_LIMITS, zigzag, side="right")


def markers_hold(table: pa.Table, record: dict, lengths: np.ndarray, body: bytes) -> bool:
    """Whether every boolean byte is 0 or 1, every union index byte the branch the row holds and every int or long
    within its bits, in `body` (the datums back to back, of `lengths`), outside arrays (where `avro_arrow` takes
    none of them). Datum lengths must already match `datum_sizes`: each field's byte is found from the sizes of
    the fields before it."""
    data = np.frombuffer(body, dtype=np.uint8)
    at = np.concatenate(([0], np.cumsum(lengths)[:-1])).astype(np.int64)
    present = np.ones(table.num_rows, dtype=bool)
    return _fields_hold(table.columns, record["fields"], at, present, data)


def _fields_hold(columns: list, fields: list, at: np.ndarray, present: np.ndarray, data: np.ndarray) -> bool:
    for position, (column, field) in enumerate(zip(columns, fields)):
        array = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
        if not _holds(array, field["type"], at, present, data):
            return False
        if position < len(fields) - 1:
            at = at + _sizes(array, field["type"])
    return True


def _holds(array: pa.Array, avro: Any, at: np.ndarray, present: np.ndarray, data: np.ndarray) -> bool:
    if isinstance(avro, list):  # the index byte: zig-zag of the null branch's or the value branch's position
        null_index = avro.index("null")
        valid = _valid(array)
        expected = np.where(valid, 2 * (1 - null_index), 2 * null_index)
        if not np.array_equal(data[at[present]], expected[present]):
            return False
        return _holds(array, avro[1 - null_index], at + 1, present & valid, data)
    if isinstance(avro, dict) and isinstance(avro["type"], (dict, list)):
        return _holds(array, avro["type"], at, present, data)
    kind = avro if isinstance(avro, str) else avro["type"]
    if kind == "boolean":
        return bool(np.all(data[at[present]] <= 1))
    if kind in _WIDEST:  # a varint of the widest length: its last byte keeps the value within 32 or 64 bits
        length, top = _WIDEST[kind]
        widest = present & (_varint_sizes(_integers(array)) == length)
        return bool(np.all(data[at[widest] + length - 1] <= top))
    if kind == "record":
        return _fields_hold(array.flatten(), avro["fields"], at, present, data)
    return True
