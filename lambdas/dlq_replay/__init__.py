"""DLQ replay Lambda: an operator replays a connector's dead letters into Kafka, each at most once."""
