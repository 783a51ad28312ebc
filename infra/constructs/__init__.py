"""CDK constructs of the sink, one resource group each, with documented props and exposed attributes."""
