"""The sample configs of the Amazon S3 Sink Connector for Confluent Cloud page (seed 001: the quick start's
connector JSON and its full key list with the optional properties), and each input/output format and codec it
lists, validated with `sink-engine validate` and run with `sink-engine run` against the local stack, landing the
format, codec and layout the page says, read back with gzip, fastavro and pyarrow.

What a Cloud config does not carry is added: the MSK bootstrap servers, the bucket's region, the offsets table.
Credentials are `${secrets:...}` references to moto's Secrets Manager, resolved by the run. The session's broker
is plaintext (SASL is tests/functional/test_scram_tls.py's, on a broker of its own), so the Kafka API key and
secret are checked to reach the client config and removed for the runs; the AWS keys stay (moto takes any)."""

from __future__ import annotations

import gzip
import io
import json
from datetime import UTC, datetime

import boto3
import fastavro
import pyarrow.parquet as pq
import pytest
from confluent_kafka import Producer
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

from devtools.producer import create_topic
from sink_engine import cli
from sink_engine.config import load_config
from sink_engine.source.client_config import consumer_settings
from sink_engine.source.settings import SourceSettings
from tests.conftest import BUCKET, TABLE
from tests.registry_topics import JsonSchemaTopic, ProtobufTopic
from tests.runs import committed_offsets
from tests.s3_reader import list_keys
from tests.schema_registry_server import SchemaRegistryServer

NINE_AM_UTC = int(datetime(2024, 3, 12, 9, 5, tzinfo=UTC).timestamp() * 1000)
HOUR_PATH = "year=2024/month=03/day=12/hour=09"


def quick_start(unique: str) -> dict:
    """The quick start's JSON as the page prints it, placeholders filled in: credentials as secret references."""
    return {
        "name": f"confluent-s3-sink-{unique}",
        "connector.class": "S3_SINK",
        "kafka.api.key": f"${{secrets:cloud-{unique}/kafka:key}}",
        "kafka.api.secret": f"${{secrets:cloud-{unique}/kafka:secret}}",
        "aws.access.key.id": f"${{secrets:cloud-{unique}/aws:id}}",
        "aws.secret.access.key": f"${{secrets:cloud-{unique}/aws:secret}}",
        "input.data.format": "JSON",
        "output.data.format": "JSON",
        "compression.codec": "JSON - gzip",
        "s3.compression.level": "6",
        "s3.bucket.name": BUCKET,
        "time.interval": "HOURLY",
        "flush.size": "1000",
        "tasks.max": "1",
        "topics": f"cloud1-{unique}, cloud2-{unique}",
    }


@pytest.fixture
def secrets(stack, unique):
    """The connector's credentials in moto's Secrets Manager, as its references name them."""
    client = boto3.client("secretsmanager")
    client.create_secret(Name=f"cloud-{unique}/kafka", SecretString=json.dumps({"key": "KAFKAKEY", "secret": "kfk-pw"}))
    client.create_secret(Name=f"cloud-{unique}/aws", SecretString=json.dumps({"id": "AKIDCLOUD", "secret": "aws-pw"}))
    return client


def local(config: dict, stack, drop_kafka_credentials: bool = True) -> dict:
    """What the Cloud file does not carry, for the local stack; the Kafka credentials removed for a run."""
    added = {
        **config,
        "bootstrap.servers": stack.bootstrap_servers,
        "s3.region": "us-east-1",
        "offset.storage.dynamodb.table": TABLE,
        "sink.kafka.timeout.ms": 20000,
    }
    if drop_kafka_credentials:
        added = {k: v for k, v in added.items() if k not in ("kafka.api.key", "kafka.api.secret")}
    return added


def write(tmp_path, config: dict) -> str:
    path = tmp_path / f"{config['name']}.json"
    path.write_text(json.dumps(config))
    return str(path)


def produce_at(bootstrap: str, topic: str, values: list[bytes], timestamps: list[int]) -> None:
    """One partition, Kafka timestamps as given; the last record alone after a flush (an exact end offset)."""
    create_topic(bootstrap, topic, 1)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    for value, stamp in zip(values[:-1], timestamps[:-1]):
        producer.produce(topic, value=value, partition=0, timestamp=stamp)
    producer.flush(30)
    producer.produce(topic, value=values[-1], partition=0, timestamp=timestamps[-1])
    assert producer.flush(30) == 0


def events(count: int, first_ms: int = NINE_AM_UTC, step_ms: int = 1000) -> tuple[list[dict], list[int]]:
    records = [{"id": i, "name": f"event-{i}", "ts": first_ms + i * step_ms} for i in range(count)]
    return records, [r["ts"] for r in records]


