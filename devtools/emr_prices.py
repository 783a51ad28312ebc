"""AWS's prices (USD, us-east-1) the cost models use (devtools/emr_cost.py, devtools/environment_cost.py), and what a
landed file costs in requests.

As AWS's pricing pages listed them when devtools/emr_cost.py was first written (2026-11-23; the pages render their
tables client-side, and the stored copies the search tool holds do not show the tables, so they were not re-read):
- EMR Serverless, ARM: 0.042094 per vCPU-hour, 0.004628 per GB-hour, one minute at least per worker
  (https://aws.amazon.com/emr/pricing/, "Amazon EMR Serverless").
- Amazon Data Firehose, MSK as the source: 0.055 per GB ingested; conversion to Parquet 0.018 per GB more
  (https://aws.amazon.com/firehose/pricing/). Its freshness is its buffer interval, 0 to 900 s, 300 by default
  (BufferingHints, Amazon Data Firehose API Reference,
  https://docs.aws.amazon.com/firehose/latest/APIReference/API_BufferingHints.html).
- S3 Standard PUT: 0.005 per 1,000 requests (https://aws.amazon.com/s3/pricing/); DynamoDB on demand: 0.625 per
  million write request units (https://aws.amazon.com/dynamodb/pricing/on-demand/).
"""

from __future__ import annotations

from lambdas.trigger.sizing import Capacity, Plan

VCPU_HOUR, GB_HOUR = 0.042094, 0.004628
FIREHOSE_GB = {"json": 0.055, "parquet": 0.055 + 0.018}
MINIMUM_S = 60  # billed seconds per worker at least
HOURS_PER_MONTH = 730
SECONDS_PER_MONTH = HOURS_PER_MONTH * 3600
S3_PUT, DYNAMODB_WRITE_UNIT = 0.005 / 1000, 0.625 / 1e6
# an assumption: the recorded cut and its deletion, the file's share of a commit transaction, 2 units per
# transactional item
WRITE_UNITS_PER_FILE = 4
PROD_CAPACITY = Capacity(64, 256, 1000)  # prod's application maximum capacity


def requests_usd(files: float) -> float:
    """What landing `files` files costs in S3 PUTs and DynamoDB writes."""
    return files * (S3_PUT + WRITE_UNITS_PER_FILE * DYNAMODB_WRITE_UNIT)


def hourly_usd(plan: Plan) -> float:
    """An hour of `plan`'s workers."""
    return sum(w.vcpu * VCPU_HOUR + w.memory_gb * GB_HOUR for w in plan.workers)


def vcpus(plan: Plan) -> int:
    return sum(w.vcpu for w in plan.workers)
