"""What every run shares, bounded (`sink_engine.driver`) or continuous (`sink_engine.continuous`): `settings.py` holds
the keys a run reads itself (`RunSettings`); `preflight.py` what it checks before Spark starts; `plans.py` the plans
it records and `wall_clock.py` the wall-clock cuts they hold; `spark_runner.py` the Spark session and its tasks;
`committer.py` the offsets commit under the lease; `metrics.py` a run's figures for CloudWatch; `stopping.py` how a
run is asked to stop."""
