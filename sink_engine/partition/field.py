"""FieldPartitioner: `<field>=<value>` for each name of `partition.field.name`, joined by `directory.delim`."""

from __future__ import annotations

from sink_engine.errors import ConfigError
from sink_engine.partition.fields import (
    MISSING,
    Escaper,
    FieldError,
    field_path,
    lookup,
    lookup_all,
    memoized_by_string,
    scalar_text,
)
from sink_engine.partition.settings import PartitionSettings
from sink_engine.records import Partitions, RecordChunk, ValueColumn

_MEMO_LIMIT = 100_000  # field values whose segments are remembered


class FieldPartitioner:
    """Strings, numbers and booleans give their text (escaped, see partition/fields.py), null gives `null`;
    a missing field, a map or a list, or a value that is not a map/struct fails the record (FieldError)."""

    def __init__(self, names: tuple[str, ...], directory_delim: str):
        self._names = names
        self._paths = [field_path(name) for name in names]
        self._delim = directory_delim
        self._escaper = Escaper(directory_delim)
        self._seen: dict[str, str] = {}  # string value of the single field -> its segment

    @classmethod
    def from_settings(cls, settings: PartitionSettings) -> FieldPartitioner:
        if not settings.field_names:
            raise ConfigError("partition.field.name", "is required by this partitioner: name one field or more")
        return cls(settings.field_names, settings.directory_delim)

    def encode(self, chunk: RecordChunk, values: ValueColumn) -> Partitions:
        documents = values.documents()
        if len(self._paths) == 1:
            return Partitions.per_record(self._encode_one(chunk, documents))
        return Partitions.per_record(
            [
                self._delim.join(self._segment(chunk, documents, i, n) for n in range(len(self._paths)))
                for i in range(len(documents))
            ]
        )

    def _encode_one(self, chunk: RecordChunk, documents: list) -> list[str]:
        """One field: memoize the segment of each raw string value, which repeats in practice."""
        raw = lookup_all(documents, self._paths[0])
        return memoized_by_string(raw, lambda i, _: self._segment(chunk, documents, i, 0), self._seen, _MEMO_LIMIT)

    def _segment(self, chunk: RecordChunk, documents: list, i: int, n: int) -> str:
        name = self._names[n]
        value = lookup(documents[i], self._paths[n])
        if value is MISSING:
            raise FieldError(chunk.topic, chunk.partition, chunk.offsets[i], name, "is missing from the value")
        text = scalar_text(value)
        if text is None:
            raise FieldError(
                chunk.topic,
                chunk.partition,
                chunk.offsets[i],
                name,
                f"is a {type(value).__name__}; only strings, numbers, booleans and null partition",
            )
        return f"{name}={self._escaper.escape(text)}"
