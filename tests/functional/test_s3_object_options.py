"""The s3.* object options as moto's server records them: encryption, tags, ACL, multipart uploads."""

from __future__ import annotations

import boto3
import orjson

from devtools.producer import produce
from sink_engine.driver.job import run_job
from sink_engine.storage.object_options import ObjectOptions
from sink_engine.storage.s3 import put_object
from tests.conftest import BUCKET
from tests.s3_reader import list_keys

MIB = 1024 * 1024
ALL_USERS = "http://acs.amazonaws.com/groups/global/AllUsers"


def test_kms_encryption_tags_acl_and_multipart_on_sink_objects(stack, new_topic, spark, s3, dynamodb, connector):
    key_id = boto3.client("kms").create_key()["KeyMetadata"]["KeyId"]
    config = connector(
        **{
            "flush.size": 7,
            "format.class": "ByteArrayFormat",
            "value.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
            "s3.ssea.name": "aws:kms",
            "s3.sse.kms.key.id": key_id,
            "s3.acl.canned": "public-read",
            "s3.object.tagging": "true",
            "s3.part.size": 5 * MIB,
        }
    )
    topic = new_topic(config, 1)
    values = [bytes([65 + i]) * 900_000 for i in range(8)]
    produce(stack.bootstrap_servers, topic, values, 1)
    # when 7 values of 900 kB (6.3 MB) make one file, larger than one 5 MiB part
    run_job(config, spark, dynamodb)
    [key] = list_keys(s3, BUCKET, f"topics/{topic}/")
    head = s3.head_object(Bucket=BUCKET, Key=key)
    # then it went up in two parts, encrypted with the KMS key, tagged and with the canned ACL
    assert head["ETag"].endswith('-2"')
    assert head["ServerSideEncryption"] == "aws:kms" and key_id in head["SSEKMSKeyId"]
    tags = {t["Key"]: t["Value"] for t in s3.get_object_tagging(Bucket=BUCKET, Key=key)["TagSet"]}
    assert tags == {"startOffset": "0", "endOffset": "6", "recordCount": "7"}
    grants = s3.get_object_acl(Bucket=BUCKET, Key=key)["Grants"]
    assert {"Grantee": {"Type": "Group", "URI": ALL_USERS}, "Permission": "READ"} in grants
    assert s3.get_object(Bucket=BUCKET, Key=key)["Body"].read() == b"\n".join(values[:7]) + b"\n"


def test_small_objects_are_one_put_with_aes256(new_topic, spark, s3, dynamodb, connector):
    config = connector(**{"flush.size": 2, "s3.ssea.name": "AES256"})
    topic = new_topic(config, 1, [orjson.dumps({"n": i}) for i in range(2)])
    run_job(config, spark, dynamodb)
    [key] = list_keys(s3, BUCKET, f"topics/{topic}/")
    head = s3.head_object(Bucket=BUCKET, Key=key)
    assert head["ServerSideEncryption"] == "AES256" and "-" not in head["ETag"]
    assert s3.get_object_tagging(Bucket=BUCKET, Key=key)["TagSet"] == []


def test_multipart_parts_are_the_configured_size(s3):
    body = bytes(range(256)) * (11 * MIB // 256)
    put_object(s3, BUCKET, "multipart/eleven", body, ObjectOptions(part_size=5 * MIB))
    head = s3.head_object(Bucket=BUCKET, Key="multipart/eleven", PartNumber=1)
    assert head["ContentLength"] == 5 * MIB and head["PartsCount"] == 3
    assert s3.get_object(Bucket=BUCKET, Key="multipart/eleven")["Body"].read() == body
