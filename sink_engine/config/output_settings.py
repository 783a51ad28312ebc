"""Checks of the output settings that a single key's type cannot express (formats, S3 object options)."""
from __future__ import annotations

from sink_engine.errors import ConfigError


def check_output_settings(config) -> None:
    """The ByteArray separator's escapes must be valid; a KMS key needs KMS encryption."""
    from sink_engine.format.bytearray_format import unescape

    try:
        unescape(config["format.bytearray.separator"])
    except ValueError as e:
        raise ConfigError("format.bytearray.separator", str(e)) from None
    if config["s3.sse.kms.key.id"] and not config["s3.ssea.name"].startswith("aws:kms"):
        raise ConfigError("s3.sse.kms.key.id", "is only used with s3.ssea.name=aws:kms (or aws:kms:dsse); set it")
