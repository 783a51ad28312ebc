"""What the columnar-reader tests share (Avro, Protobuf, JSON Schema): a chunk of values at offsets 100.., the
bytes each output format writes from a converted column, and the check that a columnar column and the general
path's column of the same chunk write the same bytes."""

from __future__ import annotations

import pytest

from sink_engine.convert.arrow_column import ArrowStructColumn
from sink_engine.errors import RecordError
from sink_engine.format.avro_format import AvroFormat
from sink_engine.format.base import FileContext
from sink_engine.format.json_format import JsonFormat
from sink_engine.format.parquet_format import ParquetFormat
from sink_engine.records import RecordChunk

FORMATS = [ParquetFormat("snappy"), ParquetFormat("none", row_group_bytes=1), AvroFormat("null"), JsonFormat()]
FORMAT_IDS = ["parquet/snappy", "parquet/row-group-per-record", "avro", "json"]


def chunk_of(values: list) -> RecordChunk:
    return RecordChunk("t", 0, list(range(100, 100 + len(values))), values, keys=[], timestamps=[])


def encoded(fmt, column) -> bytes:
    return fmt.encode(column, FileContext("t", 0, 100)).body


def assert_same_output(fmt, fast, slow) -> None:
    """`fast` came from Arrow (one table), `slow` from the general path; `fmt` writes the same bytes from both and
    both give the same Python values (what partitioners and transforms read)."""
    assert isinstance(fast, ArrowStructColumn) and fast.arrow_table() is not None
    assert not isinstance(slow, ArrowStructColumn)
    assert encoded(fmt, fast) == encoded(fmt, slow)
    assert fast.items == slow.items


def assert_runs_encode_alike(fast, slow, run: int) -> None:
    """A column of several schemas (`fast`, columnar) has no one table, but each run of `run` records of one schema
    does, and encodes to the bytes of the same slice of `slow` (as the schema gate cuts files)."""
    assert isinstance(fast, ArrowStructColumn) and fast.arrow_table() is None
    for start in range(0, len(fast.items), run):
        part = fast.slice(start, start + run)
        assert part.arrow_table() is not None
        assert encoded(ParquetFormat(), part) == encoded(ParquetFormat(), slow.slice(start, start + run))


def assert_same_record_error(columnar, general, chunk: RecordChunk, offset: int) -> None:
    """Both converters refuse `chunk` naming `offset` with the same cause (what the dead-letter queue takes)."""
    with pytest.raises(RecordError) as expected:
        general.convert(chunk)
    with pytest.raises(RecordError) as raised:
        columnar.convert(chunk)
    assert (raised.value.offset, raised.value.cause) == (expected.value.offset, expected.value.cause)
    assert raised.value.offset == offset
