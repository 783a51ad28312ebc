"""Continuous connectors (`continuous.connectors.<name>`): validated when the environment is read and its connectors
loaded, naming the setting or the connector file's key at fault; carried into the connector index the trigger reads
(the STREAMING run's retry policy, its cancellation grace period, the published config's hash); a freshness alarm
per continuous connector and the stream metrics on the dashboard; the trigger may cancel and list job runs; the
application's concurrency and capacity count each continuous job as always running; the job timeout does not apply.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import json

import pytest

from infra.capacity import check_concurrency, environment_runs
from infra.connectors import GRACE_MARGIN_S, connector_index, load_connectors
from infra.constructs.monitoring import FRESHNESS_MINUTES
from infra.errors import ConnectorSpecError, SettingsError
from infra.job_timeout import check_job_timeout
from infra.settings import ENVIRONMENTS_DIR, parse_settings
from lambdas.trigger.connectors import connectors_from_entries
from lambdas.trigger.sizing import RunShape, continuous_run

DEV = json.loads((ENVIRONMENTS_DIR / "dev.json").read_text())
ORDERS = "orders-s3-sink"  # dev's connector: rotate.schedule.interval.ms 600000, the engine's default lease (120 s)


def _doc(continuous: dict, **emr) -> dict:
    doc = copy.deepcopy(DEV)
    doc["continuous"] = continuous
    doc["emr"].update(emr)
    return doc


def _settings(continuous: dict, **emr):
    return parse_settings("dev", _doc(continuous, **emr), "dev.json")


OPTED_IN = {"connectors": {ORDERS: {"freshness_alarm_seconds": 900, "max_failed_attempts_per_hour": 3}}}


@pytest.mark.parametrize(
    "continuous, setting",
    [
        ({"connectors": {ORDERS: {}}}, f"continuous.connectors.{ORDERS}.freshness_alarm_seconds"),
        (
            {"connectors": {ORDERS: {"freshness_alarm_seconds": "60"}}},
            f"continuous.connectors.{ORDERS}.freshness_alarm_seconds",
        ),
        (
            {"connectors": {ORDERS: {"freshness_alarm_seconds": 5}}},
            f"continuous.connectors.{ORDERS}.freshness_alarm_seconds",
        ),
        (
            {"connectors": {ORDERS: {"freshness_alarm_seconds": 60, "max_failed_attempts_per_hour": 0}}},
            f"continuous.connectors.{ORDERS}.max_failed_attempts_per_hour",
        ),
        (
            {"connectors": {ORDERS: {"freshness_alarm_seconds": 60, "max_failed_attempts_per_hour": 11}}},
            f"continuous.connectors.{ORDERS}.max_failed_attempts_per_hour",
        ),
        (
            {"connectors": {ORDERS: {"freshness_alarm_seconds": 60, "freshness": 1}}},
            f"continuous.connectors.{ORDERS}.freshness",
        ),
        ({"connectors": {ORDERS: 60}}, f"continuous.connectors.{ORDERS}"),
        ({"connectors": {"bad name!": {"freshness_alarm_seconds": 60}}}, "continuous.connectors.bad name!"),
        ({"jobs": {}}, "continuous.jobs"),
    ],
)
def test_a_malformed_continuous_setting_is_named(continuous, setting):
    with pytest.raises(SettingsError) as failed:
        _settings(continuous)
    assert failed.value.setting == setting


@pytest.mark.parametrize("release", ["emr-7.1.0", "emr-7.8.0"])  # (emr-7.0.0 has no Python the engine runs on)
def test_a_release_before_7_9_cannot_run_continuous_connectors(release):
    # STREAMING runs from 7.1.0 (StartJobRun `mode`), their cancellation with a grace period from 7.9.0
    with pytest.raises(SettingsError) as failed:
        _settings(OPTED_IN, release_label=release, python="3.11")
    assert failed.value.setting == "emr.release_label" and "7.9.0" in str(failed.value)
    _settings(OPTED_IN, release_label="emr-7.9.0")


def test_without_the_section_every_connector_runs_bounded():
    settings = parse_settings("dev", DEV, "dev.json")
    (spec,) = load_connectors(settings)
    assert spec.continuous is None
    (entry,) = connector_index((spec,), settings.bucket_name, {spec.name: "arn:aws:iam::1:role/job"})
    assert "continuous" not in entry


def test_an_opted_in_connector_carries_its_retry_policy_grace_and_config_hash_into_its_index_entry():
    settings = _settings(OPTED_IN)
    (spec,) = load_connectors(settings)
    # the grace period covers the lease (the engine's default 120 s) and the job's stop: it commits what it closed,
    # cancels its Spark job, releases the lease
    assert spec.continuous.shutdown_grace_seconds == 120 + GRACE_MARGIN_S
    (entry,) = connector_index((spec,), settings.bucket_name, {spec.name: "arn:aws:iam::1:role/job"})
    assert entry["continuous"] == {
        "max_failed_attempts_per_hour": 3,
        "shutdown_grace_seconds": 120 + GRACE_MARGIN_S,
        "config_sha256": hashlib.sha256(json.dumps(spec.document, sort_keys=True).encode()).hexdigest(),
    }
    # which the trigger reads back
    (connector,) = connectors_from_entries([entry], None)
    assert connector.continuous.max_failed_attempts_per_hour == 3


def _with_config(spec, **keys):
    return dataclasses.replace(spec, document={**spec.document, "config": {**spec.document["config"], **keys}})


def test_a_continuous_setting_for_a_connector_not_deployed_fails_synthesis():
    settings = _settings({"connectors": {"gone-sink": {"freshness_alarm_seconds": 900}}})
    with pytest.raises(SettingsError, match="setting 'continuous.connectors.gone-sink'.*names no connector"):
        load_connectors(settings)


def test_a_freshness_alarm_not_above_the_rotation_schedule_is_refused():
    # a record waits up to one schedule (dev: 600 s) for its file to close: the alarm would always fire
    settings = _settings({"connectors": {ORDERS: {"freshness_alarm_seconds": 600}}})
    with pytest.raises(SettingsError) as failed:
        load_connectors(settings)
    assert failed.value.setting == f"continuous.connectors.{ORDERS}.freshness_alarm_seconds"


@pytest.mark.parametrize(
    "keys, key",
    [
        ({"rotate.schedule.interval.ms": "-1"}, "rotate.schedule.interval.ms"),  # no bound on freshness
        ({"sink.lease.duration.ms": "1800000"}, "sink.lease.duration.ms"),  # grace past CancelJobRun's 1800 s
        (
            {
                "partitioner.class": "io.confluent.connect.storage.partitioner.TimeBasedPartitioner",
                "path.format": "'h'=HH",
                "partition.duration.ms": "3600000",
                "locale": "en",
                "timezone": "UTC",
                "timestamp.extractor": "Wallclock",
            },
            "timestamp.extractor",
        ),  # the engine's continuous runs refuse it
    ],
)
def test_a_connector_that_cannot_run_continuously_is_refused_naming_its_key(keys, key, tmp_path):
    settings = _settings(OPTED_IN)
    source = json.loads((settings.connectors_dir / "orders.json").read_text())
    source["config"].update(keys)
    folder = tmp_path / "dev"
    folder.mkdir()
    (folder / "orders.json").write_text(json.dumps(source))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(type(settings), "connectors_dir", property(lambda self: folder))
        with pytest.raises(ConnectorSpecError) as failed:
            load_connectors(settings)
    assert (failed.value.source, failed.value.key) == ("dev/orders.json", key)


def test_each_continuous_job_counts_as_always_running_in_the_applications_concurrency_and_capacity():
    settings = _settings(OPTED_IN)
    (spec,) = load_connectors(settings)
    runs = environment_runs(settings, (spec,))
    # the continuous job first, on its plan: one executor vCPU per task of tasks.max (4), within 1 executor per run
    assert runs[0] == (f"continuous job of {ORDERS}", continuous_run(RunShape(4, "json", 1_000_000), 1))
    assert [name for name, _ in runs[1:]] == [f"restore of {ORDERS}", "doctor"]
    # emr.concurrent_runs must leave a slot beside it: with 1, the restore and the doctor would never run
    with pytest.raises(SettingsError) as failed:
        check_concurrency(_settings(OPTED_IN, concurrent_runs=1), (spec,))
    assert failed.value.setting == "emr.concurrent_runs"
    # with 2, the capacity holds the continuous job and the largest of the others
    admitted = check_concurrency(_settings(OPTED_IN, concurrent_runs=2), (spec,))
    assert admitted.runs == 2 and admitted.footprint.cpu == 1 + 4 + 1 + 1


def test_the_job_timeout_does_not_apply_to_a_continuous_connector():
    # its runs are STREAMING with executionTimeoutMinutes 0 (never timed out); a bounded one with this run timeout
    # would be refused
    settings = _settings(OPTED_IN, job_timeout_minutes=30)
    (spec,) = load_connectors(settings)
    check_job_timeout(settings, (spec,))
    with pytest.raises(ConnectorSpecError):
        check_job_timeout(settings, (dataclasses.replace(spec, continuous=None),))


# --- the synthesized stacks -----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def opted_in(tmp_path_factory):
    """dev's stacks with its connector continuous."""
    from aws_cdk.assertions import Template

    from infra.application import build, new_app
    from tests.infra.conftest import ensure_artifacts

    ensure_artifacts()
    outdir = tmp_path_factory.mktemp("cdk-continuous")
    app = new_app(str(outdir))
    deployment = build(app, "dev", settings=_settings(OPTED_IN))
    app.synth()
    return Template.from_json(json.loads((outdir / f"{deployment.service.stack_name}.template.json").read_text()))


