"""Reading Kafka: client settings, partition discovery and end offsets, and reading one planned range."""
