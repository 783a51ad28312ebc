"""Errors of the trigger: a bad environment or invocation, named by the connector or key at fault."""

from __future__ import annotations


class TriggerError(Exception):
    """Base of the trigger's own errors."""


class TriggerConfigError(TriggerError, ValueError):
    """A connector index entry or environment value the trigger cannot use."""

    def __init__(self, connector: str, key: str, message: str):
        super().__init__(f"connector {connector!r}, {key}: {message}")
        self.connector, self.key = connector, key


class UnknownRequestError(TriggerError):
    """A direct invocation the trigger does not understand (an unknown action or connector)."""