def run(path: str, capsys) -> str:
    assert cli.main(["run", "--config", path]) == 0, capsys.readouterr().err
    return capsys.readouterr().out


def body(s3, key: str) -> bytes:
    return s3.get_object(Bucket=BUCKET, Key=key)["Body"].read()


def test_quick_start_config_validates_and_lands_hourly_gzip_json(
    stack, spark, s3, dynamodb, secrets, unique, tmp_path, capsys
):
    config = quick_start(unique)
    # given the page's quick start file: it validates as written (references are not read by validate)
    assert cli.main(["validate", "--config", write(tmp_path, local(config, stack, False))]) == 0
    shown = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()}
    assert shown["flush.size"].split()[1] == "1000" and "from output.data.format" in shown["format.class"]
    # and a run resolves its Kafka API key and secret into the client's SASL username and password
    loaded = load_config(write(tmp_path, local(config, stack, False)))
    resolved = consumer_settings(SourceSettings.from_config(loaded))
    assert (resolved["sasl.username"], resolved["sasl.password"]) == ("KAFKAKEY", "kfk-pw")
    assert (resolved["sasl.mechanisms"], resolved["security.protocol"]) == ("SCRAM-SHA-512", "SASL_SSL")
    # when 1,000 records (flush.size) reach each of its two topics and the sink runs
    topics = [t.strip() for t in config["topics"].split(",")]
    records, stamps = events(1000)
    for topic in topics:
        produce_at(stack.bootstrap_servers, topic, [json.dumps(r).encode() for r in records], stamps)
    out = run(write(tmp_path, local(config, stack)), capsys)
    # then each topic has one gzip JSON object per hour of the records' Kafka time, holding every record
    assert out.count("wrote s3://") == 2
    for topic in topics:
        key = f"topics/{topic}/{HOUR_PATH}/{topic}+0+0000000000.json.gz"
        assert list_keys(s3, BUCKET, f"topics/{topic}/") == [key]
        assert [json.loads(line) for line in gzip.decompress(body(s3, key)).splitlines()] == records


def test_full_key_list_with_the_optional_properties(stack, spark, s3, dynamodb, secrets, unique, tmp_path, capsys):
    """The required keys plus topics.dir, path.format, rotate.schedule.interval.ms, rotate.interval.ms,
    timestamp.field, timezone and locale, with the page's tip (topics.dir json_logs/hourly, path.format
    'dt'=YYYY-MM-dd/'hr'=HH -> json_logs/hourly/<topic>/dt=2020-02-06/hr=09/) and its example zone PST."""
    topic = f"cloudkeys-{unique}"
    config = {
        **quick_start(unique),
        "topics": topic,
        "output.data.format": "AVRO",
        "compression.codec": "AVRO - deflate",
        "topics.dir": "json_logs/hourly",
        "path.format": "'dt'=YYYY-MM-dd/'hr'=HH",
        "rotate.schedule.interval.ms": "-1",
        "rotate.interval.ms": "600000",
        "timestamp.field": "ts",
        "timezone": "PST",
        "locale": "en-US",
    }
    # given records whose field ts runs from 09:50 to 10:20 PST on 2020-02-06 (Kafka time is now: not used)
    first = int(datetime(2020, 2, 6, 17, 50, tzinfo=UTC).timestamp() * 1000)
    records = [{"id": i, "name": f"event-{i}", "ts": first + i * 12_000} for i in range(150)]
    now = int(datetime.now(UTC).timestamp() * 1000)
    produce_at(stack.bootstrap_servers, topic, [json.dumps(r).encode() for r in records], [now] * 150)
    # when the sink runs
    run(write(tmp_path, local(config, stack)), capsys)
    # then files close at the PST hour and 10 minutes (rotate.interval.ms) past their first record's ts; the
    # records of the last 10 minutes wait for more (not written, not committed)
    keys = list_keys(s3, BUCKET, f"json_logs/hourly/{topic}/")
    assert keys == [
        f"json_logs/hourly/{topic}/dt=2020-02-06/hr=09/{topic}+0+0000000000.avro",
        f"json_logs/hourly/{topic}/dt=2020-02-06/hr=10/{topic}+0+0000000050.avro",
    ]
    for key, expected in zip(keys, (records[:50], records[50:100])):
        reader = fastavro.reader(io.BytesIO(body(s3, key)))
        assert reader.codec == "deflate" and list(reader) == expected
    assert committed_offsets(dynamodb, load_config(write(tmp_path, local(config, stack)))) == {0: 100}


