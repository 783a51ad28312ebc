"""Errors of the deployment code. Each names the setting or file at fault, so synthesis fails with a clear message."""

from __future__ import annotations


class SettingsError(Exception):
    """An environment setting is missing or malformed; `setting` is its dotted path, `source` the file."""

    def __init__(self, source: str, setting: str, message: str):
        self.source, self.setting = source, setting
        super().__init__(f"setting '{setting}' in {source}: {message}")


class ConnectorSpecError(Exception):
    """A connector config file does not fit the environment it is deployed to; names the file and key."""

    def __init__(self, source: str, key: str, message: str):
        self.source, self.key = source, key
        super().__init__(f"connector config {source}, key '{key}': {message}")


class TemplateSizeError(Exception):
    """A synthesized template is larger than CloudFormation takes; names the stack."""


class PackagingError(Exception):
    """A build artifact (job archive, Lambda layer) is missing or could not be built."""
