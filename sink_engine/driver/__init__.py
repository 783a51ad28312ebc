"""The driver of a bounded run (docs/exactly-once.md): `job.py` leases, plans, has Spark run the ranges and commits;
`planner.py` plans the ranges, `run_timeout.py` cancels a run past its deadline; `status.py` reports the committed
offsets. What every run shares with a continuous one (its settings, recorded plans, wall-clock cuts, the Spark
session, the offsets commit, metrics) is `sink_engine.run`'s; what differs by target (writing a range, a table's
snapshot commit and its recovery) is the target's (`sink_engine.target`), called by `job.py`."""
