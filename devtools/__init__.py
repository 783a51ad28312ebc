"""Developer tools: the embedded local stack, sample producers, the demo and the benchmark."""
