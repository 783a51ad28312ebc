"""AWS clients for the driver. Endpoints come from boto3's own resolution (AWS_ENDPOINT_URL*)."""

from __future__ import annotations

import os

import boto3

from sink_engine.aws_types import DynamoDBClient
from sink_engine.storage.s3 import S3Access, s3_client


def region(configured: str) -> str:
    """The environment's region (AWS_REGION, AWS_DEFAULT_REGION), else `configured` (s3.region)."""
    return os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or configured


def dynamodb_client(configured_region: str) -> DynamoDBClient:
    return boto3.client("dynamodb", region_name=region(configured_region))


__all__ = ["S3Access", "dynamodb_client", "region", "s3_client"]
