"""SASL/SCRAM-SHA-512 over TLS with ACLs, as MSK's SCRAM listener offers them, on Apache Kafka (a broker of this
module's: devtools/kafka_security.py): the connector's principal `sink` may READ (and so DESCRIBE) the topics
named `granted-*` and nothing else. A run lands its records; a topic it may not read is an error naming the topic,
and nothing is committed; a wrong password is an authentication error, quickly; the doctor's Kafka check passes
with good credentials and names the cause with bad ones."""

from __future__ import annotations

import json
import time

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import (
    AclBinding,
    AclOperation,
    AclPermissionType,
    AdminClient,
    NewTopic,
    ResourcePatternType,
    ResourceType,
)

from devtools.kafka_broker import KafkaBroker
from devtools.kafka_security import ScramTls
from sink_engine.cli import main
from sink_engine.config import parse_config
from sink_engine.driver.job import now_ms, run_job
from sink_engine.errors import SourceError
from sink_engine.offsets import OffsetStore
from sink_engine.source.metadata import await_leaders
from tests.conftest import BUCKET, TABLE
from tests.s3_reader import list_keys, object_bodies

USERS = {"admin": "admin-secret", "sink": "sink-secret", "groupless": "groupless-secret"}


@pytest.fixture(scope="module")
def broker(stack):
    """The secured broker: `sink` may read the topics whose names start with `granted-`, only describe those named
    `described-*`, and describe the groups `connect-*` (the connectors' consumer groups, which librdkafka looks up);
    `groupless` may read the `granted-` topics only."""
    with KafkaBroker(security=ScramTls(dict(USERS))) as running:
        admin = AdminClient({"bootstrap.servers": running.bootstrap_servers, **running.admin_settings()})
        acls = [
            allow("User:sink", ResourceType.TOPIC, "granted-", AclOperation.READ),
            allow("User:sink", ResourceType.TOPIC, "described-", AclOperation.DESCRIBE),
            allow("User:sink", ResourceType.GROUP, "connect-", AclOperation.DESCRIBE),
            allow("User:groupless", ResourceType.TOPIC, "granted-", AclOperation.READ),
        ]
        for future in admin.create_acls(acls).values():
            future.result(30)
        yield running


def allow(principal: str, kind: ResourceType, prefix: str, operation: AclOperation) -> AclBinding:
    return AclBinding(kind, prefix, ResourcePatternType.PREFIXED, principal, "*", operation, AclPermissionType.ALLOW)


def filled_topic(broker, name: str, count: int) -> str:
    """`name` with one partition holding `count` JSON records, written by the admin."""
    client = {"bootstrap.servers": broker.bootstrap_servers, **broker.admin_settings()}
    admin = AdminClient(client)
    admin.create_topics([NewTopic(name, 1, 1)])[name].result(30)
    await_leaders(admin, name, 30)
    producer = Producer(client)
    for i in range(count):
        producer.produce(name, value=json.dumps({"id": i}).encode(), partition=0)
    assert producer.flush(30) == 0
    return name


def connector(broker, name: str, topics: str, user: str = "sink", password: str | None = None) -> dict:
    """The connector JSON as a user of MSK's SCRAM listener writes it: Java's JAAS login, the private CA's PEM."""
    return {
        "name": name,
        "config": {
            "topics": topics,
            "bootstrap.servers": broker.bootstrap_servers,
            "s3.bucket.name": BUCKET,
            "s3.region": "us-east-1",
            "offset.storage.dynamodb.table": TABLE,
            "flush.size": "5",
            "format.class": "io.confluent.connect.s3.format.json.JsonFormat",
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter.schemas.enable": "false",
            "sink.kafka.timeout.ms": "20000",
            "security.protocol": "SASL_SSL",
            "sasl.mechanism": "SCRAM-SHA-512",
            "sasl.jaas.config": broker.security.jaas_config(user, password),
            "consumer.override.ssl.ca.location": str(broker.security.ca_path),
        },
    }


def commits(dynamodb, name: str) -> dict:
    return OffsetStore(dynamodb, TABLE, now_ms).committed(name)


def test_a_run_lands_its_records_over_sasl_ssl_with_scram(broker, spark, s3, dynamodb, unique):
    # given 10 records in a topic the connector's principal may read
    topic = filled_topic(broker, f"granted-{unique}", 10)
    document = connector(broker, f"scram-{unique}", topic)
    # when the sink runs, logging in as `sink` over TLS
    run_job(parse_config(document), spark, dynamodb)
    # then both objects of 5 records landed, and the run committed offset 10
    bodies = object_bodies(s3, BUCKET, f"topics/{topic}/")
    assert sorted(bodies) == [f"topics/{topic}/partition=0/{topic}+0+{n:010d}.json" for n in (0, 5)]
    assert [c.next_offset for c in commits(dynamodb, document["name"]).values()] == [10]


DENIED = {
    "no ACL": ("denied", "topic {topic}: not authorized to describe it (TOPIC_AUTHORIZATION_FAILED)"),
    "DESCRIBE only": (
        "described",
        "fetch from {topic}-0 refused (TOPIC_AUTHORIZATION_FAILED): the connector's "
        "principal needs READ on topic {topic}",
    ),
}