def _widgets(template) -> list[dict]:
    (dashboard,) = template.find_resources("AWS::CloudWatch::Dashboard").values()
    separator, parts = dashboard["Properties"]["DashboardBody"]["Fn::Join"]
    return json.loads(separator.join(p if isinstance(p, str) else "TOKEN" for p in parts))["widgets"]


def _searches(template) -> list[str]:
    return [
        m[0]["expression"]
        for w in _widgets(template)
        for m in w["properties"].get("metrics", [])
        if isinstance(m[0], dict) and "expression" in m[0]
    ]


def test_a_continuous_connector_has_a_freshness_alarm_on_its_jobs_metric(opted_in):
    alarms = [
        a["Properties"]
        for a in opted_in.find_resources("AWS::CloudWatch::Alarm").values()
        if a["Properties"]["MetricName"] == "StreamFreshnessSeconds"
    ]
    (alarm,) = alarms
    # the job's per-minute metric, a plain one (an alarm cannot watch a SEARCH), at its largest
    assert (alarm["Namespace"], alarm["Dimensions"]) == ("SinkEngine", [{"Name": "Connector", "Value": ORDERS}])
    assert (alarm["Statistic"], alarm["Period"], alarm["Threshold"]) == ("Maximum", 60, 900)
    assert alarm["EvaluationPeriods"] == FRESHNESS_MINUTES
    assert alarm["ComparisonOperator"] == "GreaterThanOrEqualToThreshold"
    # a job that publishes nothing is not running: that is freshness lost too
    assert alarm["TreatMissingData"] == "breaching"
    assert alarm["AlarmActions"]


