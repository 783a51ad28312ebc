"""Object naming and S3 access."""
