"""A "struct" ValueColumn decoded columnarly: Arrow tables for the formats, Python values only if a step asks.

`runs` are Arrow tables of consecutive records (one per run of one writer schema), in order. `items` (what
partitioners, transforms and row formats read) are decoded on first use by each record's decoder, as the
general path decodes them, so they are the same values. `arrow_table()` gives the column as one table when
its records share a schema, else None (the formats then build it from `items`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cached_property
from typing import Any

import pyarrow as pa

from sink_engine.records import ValueColumn


class ArrowStructColumn(ValueColumn):
    schemas: list  # every record's (a struct column's)

    def __init__(self, runs: list | None, payloads: list, decoders: list, schemas: list, sidecars: dict | None = None):
        """`runs` None: no table (a selection across schemas); `decoders[i].decode(payloads[i])` is item i."""
        self.kind, self._documents, self.schemas, self.sidecars = "struct", None, schemas, sidecars or {}
        self._runs, self._payloads, self._decoders = runs, payloads, decoders

    @cached_property
    def items(self) -> list:  # type: ignore[override]  # mypy takes it for read-only; it is writable as the attribute is
        return [decoder.decode(payload) for decoder, payload in zip(self._decoders, self._payloads)]

    def __len__(self) -> int:
        return len(self._payloads)

    def null_positions(self) -> list[int]:
        """None: a columnar reader takes only a top-level record or message, never null."""
        return []

    def arrow_table(self) -> pa.Table | None:
        if not self._runs or any(schema is not self.schemas[0] for schema in self.schemas):
            return None
        return self._runs[0] if len(self._runs) == 1 else pa.concat_tables(self._runs)

    def with_sidecars(self, sidecars: dict) -> ArrowStructColumn:
        return ArrowStructColumn(self._runs, self._payloads, self._decoders, self.schemas, sidecars)

    def _derive(self, pick: Callable[[Sequence[Any]], Any]) -> ArrowStructColumn:
        positions = pick(range(len(self)))
        contiguous = isinstance(positions, range) and positions.step == 1
        runs = self._sliced(self._runs, positions) if self._runs is not None and contiguous else None
        return ArrowStructColumn(
            runs,
            pick(self._payloads),
            pick(self._decoders),
            pick(self.schemas),
            {name: column._derive(pick) for name, column in self.sidecars.items()},
        )

    @staticmethod
    def _sliced(tables: list, positions: range) -> list:
        runs, base = [], 0
        for table in tables:
            start, stop = max(positions.start - base, 0), min(positions.stop - base, table.num_rows)
            if start < stop:
                runs.append(table.slice(start, stop - start))
            base += table.num_rows
        return runs
