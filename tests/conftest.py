"""Session-wide real parts: the local stack (Apache Kafka broker, moto server) and one local Spark session."""

from __future__ import annotations

import uuid

import boto3
import pytest

from devtools.stack import LocalStack
from sink_engine.config import parse_config
from sink_engine.offsets import ensure_table

BUCKET = "test-lake"
TABLE = "test-offsets"

# What synthesizes the CDK app: it rewrites the Lambda code folders under build/ (infra/packaging.py
# `assemble_code`) and builds the artifacts there when missing, so no two of them may run at once. Under pytest-xdist
# with `--dist loadgroup` (`make test`) they form one group, run by one worker one after another; every other test
# module is dealt whole to whichever worker is free (its module-scoped fixtures made once). A test elsewhere that
# synthesizes joins this list.
SYNTHESIZING = ("tests/infra/", "tests/iam/", "tests/e2e/", "tests/deployed/", "tests/catalog/test_athena_tables.py")


@pytest.hookimpl(optionalhook=True, tryfirst=True)
def pytest_xdist_make_scheduler(config, log):
    """`--dist loadgroup` with the group above and one unit per other module, the units of most tests first.
    (xdist's own groups, `xdist_group` marks, do not reach its scheduler under pytest 9, whose node ids it can no
    longer suffix with the group.)"""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class SynthesisGroup(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return "synthesis" if nodeid.startswith(SYNTHESIZING) else nodeid.split("::", 1)[0]

    return SynthesisGroup(config, log)


@pytest.fixture(scope="session")
def stack():
    with LocalStack() as running:
        running.apply_env()
        boto3.client("s3").create_bucket(Bucket=BUCKET)
        ensure_table(boto3.client("dynamodb"), TABLE)
        yield running


@pytest.fixture(scope="session")
def spark(stack):
    from sink_engine.run.spark_runner import spark_session

    session = spark_session("sink-engine-tests")
    yield session
    session.stop()


@pytest.fixture(scope="session")
def artifacts(tmp_path_factory):
    """The deployed artifacts built from this tree for this machine (tests/deployed/artifacts.py: the job archive,
    each function's code and layers, built on first use): one set for the session, shared by tests/deployed and
    tests/e2e (a fixture a sub-folder's conftest imports would be built again for that folder)."""
    from tests.deployed.artifacts import Artifacts

    return Artifacts(tmp_path_factory.mktemp("deployed"))


# One meaning per fixture name. `s3` and `dynamodb` are clients of the session's stack (moto's server), made once
# with the stack's environment: a test that points boto3 elsewhere (monkeypatch, the fault proxy) still reads what
# happened through them. `moto_s3` is S3 in this process (moto's mock_aws), apart from the stack; a module that
# stubs a client names its fixture `stubbed_<service>`.
@pytest.fixture(scope="session")
def s3(stack):
    return boto3.client("s3")


@pytest.fixture(scope="session")
def dynamodb(stack):
    return boto3.client("dynamodb")


@pytest.fixture
def moto_s3(monkeypatch):
    """An S3 client of moto in this process (mock_aws), with the bucket `lake`; the stack's endpoint unset."""
    from moto import mock_aws

    for name in ("AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3"):  # the session's stack sets them once it started
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    with mock_aws():
        client = boto3.client("s3", region_name="us-east-1")
        client.create_bucket(Bucket="lake")
        yield client


@pytest.fixture
def unique():
    """A short unique suffix for topics and connector names, so tests never share state."""
    return uuid.uuid4().hex[:8]


@pytest.fixture(scope="session")
def new_topic(stack):
    """Create a topic on the session's broker and fill it: `new_topic(config or name, partitions, values=None,
    keys=None, events=0, settings=None)` returns its name (a config's first topic). `values` (bytes or None) go
    round-robin over the partitions with their `keys` (devtools.producer.produce); `events` sample events of ids 0..
    (produce_events); `settings` the topic's configs."""
    from devtools.producer import create_topic, produce, produce_events

    def create(topic, partitions: int, values=None, keys=None, events: int = 0, settings=None) -> str:
        name = topic if isinstance(topic, str) else topic["topics"][0]
        create_topic(stack.bootstrap_servers, name, partitions, settings)
        if values is not None:
            produce(stack.bootstrap_servers, name, values, partitions, keys=keys)
        if events:
            produce_events(stack.bootstrap_servers, name, events, partitions)
        return name

    return create


@pytest.fixture
def connector(stack, unique):
    """Build a connector config for a fresh topic; overrides are Confluent keys."""

    def build(**overrides):
        raw = {
            "name": f"conn-{unique}",
            "connector.class": "io.confluent.connect.s3.S3SinkConnector",
            "topics": f"events-{unique}",
            "bootstrap.servers": stack.bootstrap_servers,
            "s3.bucket.name": BUCKET,
            "s3.region": "us-east-1",
            "flush.size": 100,
            "format.class": "io.confluent.connect.s3.format.json.JsonFormat",
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter.schemas.enable": "false",
            "offset.storage.dynamodb.table": TABLE,
            "tasks.max": 4,
            "sink.kafka.timeout.ms": 20000,
        }
        raw.update({k.replace("_", "."): v for k, v in overrides.items()})
        return parse_config({"name": raw.pop("name"), "config": raw})

    return build
