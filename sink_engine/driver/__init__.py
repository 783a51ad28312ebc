"""The driver of a run (docs/exactly-once.md): `settings.py` holds the keys it reads itself (`RunSettings`);
`job.py` leases, plans, has Spark run the ranges and commits; `planner.py` plans the ranges, `wall_clock.py` adds
the wall-clock decisions that `plans.py` records, `spark_runner.py` runs the ranges as Spark tasks
(`sink_engine.task`), `committer.py` commits the offsets; `status.py` reports them; `metrics.py` publishes each
run's figures to CloudWatch. What differs by target (writing a range, a table's snapshot commit and its recovery)
is the target's (`sink_engine.target`), called by `job.py`."""
