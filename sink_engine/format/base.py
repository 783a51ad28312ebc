"""The format seam: encoders that write one file's values into its object as records arrive.

A format opens one `FileEncoder` per file, writing into a binary sink (an `ObjectStream` that uploads parts
as they fill, or a BytesIO). The object's bytes depend only on the file's records, in order, never on how
they were split between `write` calls, so a rerun writes the same bytes (what exactly-once rests on).
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from typing import Any, Protocol

from sink_engine.errors import FormatError
from sink_engine.records import ValueColumn


@dataclass(frozen=True)
class FileContext:
    """Which file is written: its topic-partition and the offset of its first record."""

    topic: str
    partition: int
    start_offset: int

    def record_error(self, offset: int, cause: str) -> FormatError:
        return FormatError(self.topic, self.partition, offset, cause)


@dataclass(frozen=True)
class EncodedFile:
    """An object's bytes, plus companion objects keyed by the suffix that replaces the data extension
    (e.g. `{".index.json": b"..."}` lands beside `<stem><extension>` as `<stem>.index.json`)."""

    body: bytes
    companions: dict[str, bytes] = field(default_factory=dict)


class BinarySink(Protocol):
    """Where an encoder writes its object: an ObjectStream (storage/object_stream.py, parts uploaded as they fill)
    or a BytesIO. pyarrow's and fastavro's writers also call flush() and seekable() and read `closed`."""

    def write(self, data: bytes, /) -> int: ...

    def tell(self) -> int: ...


class FileEncoder(Protocol):
    def prepare(self, values: ValueColumn, offsets: list) -> Any:
        """Check and convert values for this file without writing anything (what it returns is the encoder's own,
        for its `write`); raises RecordError naming the first value this format cannot hold (so that a caller can
        route it and keep the rest)."""

    def write(self, prepared: Any, sizes: list) -> None:
        """Append prepared values; `sizes` are the records' Kafka value sizes in bytes (row-group cuts)."""

    def finish(self) -> dict[str, bytes]:
        """Write the rest of the object into the sink; returns companion objects by suffix."""


class Format:
    """Base of the formats: `open` per file, and `encode` for a whole file at once (tests, tools)."""

    extension: str  # with the leading dot, e.g. ".json.gz"
    writes_json = False  # whether its records are JSON text
    columnar = False  # Parquet and Avro: a key that is not a struct is wrapped (format/wrapped.py)

    def open(self, context: FileContext, out: BinarySink) -> FileEncoder:
        raise NotImplementedError

    def encode(
        self, values: ValueColumn, context: FileContext | None = None, offsets: list | None = None
    ) -> EncodedFile:
        """The whole object for these values (offsets default to consecutive ones from the start offset)."""
        context = context or FileContext("topic", 0, 0)
        out = io.BytesIO()
        encoder = self.open(context, out)
        offsets = (
            offsets if offsets is not None else list(range(context.start_offset, context.start_offset + len(values)))
        )
        encoder.write(
            encoder.prepare(values, offsets),
            [len(item) for item in values.items] if values.kind != "struct" else [0] * len(values),
        )
        companions = encoder.finish()
        return EncodedFile(out.getvalue(), companions)
