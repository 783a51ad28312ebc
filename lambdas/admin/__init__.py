"""Admin: publishes the connector configs the job reads (and repairs them on drift)."""
