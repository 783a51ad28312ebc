"""The record steps' "conversion" for EnvelopeFormat: each record whole, its value untouched.

The value converter is not run, so that a value no converter could read is still backed up, and a tombstone is a
record like any other (behavior.on.null.values does not apply: config validation refuses it with this format).
Only when the layout reads fields of the value (convert/settings.py's `reads_value_fields`: FieldPartitioner,
FieldAndTimeBasedPartitioner, or timestamp.extractor=RecordField) does the converter run, for partitioning and
rotation only: a value it cannot read, a tombstone included (it has no fields), is then a bad record of the value
converter's stage, dead-lettered or fatal per errors.tolerance.
"""

from __future__ import annotations

from sink_engine.convert.base import Converter
from sink_engine.errors import RecordError
from sink_engine.format.envelope_schema import envelope_column
from sink_engine.records import RecordChunk, ValueColumn


class EnvelopeConverter:
    """A Converter (convert/base.py) giving envelope rows; with `field_converter`, the rows carry the values it
    converted as their documents, for the partitioner and the timestamp extractor."""

    def __init__(self, field_converter: Converter | None = None) -> None:
        self._field_converter = field_converter

    def convert(self, chunk: RecordChunk) -> ValueColumn:
        if self._field_converter is None:
            return envelope_column(chunk)
        if None in chunk.values:
            position = chunk.values.index(None)
            raise RecordError(
                chunk.topic,
                chunk.partition,
                chunk.offsets[position],
                "a tombstone (null value) has no fields to partition by; with EnvelopeFormat, keep "
                "tombstones with a layout that does not read the value",
            )
        return envelope_column(chunk, self._field_converter.convert(chunk).documents())
