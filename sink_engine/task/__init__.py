"""The per-task engine: what one Spark task does with one planned range of a topic-partition.

`run.write_to` reads the range and passes its records through the record steps (`steps`: tombstones, value
conversion, single message transforms (`transforms`), partitioning, dead letters) to the writer of the range's
output (`output.RangeOutput`, built by its target). For S3 objects (`run.run_range`, `object_output`) that is a
`writer.TopicPartitionWriter`, which routes them into open files (sidecar objects beside them, `sidecars`), closes
the files when the rotation policy (`rotation`) or a schema change (`schema_gate`) says so and uploads them under
deterministic keys. All of it is built from one
`settings.TaskSettings`, read once from the config.
"""
