"""The S3 objects target (`target.py`): a range's records as files under deterministic keys (`writer.py`'s
TopicPartitionWriter, closing files on the rotation policy and at schema changes, `schema_gate.py`), built by
`output.py`; a continuous run's commits of them (`stream_commits.py`); `verify/`, `sink-engine verify`; `doctor.py`,
the doctor's checks of the bucket they go to."""
