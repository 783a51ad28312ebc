"""IcebergFormat: a connector's records appended to Apache Iceberg tables, exactly once (docs/iceberg.md).

Spark tasks write Parquet data files in the table's schema and partition spec (`task.py`, `table_writer.py`) and
return them; the driver appends a run's files for a table as one snapshot whose summary holds the connector, the
lease epoch and each topic-partition's next offset (`commit.py`), then commits the offsets in DynamoDB. A
continuous run's tasks stage their files (`stream_stage.py`, `staging.py`) and its driver appends them
(`stream_commit.py`). `target.py` is the target; `doctor.py` and `lake_formation.py` the doctor's checks; `cli.py`
`sink-engine iceberg maintain` (`maintain.py`). Config parsing imports only `settings.py` here, which needs no
pyiceberg; the target imports the rest where its steps run.
"""
