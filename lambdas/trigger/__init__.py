"""Trigger: starts a sink job run per connector when enough records or old enough records are pending."""
