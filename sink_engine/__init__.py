"""Exactly-once Kafka-to-S3 sink on Spark, configured like the Confluent S3 sink connector."""

__version__ = "0.1.0"  # the package's version (pyproject.toml reads it)
