"""The record path, the same for every target: what one Spark task does with one planned range of a topic-partition,
and what a continuous run does with one topic-partition's records for as long as its task runs (`stream`).

`run.write_to` reads the range and passes its records through the record steps (`steps`: tombstones, value
conversion, single message transforms (`transforms`), partitioning, dead letters) to the writer of the range's
output (`output.RangeOutput`; `output.StreamOutput` for a continuous run), which its target builds
(sink_engine/target/<target>/). A record the writer refuses takes the one bad-record path (`bad_records`,
`record_writer`). All of it is built from one `settings.TaskSettings`, read once from the config (with the S3
objects' naming and rotation policy, `rotation`).
"""
