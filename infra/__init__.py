"""AWS deployment of the sink: per-environment settings, connector specs, packaging, CDK constructs and stacks."""
