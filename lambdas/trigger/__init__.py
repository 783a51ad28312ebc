"""Trigger: starts a sink job run for a connector when a run would close a file of one of its topic-partitions."""