CODECS = {
    "JSON - gzip": ("JSON", "JSON", ".json.gz"),
    "BYTES - gzip": ("BYTES", "BYTES", ".bin.gz"),
    "AVRO - bzip2": ("JSON", "AVRO", ".avro"),
    "AVRO - snappy": ("JSON", "AVRO", ".avro"),
    "PARQUET - gzip": ("JSON", "PARQUET", ".gz.parquet"),
    "PARQUET - snappy": ("JSON", "PARQUET", ".snappy.parquet"),
    "no codec, STRING input, DAILY": ("STRING", "JSON", ".json"),
}


@pytest.mark.parametrize("codec", CODECS)
def test_each_output_format_and_codec_lands_as_the_page_says(
    stack, spark, s3, dynamodb, secrets, unique, tmp_path, capsys, codec
):
    input_format, output_format, extension = CODECS[codec]
    topic = f"cloudfmt-{unique}"
    daily = codec.endswith("DAILY")
    config = {
        **quick_start(unique),
        "topics": topic,
        "input.data.format": input_format,
        "output.data.format": output_format,
        "flush.size": "10",
        **({"time.interval": "DAILY"} if daily else {}),
    }
    config = {k: v for k, v in config.items() if not (k == "compression.codec" and codec.startswith("no codec"))}
    if not codec.startswith("no codec"):
        config["compression.codec"] = codec
    records, stamps = events(20)
    produce_at(stack.bootstrap_servers, topic, [json.dumps(r).encode() for r in records], stamps)
    run(write(tmp_path, local(config, stack)), capsys)
    path = "year=2024/month=03/day=12" if daily else HOUR_PATH
    keys = list_keys(s3, BUCKET, f"topics/{topic}/")
    assert keys == [f"topics/{topic}/{path}/{topic}+0+{start:010d}{extension}" for start in (0, 10)]
    landed = [record for key in keys for record in read_back(body(s3, key), output_format, codec)]
    # a STRING value lands in JSON as a JSON string (the connector's JsonFormat); BYTES are written as they came
    assert landed == ([json.dumps(r) for r in records] if input_format == "STRING" else records)


def read_back(data: bytes, output_format: str, codec: str) -> list:
    """An object's records with the format's own reader, after checking its codec."""
    if output_format == "AVRO":
        reader = fastavro.reader(io.BytesIO(data))
        assert reader.codec == codec.split(" - ")[1]
        return list(reader)
    if output_format == "PARQUET":
        parquet = pq.ParquetFile(io.BytesIO(data))
        assert parquet.metadata.row_group(0).column(0).compression == codec.split(" - ")[1].upper()
        return parquet.read().to_pylist()
    text = gzip.decompress(data) if codec.endswith("gzip") else data
    return [json.loads(line) for line in text.splitlines()]  # JSON lines, or BYTES' values with "\n" after each


def test_avro_input_from_a_registry_whose_password_is_a_secret(
    stack, spark, s3, dynamodb, secrets, unique, tmp_path, capsys
):
    """input.data.format AVRO with the registry's basic-auth password in Secrets Manager: the Spark tasks that
    decode the records reach the registry only if the run resolved the reference before handing them the config."""
    secrets.create_secret(Name=f"cloud-{unique}/registry", SecretString=json.dumps({"password": "reg-pw"}))
    schema = {
        "type": "record",
        "name": "Order",
        "fields": [{"name": "id", "type": "int"}, {"name": "item", "type": "string"}],
    }
    topic = f"cloudavro-{unique}"
    with SchemaRegistryServer(user_info="sink:reg-pw") as registry:
        serializer = AvroSerializer(
            SchemaRegistryClient({"url": registry.url, "basic.auth.user.info": "sink:reg-pw"}), json.dumps(schema)
        )
        context = SerializationContext(topic, MessageField.VALUE)
        orders = [{"id": i, "item": f"item-{i}"} for i in range(12)]
        produce_at(
            stack.bootstrap_servers,
            topic,
            [serializer(o, context) for o in orders],
            [NINE_AM_UTC + i for i in range(12)],
        )
        config = {
            **quick_start(unique),
            "topics": topic,
            "input.data.format": "AVRO",
            "output.data.format": "PARQUET",
            "compression.codec": "PARQUET - gzip",
            "flush.size": "6",
            "value.converter.schema.registry.url": registry.url,
            "value.converter.basic.auth.credentials.source": "USER_INFO",
            "value.converter.basic.auth.user.info": f"sink:${{secrets:cloud-{unique}/registry:password}}",
        }
        run(write(tmp_path, local(config, stack)), capsys)
    keys = list_keys(s3, BUCKET, f"topics/{topic}/")
    assert keys == [f"topics/{topic}/{HOUR_PATH}/{topic}+0+{s:010d}.gz.parquet" for s in (0, 6)]
    tables = [pq.read_table(io.BytesIO(body(s3, k))) for k in keys]
    assert [str(t.schema.field("id").type) for t in tables] == ["int32", "int32"]
    assert [row for t in tables for row in t.to_pylist()] == orders


