"""What one GB landed costs on EMR Serverless (ARM, us-east-1), from the CPU per record that `make bench` measures,
beside Amazon Data Firehose with an MSK source. Prints a table. Usage:
    python -m devtools.emr_cost [--cpu-us 2.7 3.2] [--record-bytes 224] [--executors 1 4]

Model (EMR Serverless bills each worker's vCPUs and memory per second, at least one minute per worker):
- a run has one driver worker and `executors` executor workers, all up for start-up plus the work;
- the work is the records' CPU time (CPU µs per record, the whole process tree) spread over the executors'
  vCPUs, each vCPU busy all along (one task per vCPU, partitions enough to fill them);
- worker sizes are EMR Serverless' defaults (4 vCPU, 16 GB: the job sets none), or the smallest memory for 4 vCPUs
  (8 GB), which the memory bench shows is plenty (one task with 1,000 open Parquet files: ~150 MB).
"""
from __future__ import annotations

import argparse
import math

VCPU_HOUR, GB_HOUR = 0.042094, 0.004628  # USD, ARM, us-east-1
FIREHOSE_GB, FIREHOSE_PARQUET_GB = 0.055, 0.018  # USD per GB ingested from MSK; per GB converted to Parquet
MINIMUM_S = 60  # billed seconds per worker at least
VCPUS = 4


def run_cost(gigabytes: float, cpu_us: float, record_bytes: int, executors: int, memory_gb: int,
             startup_s: float) -> tuple[float, float]:
    """(USD for the run, its seconds) for `gigabytes` of record values landed in one run."""
    records = gigabytes * 1e9 / record_bytes
    work_s = records * cpu_us / 1e6 / (executors * VCPUS)
    seconds = startup_s + work_s
    billed = max(MINIMUM_S, seconds)
    per_worker = billed / 3600 * (VCPUS * VCPU_HOUR + memory_gb * GB_HOUR)
    return per_worker * (1 + executors), seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cpu-us", type=float, nargs="+", default=[2.7, 3.2],
                        help="CPU µs per record of the engine's process tree (JSON, Parquet), from make bench")
    parser.add_argument("--record-bytes", type=int, default=224)
    parser.add_argument("--startup-s", type=float, default=30.0,
                        help="seconds from the job's start to its first task (EMR: image, archive, Spark)")
    parser.add_argument("--executors", type=int, nargs="+", default=[1, 4])
    args = parser.parse_args()
    print(f"{args.record_bytes}-byte records, start-up {args.startup_s:.0f} s, workers of {VCPUS} vCPU, "
          f"one driver worker, {MINIMUM_S} s billed at least per worker")
    print("| output | CPU µs/rec | GB per run | executors | memory GB | run s | USD per run | USD per GB | "
          "Firehose USD per GB |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, cpu_us in zip(("JSON", "Parquet"), args.cpu_us):
        firehose = FIREHOSE_GB + (FIREHOSE_PARQUET_GB if name == "Parquet" else 0.0)
        for gigabytes in (1, 100):
            for executors in args.executors:
                for memory_gb in (16, 8):
                    usd, seconds = run_cost(gigabytes, cpu_us, args.record_bytes, executors, memory_gb,
                                            args.startup_s)
                    print(f"| {name} | {cpu_us:.2f} | {gigabytes} | {executors} | {memory_gb} | "
                          f"{math.ceil(seconds)} | {usd:.4f} | {usd / gigabytes:.5f} | {firehose:.3f} |")


if __name__ == "__main__":
    main()
