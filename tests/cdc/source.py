"""Source tables in PostgreSQL whose changes the test makes at random, counting the change events Debezium's
Postgres connector emits for them (its defaults: a delete is a delete event and a tombstone; an update of the
primary key is a delete and tombstone of the old key and a create of the new one; a snapshot read, an insert or
another update one event)."""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field

EVENTS = {"read": 1, "insert": 1, "update": 1, "delete": 2, "key change": 3}


@dataclass
class SourceTables:
    """`tables` in `pg` (Postgres), each `id int PRIMARY KEY, name text, amount bigint` (and what ALTER TABLE adds);
    `events[table]`: Debezium's events expected on its topic so far."""

    pg: object
    tables: tuple[str, ...]
    rng: random.Random
    events: dict[str, int] = field(default_factory=dict)
    columns: dict[str, list[str]] = field(default_factory=dict)
    made: Counter = field(default_factory=Counter)  # changes made, by kind
    version: int = 0

    def create(self, rows: int) -> None:
        """The tables with `rows` rows each, before Debezium starts: its snapshot reads them."""
        for table in self.tables:
            self.pg.sql(f"CREATE TABLE {table} (id int PRIMARY KEY, name text, amount bigint)")
            values = ",".join(f"({i}, 'n{i}', {i * 10})" for i in range(rows))
            self.pg.sql(f"INSERT INTO {table} VALUES {values}")
            self.events[table], self.columns[table] = rows * EVENTS["read"], ["id", "name", "amount"]

    def add_column(self, table: str, column: str) -> None:
        """ALTER TABLE ADD COLUMN (text): no event of its own; the changes after it carry the column."""
        self.pg.sql(f"ALTER TABLE {table} ADD COLUMN {column} text")
        self.columns[table].append(column)

    def change(self, count: int) -> None:
        """`count` random changes over the tables, one statement (and transaction) each."""
        for _ in range(count):
            table = self.rng.choice(self.tables)
            ids = [row["id"] for row in self.pg.rows(table)]
            kind = self.rng.choices(list(EVENTS)[1:], weights=(4, 4, 2, 1))[0] if ids else "insert"
            self.pg.sql(self._statement(table, kind, ids))
            self.events[table] += EVENTS[kind]
            self.made[kind] += 1

    def _statement(self, table: str, kind: str, ids: list[int]) -> str:
        self.version += 1
        extra = [(column, f"'x{self.version}'") for column in self.columns[table][3:]]  # what ALTER TABLE added
        if kind == "insert":
            new = max(ids, default=0) + 1 + self.rng.randrange(3)
            values = [str(new), f"'i{self.version}'", str(self.version)] + [value for _, value in extra]
            return f"INSERT INTO {table} ({', '.join(self.columns[table])}) VALUES ({', '.join(values)})"
        key = self.rng.choice(ids)
        if kind == "update":
            sets = [f"name = 'u{self.version}'", f"amount = {self.version}"] + [f"{c} = {v}" for c, v in extra]
            return f"UPDATE {table} SET {', '.join(sets)} WHERE id = {key}"
        if kind == "delete":
            return f"DELETE FROM {table} WHERE id = {key}"
        return f"UPDATE {table} SET id = {max(ids) + 1000} WHERE id = {key}"

    def rows(self, table: str) -> list[dict]:
        """SELECT * of the table, ordered by id."""
        return self.pg.rows(table)
