"""Exactly-once Kafka-to-S3 sink on Spark, configured like the Confluent S3 sink connector."""
