"""The offsets and lease table of the engine (its items: `sink_engine.offsets.layout`), point-in-time recovery on,
protected in prod."""

from __future__ import annotations

from aws_cdk import RemovalPolicy
from aws_cdk import aws_dynamodb as dynamodb
from constructs import Construct

from infra.settings import Settings
from sink_engine.offsets.layout import PK, SK


class OffsetsTable(Construct):
    """Attribute: `table`. `expiration` is the TTL attribute (trigger bookkeeping may set it; offsets never do)."""

    def __init__(self, scope: Construct, id: str, *, settings: Settings):
        super().__init__(scope, id)
        protect = settings.protect_data
        self.table = dynamodb.Table(
            self,
            "Table",
            table_name=settings.table_name,
            partition_key=dynamodb.Attribute(name=PK, type=dynamodb.AttributeType.STRING),
            sort_key=dynamodb.Attribute(name=SK, type=dynamodb.AttributeType.STRING),
            billing_mode=dynamodb.BillingMode.PAY_PER_REQUEST,
            encryption=dynamodb.TableEncryption.AWS_MANAGED,
            point_in_time_recovery_specification=dynamodb.PointInTimeRecoverySpecification(
                point_in_time_recovery_enabled=True
            ),
            deletion_protection=protect,
            # RetainExceptOnCreate: a failed first create leaves no table behind to block the fixed name
            removal_policy=RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE if protect else RemovalPolicy.DESTROY,
            time_to_live_attribute="expiration",
        )
