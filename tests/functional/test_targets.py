"""The target seam (sink_engine/target): a third target, registered in `choice.TARGETS` alone, is what `sink-engine
init`, `run`, `verify` and `doctor` use for the connectors it selects, with no other edit; every registered target
crosses to Spark tasks as its class and config and implements the interfaces of the capabilities it declares; and
no module but `choice.py` asks whether a connector writes Iceberg tables."""

from __future__ import annotations

import json
import pickle
import re
import threading
from pathlib import Path

import boto3
import pytest

from sink_engine.cli import main
from sink_engine.config import parse_config
from sink_engine.doctor.checks import Check
from sink_engine.target import choice as target_choice
from sink_engine.target.contract import ContinuousTarget, VerifiedTarget
from sink_engine.target.s3_objects.target import S3ObjectsTarget
from tests.builders import connector_keys
from tests.conftest import BUCKET
from tests.functional.test_exactly_once import _raw
from tests.s3_reader import list_keys

MANIFESTS = "_manifests"
BASE = connector_keys({"name": None, "format.class": None})  # the name is the document's


class ManifestedObjects(S3ObjectsTarget):
    """S3 objects, and per run a manifest object listing the objects its commit made visible (as a table format
    over plain objects would): its tasks hand the keys they wrote to the driver's commit as their `target_result`;
    verify also checks that every object is in a manifest; the doctor also probes the manifests' prefix."""

    def init(self) -> list[str]:
        return [f"manifests: s3://{BUCKET}/{self._prefix}"]

    def write_range(self, settings, planned, client=None, progress_dir=None, reader=None, stop=None):
        result = super().write_range(settings, planned, client, progress_dir, reader, stop)
        result.target_result = tuple(f.key for f in result.files)
        return result

    def commit(self, results, leases, token, lease_ms: int) -> None:
        listed = sorted(key for r in results for key in r.target_result or ())
        boto3.client("s3").put_object(
            Bucket=BUCKET, Key=f"{self._prefix}{token.epoch:010d}.json", Body=json.dumps(listed).encode()
        )

    def verify(self, store, kafka, topic, partition, out, verbose=False) -> int:
        code = super().verify(store, kafka, topic, partition, out, verbose)
        s3 = boto3.client("s3")
        listed = {
            key
            for manifest in list_keys(s3, BUCKET, self._prefix)
            if manifest.endswith(".json")
            for key in json.loads(s3.get_object(Bucket=BUCKET, Key=manifest)["Body"].read())
        }
        stored = {
            key
            for name in self.config["topics"]
            for key in list_keys(s3, BUCKET, f"{self.config['topics.dir']}/{name}/")
            if "/_doctor/" not in key
        }
        print(f"manifests: {len(listed)} objects listed, {len(stored - listed)} objects in none", file=out)
        return code or int(stored != listed)

    def doctor_checks(self) -> tuple[Check, ...]:
        return (*super().doctor_checks(), Check("manifest write", self._probe, service="s3"))

    def _probe(self, _context) -> str:
        boto3.client("s3").put_object(Bucket=BUCKET, Key=f"{self._prefix}_doctor.probe", Body=b"{}")
        return f"wrote s3://{BUCKET}/{self._prefix}_doctor.probe"

    @property
    def _prefix(self) -> str:
        return f"{MANIFESTS}/{self.config.name}/"


@pytest.fixture
def manifested(monkeypatch):
    """ManifestedObjects registered, in the one place targets are, for connectors named `manifested-*`."""
    choice = target_choice.Choice(
        ManifestedObjects, lambda config: config.name.startswith("manifested-"), "a connector named manifested-*"
    )
    monkeypatch.setattr(target_choice, "TARGETS", (choice, *target_choice.TARGETS))


