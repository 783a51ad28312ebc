"""`sink-engine run` of several connectors in one Spark application: each connector's objects and offsets as if it
ran alone, one connector's failure leaves the others' commits, and two overlapping runs sharing a connector land
each record once."""

from __future__ import annotations

import json
import threading

from sink_engine import cli
from sink_engine.driver.session import now_ms
from sink_engine.offsets import OffsetStore
from tests.conftest import BUCKET, TABLE
from tests.s3_reader import landed_records, object_bodies


def _write(folder, name: str, topic: str, stack, **overrides) -> str:
    """A connector file in `folder`, reading `topic`; overrides are Confluent keys."""
    folder.mkdir(exist_ok=True)
    config = {
        "connector.class": "io.confluent.connect.s3.S3SinkConnector",
        "topics": topic,
        "bootstrap.servers": stack.bootstrap_servers,
        "s3.bucket.name": BUCKET,
        "s3.region": "us-east-1",
        "flush.size": 100,
        "format.class": "io.confluent.connect.s3.format.json.JsonFormat",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter.schemas.enable": "false",
        "offset.storage.dynamodb.table": TABLE,
        "tasks.max": 2,
        **overrides,
    }
    path = folder / f"{name}.json"
    path.write_text(json.dumps({"name": name, "config": config}))
    return str(path)


def _offsets(dynamodb, name: str) -> dict:
    return {str(tp): c.next_offset for tp, c in OffsetStore(dynamodb, TABLE, now_ms).committed(name).items()}


def test_a_run_of_many_configs_writes_each_connector_as_if_alone_and_a_failure_stops_only_its_own(
    stack, spark, s3, dynamodb, new_topic, unique, tmp_path, capsys
):
    # given three topics: JSON events, the same for Parquet, and one whose 151st record is not JSON
    events, bad = new_topic(f"many-events-{unique}", 2, events=400), f"many-bad-{unique}"
    new_topic(bad, 1, values=[b'{"id": %d}' % i for i in range(150)] + [b"{not json"] + [b'{"id": 0}'] * 20)
    formats = {"json": {}, "parquet": {"format.class": "io.confluent.connect.s3.format.parquet.ParquetFormat"}}
    many, alone = tmp_path / "many", tmp_path / "alone"
    for kind, keys in formats.items():
        _write(many, f"many-{kind}-{unique}", events, stack, **{"topics.dir": f"many-{unique}", **keys})
        _write(alone, f"alone-{kind}-{unique}", events, stack, **{"topics.dir": f"alone-{unique}", **keys})
    _write(many, f"many-bad-{unique}", bad, stack, **{"topics.dir": f"many-{unique}"})
    # when the three run in one application (--config-dir), and each of the others alone
    code = cli.main(["run", "--config-dir", str(many)])
    said = capsys.readouterr()
    for kind in formats:
        assert cli.main(["run", "--config", str(alone / f"alone-{kind}-{unique}.json")]) == 0
    # then the run failed for the poisoned connector alone, naming each outcome
    assert code == 1, said.err
    assert said.out.splitlines()[-1] == f"connectors: 2 committed, 1 failed: many-bad-{unique} (exit 1)"
    assert f"[many-json-{unique}] run finished" in said.out and f"[many-parquet-{unique}] run finished" in said.out
    assert f"error: [many-bad-{unique}] record {bad}-0@150" in said.err
    # and each connector wrote the same keys and bytes, and committed the same offsets, as it did alone
    together, apart = (
        object_bodies(s3, BUCKET, f"many-{unique}/{events}/"),
        object_bodies(s3, BUCKET, f"alone-{unique}/"),
    )
    assert len(together) == 8 and together == {k.replace("alone-", "many-", 1): v for k, v in apart.items()}
    for kind in formats:
        assert (
            _offsets(dynamodb, f"many-{kind}-{unique}")
            == _offsets(dynamodb, f"alone-{kind}-{unique}")
            == {f"{events}-0": 200, f"{events}-1": 200}
        )
    # and the poisoned one committed what it closed before its bad record
    assert _offsets(dynamodb, f"many-bad-{unique}") == {f"{bad}-0": 100}


def test_two_overlapping_multi_connector_runs_land_each_record_once(stack, spark, s3, new_topic, unique, tmp_path):
    # given connectors a, b and c, each on a topic of its own; and two runs: a with b, b with c
    names = {c: f"overlap-{c}-{unique}" for c in "abc"}
    files = {c: _write(tmp_path, name, new_topic(name, 2, events=400), stack) for c, name in names.items()}
    runs = [
        ["run", "--config", files["a"], "--config", files["b"]],
        ["run", "--config", files["b"], "--config", files["c"]],
    ]
    # when both start at the same moment (one of them finds b leased: exit 3, its other connector commits)
    codes, start = [], threading.Barrier(2)

    def run(argv):
        start.wait()
        codes.append(cli.main(argv))

    threads = [threading.Thread(target=run, args=(argv,)) for argv in runs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert set(codes) <= {0, 3}, codes
    # and both run again, one after the other
    assert [cli.main(argv) for argv in runs] == [0, 0]
    # then every record of every connector landed once, and verify finds each committed offset once
    for c, name in names.items():
        ids = sorted(record["event_id"] for record in landed_records(s3, name))
        assert ids == list(range(400)), name
        assert cli.main(["verify", "--config", files[c]]) == 0


def test_a_config_that_fails_to_load_is_its_connectors_failure_and_the_others_run(
    stack, spark, s3, dynamodb, new_topic, unique, tmp_path, capsys
):
    # given two connector files in a folder: one good, one whose flush.size is not a number
    events = new_topic(f"unloaded-{unique}", 2, events=400)
    good = _write(tmp_path / "batch", f"loaded-{unique}", events, stack)
    broken = _write(tmp_path / "batch", f"unloaded-{unique}", events, stack, **{"flush.size": "many"})
    # when they run together (as the trigger's batched runs give them)
    code = cli.main(["run", "--config", good, "--config", broken])
    said = capsys.readouterr()
    # then the broken file is its connector's failure, named by the file, with a config error's exit code (2)
    assert code == 2, said.err
    assert f"error: {broken}: config key 'flush.size'" in said.err
    assert said.out.splitlines()[-1] == f"connectors: 1 committed, 1 failed: {broken} (exit 2)"
    # and the good connector ran and committed all it read
    assert _offsets(dynamodb, f"loaded-{unique}") == {f"{events}-0": 200, f"{events}-1": 200}
    # and when no file loads, nothing runs and the error says so
    other = _write(tmp_path / "batch", f"unloaded-too-{unique}", events, stack, **{"flush.size": "few"})
    assert cli.main(["run", "--config", broken, "--config", other]) == 2
    assert "none of the 2 connector configs loaded; nothing was run" in capsys.readouterr().err
