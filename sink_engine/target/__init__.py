"""What a run writes to: S3 objects (`s3_objects/`) or Iceberg tables (`iceberg_tables/`), each a folder holding
its target class, writer, commit sides, checks and settings. `contract.py` is what a target implements and declares
(`Capabilities`); `choice.target_for` chooses one from the config, once, and no other module asks which it is."""