def test_a_target_registered_in_one_place_is_used_by_init_run_verify_and_doctor(
    new_topic, spark, s3, connector, manifested, unique, tmp_path, capsys
):
    # given a connector the new target selects: two partitions of 22 records, files of 10
    config = connector(name=f"manifested-{unique}", **{"flush.size": 10})
    topic = new_topic(config, 2, events=44)
    path = tmp_path / "connector.json"
    path.write_text(json.dumps({"name": config.name, "config": _raw(config)}))
    # when it is initialized, then the target said what it has
    assert main(["init", "--config", str(path)]) == 0
    assert f"manifests: s3://{BUCKET}/{MANIFESTS}/{config.name}/" in capsys.readouterr().out.splitlines()
    # when it runs, then its tasks wrote the objects and its commit listed exactly those, from the tasks' results
    assert main(["run", "--config", str(path)]) == 0
    written = list_keys(s3, BUCKET, f"topics/{topic}/")
    assert written == sorted(
        f"topics/{topic}/partition={p}/{topic}+{p}+{start:010d}.json" for p in (0, 1) for start in (0, 10)
    )
    manifests = list_keys(s3, BUCKET, f"{MANIFESTS}/{config.name}/")
    assert len(manifests) == 1
    assert json.loads(s3.get_object(Bucket=BUCKET, Key=manifests[0])["Body"].read()) == written
    capsys.readouterr()
    # when it is verified, then the objects' report and the manifests' check both passed
    assert main(["verify", "--config", str(path)]) == 0
    out = capsys.readouterr().out
    assert "4 data objects" in out and "manifests: 4 objects listed, 0 objects in none" in out, out
    # when an object is in no manifest, then verify fails naming it so
    s3.copy_object(
        Bucket=BUCKET,
        Key=f"topics/{topic}/partition=0/{topic}+0+0000000020.json",
        CopySource={"Bucket": BUCKET, "Key": written[0]},
    )
    assert main(["verify", "--config", str(path)]) == 1
    assert "manifests: 4 objects listed, 1 objects in none" in capsys.readouterr().out
    # when the doctor checks it, then the target's checks are among its rows, after the S3 objects' own
    assert main(["doctor", "--config", str(path)]) == 0
    rows = [line.split("  ")[0] for line in capsys.readouterr().out.splitlines()[:-1]]
    assert rows[rows.index("s3 write") : rows.index("manifest write") + 1] == [
        "s3 write",
        "s3 incomplete uploads",
        "manifest write",
    ]


def test_a_connector_the_new_target_does_not_select_keeps_its_target(manifested):
    config = parse_config({"name": "orders", "config": {**BASE, "format.class": "JsonFormat"}})
    assert type(target_choice.target_for(config)) is S3ObjectsTarget


# a config each registered target selects: a target added to the registry adds its own here
SELECTING = {
    "IcebergTablesTarget": {
        "format.class": "IcebergFormat",
        "iceberg.tables": "lake.t",
        "iceberg.catalog.type": "sql",
        "iceberg.catalog.uri": "sqlite://",
        "iceberg.catalog.warehouse": "s3://lake/w",
    },
    "S3ObjectsTarget": {"format.class": "JsonFormat"},
}


@pytest.mark.parametrize("choice", target_choice.TARGETS, ids=lambda choice: choice.target.__name__)
def test_every_target_crosses_to_the_tasks_as_its_class_and_config(choice):
    # given a target chosen for a config it selects, holding what cannot be pickled (a client, a catalog)
    config = parse_config({"name": "orders", "config": {**BASE, **SELECTING[choice.target.__name__]}})
    target = target_choice.target_for(config)
    assert type(target) is choice.target
    target.validate()
    target.client = threading.Lock()
    # when it is pickled for a Spark task, then what arrives is a new target of its class built from the config
    arrived = pickle.loads(pickle.dumps(target))
    assert type(arrived) is choice.target and vars(arrived) == {"config": config}


@pytest.mark.parametrize("choice", target_choice.TARGETS, ids=lambda choice: choice.target.__name__)
def test_every_target_declares_the_capabilities_its_interfaces_implement(choice):
    # given a target class and what it declares
    declared = choice.target.CAPABILITIES
    # then it implements the opt-in interface of each capability it declares, and of no other
    assert issubclass(choice.target, ContinuousTarget) == declared.continuous.supported
    assert issubclass(choice.target, VerifiedTarget) == declared.verify.supported
    # and a config it selects takes capabilities away, never adds one
    config = parse_config({"name": "orders", "config": {**BASE, **SELECTING[choice.target.__name__]}})
    capabilities = target_choice.target_for(config).capabilities
    assert declared.continuous.supported or not capabilities.continuous.supported
    assert declared.verify.supported or not capabilities.verify.supported


ROOT = Path(__file__).parents[2] / "sink_engine"


def test_only_the_registry_and_the_iceberg_package_ask_for_iceberg_and_tasks_import_no_target():
    asks = re.compile(r"""(format\.class"\]|format_class)\s*[!=]=\s*"iceberg"|is_iceberg""")  # by key or settings
    askers = sorted(str(path.relative_to(ROOT)) for path in ROOT.rglob("*.py") if asks.search(path.read_text()))
    assert askers == ["target/choice.py"]  # the rest consult the target's capabilities
    imports = re.compile(r"^\s*(from|import) sink_engine\.(target|iceberg)\b", re.MULTILINE)
    assert [path.name for path in (ROOT / "task").glob("*.py") if imports.search(path.read_text())] == []
