"""The driver of a run (README, Exactly once): `job.py` leases, plans, has Spark run the ranges and commits;
`planner.py` plans the ranges, `wall_clock.py` adds the wall-clock decisions that `plans.py` records,
`spark_runner.py` runs the ranges as Spark tasks (`sink_engine.task`), `committer.py` commits the offsets;
`status.py` reports them; `metrics.py` publishes each run's figures to CloudWatch. IcebergFormat's snapshot commit
is `sink_engine.iceberg.commit`, called by `job.py`."""
