"""Fault injection: S3/DynamoDB faults through a proxy in front of moto, Kafka behind a TCP proxy, killed Spark
workers and runs, skewed clocks. Scenarios are seeded; `make test` runs a fast subset, `make test-faults` all."""