def test_avro_input_as_exported_takes_its_registry_from_the_environment(
    stack, spark, s3, dynamodb, secrets, unique, tmp_path, capsys, monkeypatch
):
    """input.data.format AVRO in a file that names no registry (Cloud finds its own): refused naming
    input.data.format; with SINK_SCHEMA_REGISTRY_URL and SINK_SCHEMA_REGISTRY_USER_INFO it validates, saying where
    the registry came from, and runs with the registry's basic auth."""
    schema = {
        "type": "record",
        "name": "Order",
        "fields": [{"name": "id", "type": "int"}, {"name": "item", "type": "string"}],
    }
    topic = f"cloudenv-{unique}"
    with SchemaRegistryServer(user_info="sink:reg-pw") as registry:
        serializer = AvroSerializer(
            SchemaRegistryClient({"url": registry.url, "basic.auth.user.info": "sink:reg-pw"}), json.dumps(schema)
        )
        context = SerializationContext(topic, MessageField.VALUE)
        orders = [{"id": i, "item": f"item-{i}"} for i in range(6)]
        produce_at(
            stack.bootstrap_servers,
            topic,
            [serializer(o, context) for o in orders],
            [NINE_AM_UTC + i for i in range(6)],
        )
        path = write(
            tmp_path,
            local(
                {
                    **quick_start(unique),
                    "topics": topic,
                    "input.data.format": "AVRO",
                    "output.data.format": "PARQUET",
                    "compression.codec": "PARQUET - gzip",
                    "flush.size": "3",
                },
                stack,
            ),
        )
        # given no registry anywhere: validate refuses naming input.data.format
        monkeypatch.delenv("SINK_SCHEMA_REGISTRY_URL", raising=False)
        assert cli.main(["validate", "--config", path]) == 2
        assert "'input.data.format': AVRO is read through a Confluent Schema Registry" in capsys.readouterr().err
        # when the environment names the registry and its credentials
        monkeypatch.setenv("SINK_SCHEMA_REGISTRY_URL", registry.url)
        monkeypatch.setenv("SINK_SCHEMA_REGISTRY_USER_INFO", "sink:reg-pw")
        assert cli.main(["validate", "--config", path]) == 0
        shown = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()}
        assert shown["value.converter.schema.registry.url"].split()[1:] == [
            registry.url,
            "(from",
            "SINK_SCHEMA_REGISTRY_URL)",
        ]
        run(path, capsys)
    # then the run read the records through it
    keys = list_keys(s3, BUCKET, f"topics/{topic}/")
    assert keys == [f"topics/{topic}/{HOUR_PATH}/{topic}+0+{s:010d}.gz.parquet" for s in (0, 3)]
    assert [row for k in keys for row in pq.read_table(io.BytesIO(body(s3, k))).to_pylist()] == orders


@pytest.mark.parametrize(
    "input_format, topic_class, output_format, codec, extension",
    [
        ("PROTOBUF", ProtobufTopic, "PARQUET", "PARQUET - snappy", ".snappy.parquet"),
        ("JSON_SR", JsonSchemaTopic, "AVRO", "AVRO - snappy", ".avro"),
    ],
)
def test_protobuf_and_json_schema_inputs(
    stack,
    spark,
    s3,
    dynamodb,
    secrets,
    unique,
    tmp_path,
    capsys,
    input_format,
    topic_class,
    output_format,
    codec,
    extension,
):
    """input.data.format PROTOBUF and JSON_SR: Confluent's ProtobufConverter and JsonSchemaConverter, records
    serialized by confluent-kafka against the registry, typed columns in the output."""
    topic = f"cloudsr-{unique}"
    with SchemaRegistryServer() as registry:
        values = topic_class(registry.url, topic)
        produce_at(
            stack.bootstrap_servers, topic, [values.value(i) for i in range(8)], [NINE_AM_UTC + i for i in range(8)]
        )
        config = {
            **quick_start(unique),
            "topics": topic,
            "input.data.format": input_format,
            "output.data.format": output_format,
            "compression.codec": codec,
            "flush.size": "4",
            "value.converter.schema.registry.url": registry.url,
        }
        run(write(tmp_path, local(config, stack)), capsys)
    keys = list_keys(s3, BUCKET, f"topics/{topic}/")
    assert keys == [f"topics/{topic}/{HOUR_PATH}/{topic}+0+{s:010d}{extension}" for s in (0, 4)]
    rows = [row for key in keys for row in read_back(body(s3, key), output_format, codec)]
    assert [row["id"] for row in rows] == list(range(8))
    assert all(isinstance(row["lines"], list) and row["lines"] for row in rows)  # repeated messages, as lists