@pytest.mark.parametrize("acl", DENIED, ids=list(DENIED))
def test_a_topic_the_principal_may_not_read_is_an_error_naming_it_and_nothing_is_committed(
    broker, spark, s3, dynamodb, unique, acl
):
    # given a connector of two topics, the second of which its principal has no ACL for, or DESCRIBE only
    prefix, says = DENIED[acl]
    granted = filled_topic(broker, f"granted-{unique}", 10)
    denied = filled_topic(broker, f"{prefix}-{unique}", 10)
    document = connector(broker, f"denied-{unique}", f"{granted},{denied}")
    # when the sink runs, then it fails naming the denied topic and Kafka's answer
    with pytest.raises(SourceError) as failed:
        run_job(parse_config(document), spark, dynamodb)
    assert says.format(topic=denied) in str(failed.value) and granted not in str(failed.value)
    # and nothing landed or was committed, for either topic
    assert commits(dynamodb, document["name"]) == {}
    assert list_keys(s3, BUCKET, f"topics/{granted}/") == [] and list_keys(s3, BUCKET, f"topics/{denied}/") == []


def test_a_wrong_password_is_an_authentication_error_before_the_kafka_timeout(broker, spark, dynamodb, unique):
    # given the connector with a wrong password (its Kafka timeout 20 s)
    topic = filled_topic(broker, f"granted-{unique}", 1)
    document = connector(broker, f"wrong-{unique}", topic, password="not-the-password")
    # when the sink runs
    started = time.monotonic()
    with pytest.raises(SourceError) as failed:
        run_job(parse_config(document), spark, dynamodb)
    # then it fails with the broker's answer to the SCRAM login, well before the timeout, and commits nothing
    assert time.monotonic() - started < 15
    assert (
        "Authentication failed during authentication due to invalid credentials with SASL mechanism "
        "SCRAM-SHA-512" in str(failed.value)
    )
    assert commits(dynamodb, document["name"]) == {}


def doctor_rows(document: dict, tmp_path, capsys) -> tuple[int, dict[str, str]]:
    """(exit code, check -> its line)."""
    path = tmp_path / "connector.json"
    path.write_text(json.dumps(document))
    code = main(["doctor", "--config", str(path)])
    lines = capsys.readouterr().out.splitlines()[:-1]
    return code, {line.split("  ")[0].strip(): line for line in lines}


def test_the_doctor_reaches_the_topics_over_scram_and_tls(broker, stack, unique, tmp_path, capsys):
    # given a connector whose principal may read its topic
    topic = filled_topic(broker, f"granted-{unique}", 3)
    # when the doctor checks it, then every check passes, the Kafka one saying how it logged in
    code, rows = doctor_rows(connector(broker, f"doctor-{unique}", topic), tmp_path, capsys)
    assert code == 0, rows
    assert (
        f"SASL_SSL SCRAM-SHA-512: 1 partitions of {topic}, 3 records between their watermarks" in rows["kafka topics"]
    )


DOCTOR_FAULTS = {
    "wrong password": (
        "granted",
        "sink",
        "not-the-password",
        "(SASL_SSL SCRAM-SHA-512): Kafka refused the login: "
        "sasl_ssl://{bootstrap}/bootstrap: SASL authentication error: Authentication failed during authentication due to invalid "
        "credentials with SASL mechanism SCRAM-SHA-512",
    ),
    "denied topic": ("denied", "sink", None, "topic {topic}: not authorized to describe it"),
    "no group ACL": (
        "granted",
        "groupless",
        None,
        "Kafka refused the consumer's group (GROUP_AUTHORIZATION_FAILED): "
        "the connector's principal needs DESCRIBE on the group connect-<connector name>",
    ),
}


@pytest.mark.parametrize("fault", DOCTOR_FAULTS, ids=list(DOCTOR_FAULTS))
def test_the_doctor_names_why_the_broker_refused(broker, stack, unique, tmp_path, capsys, fault):
    # given the connector with a wrong password, reading a topic its principal has no ACL for, or a principal
    # without the ACL of its group
    prefix, user, password, says = DOCTOR_FAULTS[fault]
    topic = filled_topic(broker, f"{prefix}-{unique}", 1)
    document = connector(broker, f"doctor-{unique}", topic, user, password)
    # when the doctor checks it, then the Kafka check fails saying what the broker answered
    code, rows = doctor_rows(document, tmp_path, capsys)
    assert code == 1 and "FAILED" in rows["kafka topics"]
    assert says.format(topic=topic, bootstrap=broker.bootstrap_servers) in rows["kafka topics"], rows["kafka topics"]


DEAD_LETTERS = {
    "denied": ("FAILED", "topic {topic}: not authorized to describe it"),
    "absent": ("ok", "{topic} does not exist yet: the first dead letter creates it"),
}


@pytest.mark.parametrize("case", DEAD_LETTERS, ids=list(DEAD_LETTERS))
def test_the_doctor_tells_a_denied_dead_letter_topic_from_an_absent_one(broker, stack, unique, tmp_path, capsys, case):
    # given a connector whose dead-letter topic exists and is denied to its principal, or is allowed and absent
    topic = filled_topic(broker, f"granted-{unique}", 1)
    dead_letters = filled_topic(broker, f"denied-{unique}", 0) if case == "denied" else f"granted-dlq-{unique}"
    document = connector(broker, f"doctor-{unique}", topic)
    document["config"].update({"errors.tolerance": "all", "errors.deadletterqueue.topic.name": dead_letters})
    # when the doctor checks it, then the dead-letter check says which (Kafka leaves a topic the principal may not
    # describe out of a listing, as if it were absent)
    status, says = DEAD_LETTERS[case]
    code, rows = doctor_rows(document, tmp_path, capsys)
    assert code == (1 if status == "FAILED" else 0)
    assert rows["kafka dead-letter topic"].split()[3] == status, rows["kafka dead-letter topic"]
    assert says.format(topic=dead_letters) in rows["kafka dead-letter topic"]
