"""The stacks of one environment: stateful data apart from the stateless service."""
