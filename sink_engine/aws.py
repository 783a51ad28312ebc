"""AWS clients for the driver. Endpoints come from boto3's own resolution (AWS_ENDPOINT_URL*)."""
from __future__ import annotations

import os

import boto3

from sink_engine.config import SinkConfig
from sink_engine.storage.s3 import s3_client


def region(config: SinkConfig) -> str:
    return os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or config["s3.region"]


def dynamodb_client(config: SinkConfig):
    return boto3.client("dynamodb", region_name=region(config))


__all__ = ["dynamodb_client", "region", "s3_client"]