def test_the_dashboard_graphs_the_stream_metrics_of_every_continuous_connector(opted_in, dev):
    for name, statistic in (
        ("StreamFreshnessSeconds", "Maximum"),
        ("StreamRecordsWritten", "Sum"),
        ("StreamLag", "Sum"),
    ):
        assert f"SEARCH('{{SinkEngine,Connector}} MetricName=\"{name}\"', '{statistic}', 60)" in _searches(opted_in)
    # an environment without continuous connectors has neither the widgets nor the alarm
    assert not [s for s in _searches(dev.template("service")) if "Stream" in s]
    assert not [
        a
        for a in dev.template("service").find_resources("AWS::CloudWatch::Alarm").values()
        if a["Properties"]["MetricName"] == "StreamFreshnessSeconds"
    ]


def _trigger_statements(template) -> list[dict]:
    statements = []
    for policy in template.find_resources("AWS::IAM::Policy").values():
        roles = json.dumps(policy["Properties"]["Roles"])
        if "Trigger" in roles:
            statements += policy["Properties"]["PolicyDocument"]["Statement"]
    return statements


@pytest.mark.parametrize("which", ["opted_in", "dev"])
def test_the_trigger_may_cancel_runs_and_list_the_applications_runs_whatever_the_connectors(which, opted_in, dev):
    # granted without continuous connectors too: a deploy that removes the last one must leave the trigger able to
    # stop its job
    template = opted_in if which == "opted_in" else dev.template("service")
    found = {}
    for statement in _trigger_statements(template):
        actions = statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
        for action in actions:
            found.setdefault(action, []).append(json.dumps(statement["Resource"]))
    (cancel,) = found["emr-serverless:CancelJobRun"]
    (listing,) = found["emr-serverless:ListJobRuns"]
    assert "/jobruns/*" in cancel and "/jobruns" not in listing


def _streaming_graces(template) -> list[str]:
    return [
        f["Properties"].get("Environment", {}).get("Variables", {}).get("STREAMING_GRACE_SECONDS")
        for f in template.find_resources("AWS::Lambda::Function").values()
        if "STREAMING_GRACE_SECONDS" in json.dumps(f["Properties"].get("Environment", {}))
    ]


def test_the_application_stop_cancels_streaming_runs_with_their_grace_period(opted_in, dev):
    # a redeploy that changes the application stops it: a continuous job then commits and releases its lease
    assert _streaming_graces(opted_in) == [str(120 + GRACE_MARGIN_S)]
    assert _streaming_graces(dev.template("service")) == []
