"""Names of the boto3 clients in annotations, one per AWS service the code calls.

boto3 ships no types and the project installs no stubs (pyproject.toml's [tool.mypy] reads boto3 as untyped), so
each name is an alias of `Any`: it says which service a parameter talks to, and is the one place to point at
`mypy_boto3_<service>`'s client class should the stubs be added (requirements-dev.txt)."""

from __future__ import annotations

from typing import Any, TypeAlias

S3Client: TypeAlias = Any
DynamoDBClient: TypeAlias = Any
CloudWatchClient: TypeAlias = Any
GlueClient: TypeAlias = Any
KafkaClient: TypeAlias = Any  # Amazon MSK's control plane ("kafka")
LakeFormationClient: TypeAlias = Any
LambdaClient: TypeAlias = Any
EMRServerlessClient: TypeAlias = Any
STSClient: TypeAlias = Any
SecretsClient: TypeAlias = Any  # Secrets Manager's or Systems Manager's (Parameter Store), the same calls used
