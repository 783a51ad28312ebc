"""Produce numbered records and check, from S3 and DynamoDB alone, that each landed exactly once.

Records are JSON objects `{"id": n}` produced round-robin, so record n sits in partition n % P at offset n // P
(every batch is a multiple of P records and starts at a multiple of P). Output is JsonFormat with count-based
rotation: keys `topics/<topic>/partition=<p>/<topic>+<p>+<start>.json`, one record per line.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import orjson

from devtools.producer import produce
from sink_engine.driver.job import now_ms
from sink_engine.driver.status import partition_status
from sink_engine.offsets import OffsetStore
from tests.conftest import TABLE
from tests.runs import committed_offsets
from tests.s3_reader import landed_by_key


def produce_numbered(
    bootstrap: str, topic: str, first: int, count: int, partitions: int, pad: int = 0, settings: dict | None = None
) -> int:
    """Produce records `first` .. `first + count - 1` (`settings`: the producer's); returns the next number."""
    assert first % partitions == 0 and count % partitions == 0, (first, count, partitions)
    filler = "x" * pad
    values = [orjson.dumps({"id": n, "pad": filler} if pad else {"id": n}) for n in range(first, first + count)]
    produce(bootstrap, topic, values, partitions, settings=settings)
    return first + count


@dataclass
class Landed:
    """What the bucket and the offsets table hold for one topic."""

    records: int
    duplicates: int
    missing: int
    files: int
    committed: dict = field(default_factory=dict)  # partition -> next offset

    def figures(self) -> dict:
        """The columns of the fault matrix's figures table that this check fills."""
        return {"records": self.records, "duplicates": self.duplicates, "missing": self.missing}


def check_exactly_once(s3, dynamodb, config, partitions: int, produced: int, complete: bool = True) -> Landed:
    """Assert: per partition, the files below the committed offset start at offset 0 and follow each other without
    gap or overlap up to it (its files are all in S3), each holding its offsets' records in order; no record twice,
    none missing below the committed offset. Files at or past the committed offset are a failed attempt's orphans:
    a task uploads several files at once, so a killed one can leave a gap among them; each must still hold its
    offsets' records, without overlapping the next. With `complete` (after a clean last run that read to the end),
    the committed offset is the last flush.size boundary of what was produced and no file lies past it."""
    topic = config["topics"][0]
    committed = committed_offsets(dynamodb, config)
    by_partition: dict[int, list[tuple[int, list]]] = {p: [] for p in range(partitions)}
    for key, records in landed_by_key(s3, topic).items():
        _, partition, start = key.rsplit("/", 1)[1].rsplit(".", 1)[0].rsplit("+", 2)
        by_partition[int(partition)].append((int(start), [r["id"] for r in records]))
    ids = [n for files in by_partition.values() for _, numbers in files for n in numbers]
    expected = {n for p in range(partitions) for n in range(p, committed.get(p, 0) * partitions, partitions)}
    landed = Landed(
        records=len(ids),
        duplicates=len(ids) - len(set(ids)),
        missing=len(expected - set(ids)),
        files=sum(len(f) for f in by_partition.values()),
        committed=committed,
    )
    for p, files in by_partition.items():
        done = committed.get(p, 0)
        files.sort()
        boundaries = _check_contiguous(topic, p, partitions, [f for f in files if f[0] < done])
        assert boundaries[-1] == done, (
            f"{topic}-{p}: committed offset {done} is not the end of a file in S3 ({boundaries[-6:]})"
        )
        orphans = [f for f in files if f[0] >= done]
        _check_orphans(topic, p, partitions, orphans)
        if complete:
            flush = config["flush.size"]
            assert done == produced // partitions // flush * flush, (p, committed, produced)
            assert not orphans, f"{topic}-{p}: files past the committed offset {done}: {[f[0] for f in orphans]}"
    assert landed.duplicates == 0 and landed.missing == 0, landed
    return landed


def _check_contiguous(topic: str, p: int, partitions: int, files: list[tuple[int, list]]) -> list[int]:
    """File boundaries 0, end of 1st file, ...; asserts each file holds exactly the records of its offsets."""
    boundaries = [0]
    for start, numbers in files:
        assert start == boundaries[-1], (
            f"{topic}-{p}: file at {start} does not follow the one ending at {boundaries[-1]}"
        )
        _check_records(topic, p, partitions, start, numbers)
        boundaries.append(start + len(numbers))
    return boundaries


def _check_orphans(topic: str, p: int, partitions: int, files: list[tuple[int, list]]) -> None:
    """Files sorted by start offset: each holds its offsets' records and ends at or before the next one starts."""
    for (start, numbers), following in zip(files, files[1:] + [None]):
        _check_records(topic, p, partitions, start, numbers)
        if following is not None:
            assert start + len(numbers) <= following[0], f"{topic}-{p}: file at {start} overlaps the next"


def _check_records(topic: str, p: int, partitions: int, start: int, numbers: list) -> None:
    assert numbers == [(start + i) * partitions + p for i in range(len(numbers))], f"{topic}-{p}+{start}: records"


def check_status(dynamodb, config, partitions: int, produced: int) -> None:
    """`status` agrees with the offsets table and Kafka: committed, end offset and lag per partition."""
    committed = committed_offsets(dynamodb, config)
    rows = partition_status(config, OffsetStore(dynamodb, TABLE, now_ms))
    assert [r.tp.partition for r in rows] == list(range(partitions))
    for row in rows:
        p = row.tp.partition
        assert (row.committed, row.end_offset, row.lag) == (
            committed.get(p),
            produced // partitions,
            produced // partitions - committed.get(p, 0),
        ), row


def write_config(config, path) -> str:
    """The connector's explicitly set keys and its pass-through ones (`consumer.override.*`) as a connector JSON file
    for the CLI; returns its path."""
    values = {**{k: config[k] for k in config.explicit if k != "name"}, **config.passthrough}
    flat = {k: ",".join(v) if isinstance(v, tuple) else v for k, v in values.items()}
    path.write_bytes(orjson.dumps({"name": config.name, "config": flat}))
    return str(path)
