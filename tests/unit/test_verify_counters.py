"""Record counts of `sink-engine verify` (sink_engine/target/s3_objects/verify/counters.py) from object metadata,
with the requests
they cost: Avro block headers through 256 KiB windows, a Parquet footer through one ranged GET."""

from __future__ import annotations

import io
import os

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sink_engine.format.settings import FormatSettings
from sink_engine.target.s3_objects.verify.counters import AVRO_WINDOW, RecordCounter
from sink_engine.target.s3_objects.verify.listing import StoredObject


class RangedObjects:
    """An S3 client's GetObject over objects in memory, honouring `Range: bytes=a-b` and `bytes=-n`."""

    def __init__(self, objects: dict[str, bytes]):
        self.objects, self.ranges = objects, []

    def get_object(self, Bucket: str, Key: str, Range: str | None = None) -> dict:
        body = self.objects[Key]
        self.ranges.append(Range)
        if Range:
            first, last = Range[len("bytes=") :].split("-")
            body = body[-int(last) :] if not first else body[int(first) : int(last) + 1]
        return {"Body": io.BytesIO(body)}


def count(format_class: str, body: bytes) -> tuple[int, RangedObjects]:
    client = RangedObjects({"k": body})
    formats = FormatSettings(format_class, "none", -1, "BASE64", "snappy", "null", 1 << 20, ".bin", "\n", 1 << 20)
    entry = RecordCounter(client, "b", formats, tagged=False).entry(StoredObject("k", "t", 0, 0, len(body)))
    return entry.count, client


@pytest.mark.parametrize("records, codec", [(10, "null"), (5000, "deflate"), (5000, "null")])
def test_avro_records_are_counted_from_block_headers(records, codec):
    # given an Avro container of incompressible records in blocks of about 16 KB
    out = io.BytesIO()
    fastavro.writer(
        out,
        {"type": "record", "name": "r", "fields": [{"name": "b", "type": "bytes"}]},
        [{"b": os.urandom(100)} for _ in range(records)],
        codec=codec,
    )
    body = out.getvalue()
    # when counted, then the count is the records', from one ranged GET per 256 KiB window at most
    counted, client = count("avro", body)
    assert counted == records
    assert len(client.ranges) <= len(body) // AVRO_WINDOW + 1 and all(client.ranges)


def test_parquet_rows_come_from_the_footer_with_one_ranged_get():
    out = io.BytesIO()
    pq.write_table(pa.table({"n": list(range(100_000))}), out, row_group_size=10_000)
    counted, client = count("parquet", out.getvalue())
    assert (counted, client.ranges) == (100_000, ["bytes=-65536"])
