"""What a run writes to: S3 objects (`s3_objects.py`) or Iceberg tables (`iceberg_tables.py`), each a `Target`
(`base.py`) for the steps in which they differ; `registry.target_for` chooses one from the config, once, and no
other module asks which it is."""

from sink_engine.target.choice import target_for
from sink_engine.target.contract import Target

__all__ = ["Target", "target_for"]
