"""What an upsert table's commit holds in the driver: the peak RSS of `rewrite_without`
(sink_engine/target/iceberg_tables/upsert.py)
over a table of N rows, 1% of its keys changed (every data file holds one), against the RSS before it. Prints one
line per size. Usage:
    python -m devtools.bench_rewrite_memory [--rows 1000000 4000000 8000000]

The table: an int64 key and a 100-character hex payload (about 112 bytes of Arrow per row, Parquet at about half of
that), in a SQL catalog on the local file system, written in one append at the table's default target file size;
RSS sampled every 20 ms while the rewrite runs. lambdas/trigger/sizing.py `driver_of` sizes Iceberg drivers by it.
"""

from __future__ import annotations

import argparse
import gc
import tempfile
import threading
import time

import numpy as np
import psutil
import pyarrow as pa
from pyiceberg.catalog.sql import SqlCatalog

from sink_engine.target.iceberg_tables.upsert import rewrite_without

MIB = 2**20


def _table(work: str, rows: int):
    catalog = SqlCatalog("bench", uri=f"sqlite:///{work}/catalog.db", warehouse=f"file://{work}/warehouse")
    catalog.create_namespace("bench")
    random = np.random.default_rng(0).integers(0, 256, size=(rows, 50), dtype=np.uint8)
    data = pa.table({"id": np.arange(rows, dtype=np.int64), "payload": [row.tobytes().hex() for row in random]})
    table = catalog.create_table("bench.t", schema=data.schema)
    table.append(data)
    del data, random
    gc.collect()
    return catalog.load_table("bench.t")


def _peak_rss_during(work) -> tuple[int, int]:
    """(RSS before, peak RSS) of this process while `work()` runs."""
    process, done = psutil.Process(), threading.Event()
    before = process.memory_info().rss
    peak = [before]

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], process.memory_info().rss)
            time.sleep(0.02)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        work()
    finally:
        done.set()
        sampler.join()
    return before, peak[0]


def measure(rows: int) -> str:
    with tempfile.TemporaryDirectory() as work:
        table = _table(work, rows)
        files = [task.file for task in table.scan().plan_files()]
        changed = np.random.default_rng(1).choice(rows, rows // 100, replace=False)
        keys = pa.table({"id": pa.array(changed, pa.int64())})
        started = time.perf_counter()
        before, peak = _peak_rss_during(lambda: rewrite_without(table, keys))
        size = sum(f.file_size_in_bytes for f in files) / MIB
        return (
            f"| {rows:,} | {len(files)} | {size:,.0f} | {time.perf_counter() - started:.1f} | {before / MIB:,.0f} | "
            f"{peak / MIB:,.0f} | {(peak - before) / MIB:,.0f} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[1_000_000, 4_000_000, 8_000_000])
    args = parser.parse_args()
    print("| rows | data files | MiB of Parquet | rewrite s | RSS before MiB | peak RSS MiB | peak - before MiB |")
    print("|---|---|---|---|---|---|---|")
    for rows in args.rows:
        print(measure(rows), flush=True)


if __name__ == "__main__":
    main()
