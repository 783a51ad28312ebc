"""Fault injection for the fault matrix (tests/faults, docs/faults.md): proxies in front of the real parts."""
