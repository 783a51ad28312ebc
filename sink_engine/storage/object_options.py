"""How objects are written: encryption, ACL, tags, multipart part size and retries (the `s3.*` keys)."""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlencode

from sink_engine.config import SinkConfig
from sink_engine.config.keys import DEFAULT_PART_SIZE
from sink_engine.storage.retry import RetryPolicy

_SSE_HEADER_VALUES = {"aes256": "AES256", "aws:kms": "aws:kms", "aws:kms:dsse": "aws:kms:dsse"}


def file_tags(start_offset: int, end_offset: int, record_count: int) -> dict[str, str]:
    """The tags the Confluent connector puts on a data object with `s3.object.tagging=true`."""
    return {"startOffset": str(start_offset), "endOffset": str(end_offset), "recordCount": str(record_count)}


@dataclass(frozen=True)
class ObjectOptions:
    sse: str = ""
    kms_key_id: str | None = None
    acl: str | None = None
    tagging: bool = False
    part_size: int = DEFAULT_PART_SIZE
    retry: RetryPolicy = field(default_factory=RetryPolicy)

    @classmethod
    def from_config(cls, config: SinkConfig) -> ObjectOptions:
        return cls(
            config["s3.ssea.name"],
            config["s3.sse.kms.key.id"],
            config["s3.acl.canned"],
            config["s3.object.tagging"],
            config["s3.part.size"],
            RetryPolicy(config["s3.part.retries"], config["s3.retry.backoff.ms"]),
        )

    def create_args(self, tags: dict[str, str] | None) -> dict:
        """Extra arguments of PutObject / CreateMultipartUpload; tags only with `s3.object.tagging`."""
        args: dict = {}
        if self.sse:
            args["ServerSideEncryption"] = _SSE_HEADER_VALUES[self.sse]
        if self.kms_key_id:
            args["SSEKMSKeyId"] = self.kms_key_id
        if self.acl:
            args["ACL"] = self.acl
        if self.tagging and tags:
            args["Tagging"] = urlencode(tags)
        return args
