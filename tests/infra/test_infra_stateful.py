"""The stateful stack: data-lake bucket and offsets table, as the templates declare them."""

from aws_cdk.assertions import Match


def test_bucket_is_kms_encrypted_private_logged(each_env):
    data = each_env.template("data")
    settings = each_env.deployment.settings
    data.has_resource_properties(
        "AWS::S3::Bucket",
        {
            "BucketName": settings.bucket_name,
            "BucketEncryption": {
                "ServerSideEncryptionConfiguration": [
                    {
                        "BucketKeyEnabled": True,
                        "ServerSideEncryptionByDefault": {
                            "SSEAlgorithm": "aws:kms",
                            "KMSMasterKeyID": Match.any_value(),
                        },
                    }
                ]
            },
            "PublicAccessBlockConfiguration": {
                "BlockPublicAcls": True,
                "BlockPublicPolicy": True,
                "IgnorePublicAcls": True,
                "RestrictPublicBuckets": True,
            },
            "LoggingConfiguration": {
                "DestinationBucketName": Match.any_value(),
                "LogFilePrefix": f"{settings.bucket_name}/",
            },
            "MetricsConfigurations": [{"Id": "dlq", "Prefix": settings.retention.dlq_prefix}],
        },
    )
    data.has_resource_properties("AWS::KMS::Key", {"EnableKeyRotation": True})


def test_bucket_policies_deny_plain_http(each_env):
    policies = each_env.template("data").find_resources("AWS::S3::BucketPolicy")
    assert len(policies) == 2  # the data bucket and the access-log bucket
    for policy in policies.values():
        statements = policy["Properties"]["PolicyDocument"]["Statement"]
        assert any(
            s["Effect"] == "Deny" and s["Condition"] == {"Bool": {"aws:SecureTransport": "false"}} for s in statements
        )


def test_lifecycle_archives_topics_aborts_uploads_expires_dlq(each_env):
    """Every rule is CloudFormation's (the admin Lambda owns none): one archive rule per connector topics.dir."""
    retention = each_env.deployment.settings.retention
    transitions = [
        {"StorageClass": "GLACIER", "TransitionInDays": retention.glacier_after_days},
        {"StorageClass": "DEEP_ARCHIVE", "TransitionInDays": retention.deep_archive_after_days},
    ]
    dirs = sorted({"topics", *(c.topics_dir for c in each_env.deployment.connectors)})
    archive = [
        {
            "Id": "archive-topics" if d == "topics" else f"archive-{d}",
            "Prefix": f"{d}/",
            "Status": "Enabled",
            "Transitions": transitions,
        }
        for d in dirs
    ]
    each_env.template("data").has_resource_properties(
        "AWS::S3::Bucket",
        {
            "LifecycleConfiguration": {
                "Rules": [
                    *archive,
                    {
                        "Id": "abort-incomplete-uploads",
                        "AbortIncompleteMultipartUpload": {"DaysAfterInitiation": 7},
                        "Status": "Enabled",
                    },
                    {
                        "Id": "expire-dlq",
                        "Prefix": retention.dlq_prefix,
                        "ExpirationInDays": retention.dlq_expire_after_days,
                        "Status": "Enabled",
                    },
                ]
            }
        },
    )


def test_prod_archives_the_audit_connector_prefix(prod):
    rules = next(
        iter(
            prod.template("data")
            .find_resources("AWS::S3::Bucket", {"Properties": {"BucketName": prod.deployment.settings.bucket_name}})
            .values()
        )
    )["Properties"]["LifecycleConfiguration"]["Rules"]
    assert "audit/" in [r.get("Prefix") for r in rules]


def test_table_has_engine_keys_and_pitr(each_env):
    each_env.template("data").has_resource_properties(
        "AWS::DynamoDB::Table",
        {
            "TableName": each_env.deployment.settings.table_name,
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
            "AttributeDefinitions": [
                {"AttributeName": "pk", "AttributeType": "S"},
                {"AttributeName": "sk", "AttributeType": "S"},
            ],
            "BillingMode": "PAY_PER_REQUEST",
            "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": True},
        },
    )


def test_prod_table_is_retained_and_deletion_protected(prod):
    # retained, except when the stack's first create fails: its fixed name must be free for the next create
    prod.template("data").has_resource(
        "AWS::DynamoDB::Table",
        {
            "DeletionPolicy": "RetainExceptOnCreate",
            "UpdateReplacePolicy": "Retain",
            "Properties": {"DeletionProtectionEnabled": True},
        },
    )


def test_dev_table_can_be_torn_down(dev):
    dev.template("data").has_resource(
        "AWS::DynamoDB::Table", {"DeletionPolicy": "Delete", "Properties": {"DeletionProtectionEnabled": False}}
    )


def test_buckets_are_retained_everywhere_except_after_a_failed_first_create(each_env):
    for bucket in each_env.template("data").find_resources("AWS::S3::Bucket").values():
        assert (bucket["DeletionPolicy"], bucket["UpdateReplacePolicy"]) == ("RetainExceptOnCreate", "Retain")
