"""The engine under enforced IAM: a run and `status` as the connector's job role, with the role's documents
taken from the synthesized template (see conftest.py); and a permission removed from the role fails a run."""

from __future__ import annotations

import pytest

from devtools.producer import produce
from tests.iam.acting import acting_as
from tests.iam.deployment import TEST_SETTINGS
from tests.iam.engine import PARTITIONS, run_cli
from tests.iam.policies import without_action


def test_a_run_as_the_job_role_writes_tags_commits_and_reports(engine_run):
    # given records on the connector's topics, two of them bad, when the job role runs the connector (conftest)
    assert engine_run.run.code == 0, engine_run.run.err
    landed, workload = engine_run.landed, engine_run.workload
    # then every partition closed a file (the scheduled rotation is due on a first run), tagged as configured
    assert sorted(k.split("/")[1] + "-" + k.split("+")[1] for k in landed.objects) == [
        "orders-0",
        "orders-1",
        "payments-0",
    ]
    assert all({"startOffset", "endOffset", "recordCount"} <= set(tags) for tags in landed.objects.values())
    # and the bad records went to the connector's dead-letter prefix
    assert landed.dead_letters
    # and the offsets were committed past every record, and the recorded plans deleted (BatchWriteItem)
    committed = {sk: int(item["next_offset"]["N"]) for sk, item in landed.items.items() if sk.startswith("OFFSET#")}
    assert committed == {
        "OFFSET#orders#0": workload.good["orders"] // 2 + workload.bad,
        "OFFSET#orders#1": workload.good["orders"] // 2,
        "OFFSET#payments#0": workload.good["payments"],
    }
    assert [sk for sk in landed.items if sk.startswith("PLAN#")] == []
    # and `status` reports every partition with no lag
    assert engine_run.status.code == 0, engine_run.status.err
    rows = [line.split() for line in engine_run.status.out.splitlines()[1:]]
    assert sorted((r[0], r[3]) for r in rows) == [("orders-0", "0"), ("orders-1", "0"), ("payments-0", "0")]


# what the engine calls and moto authorizes, each denied at a different step of a run
REMOVED = {
    "s3:GetObject": "GetObject",  # the published config, read before anything else
    "dynamodb:DescribeTable": "DescribeTable",  # the offsets table is checked first
    "s3:PutObject": "PutObject",  # a closed file, uploaded by a Spark task
    "dynamodb:BatchWriteItem": "BatchWriteItem",  # the recorded plans, deleted after the commit
}


@pytest.mark.parametrize("action", sorted(REMOVED))
def test_a_permission_removed_from_the_job_role_fails_the_run_naming_it(
    action, engine_run, world, deployed, role_ids, iam_stack, spark
):
    # given the job role's documents without one action the engine needs
    documents = without_action(deployed.documents(role_ids["job"]), action)
    principal = world.role(f"job-without-{action.replace(':', '-')}", documents)
    # and a full file's worth of new records, so that a task uploads
    produce(
        iam_stack.bootstrap_servers,
        "payments",
        [b'{"n": 0}'] * int(TEST_SETTINGS["flush.size"]),
        PARTITIONS["payments"],
    )
    # when the connector runs as that role
    with acting_as(principal, spark=spark):
        result = run_cli("run", "--config", engine_run.config_uri)
    # then the run fails, saying which call was denied
    assert result.code != 0, result.out
    assert "AccessDenied" in result.err and REMOVED[action] in result.err, result.err
