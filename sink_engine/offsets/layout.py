"""The items of the offsets table (`offset.storage.dynamodb.table`), declared once for every reader and writer.

This module imports nothing, so that the trigger Lambda ships it alone (`infra.packaging.FUNCTIONS`).

Key: `pk` (string) is the connector's name; `sk` (string) says what the item is. A connector's items are all
under its `pk`: the job's and the replay's roles may touch only their connectors' (`dynamodb:LeadingKeys`).
Numbers are DynamoDB numbers, times epoch milliseconds; `<topic>#<partition>` is a Kafka topic-partition.

- `LEASE`: the run lease (`sink_engine.offsets.lease`). `owner` (the run's unique id), `epoch` (the fencing
  token: only ever grows), `expires_at_ms`, `acquired_at_ms`, `renewed_at_ms` (its holder's last renewal: a
  holder silent for more than half the lease has stopped renewing it), `stop_requested_at_ms` (a continuous run's
  stop). Written by the job only: put if absent, or expired with the epoch read (`epoch = :old AND expires_at_ms <=
  :now`), with epoch + 1; renewal and release update `expires_at_ms` (renewal with `renewed_at_ms`) if `epoch` and
  `owner` are still the run's. Every other write of the job (PLAN#,
  OFFSET#) is a transaction that checks `epoch` against the run's. Read by the trigger (is a run under way).
- `OFFSET#<topic>#<partition>`: the committed offset (`sink_engine.offsets.store`). `topic`, `partition`,
  `next_offset` (the first record not yet landed), `epoch` (of the committing run), `committed_at_ms`,
  `last_file` (key of the last closed file, when the commit closed one), `dlq_scan_from` (the dead-letter
  topic's position to scan from next time, see `sink_engine.dlq.topic_destination`), a counter
  `dead_letters.<error class>` per class of dead-lettered records (added to), counters `skipped.<reason>` of
  offsets committed past without an object or a dead letter (added to; reasons in `sink_engine.model.TaskResult`),
  and `first_offset` (the first offset of the partition's first committed range, set by that commit only). Written
  by the job only, in a transaction with the lease check, conditional on `next_offset` being absent (first commit) or
  the run's planned start. Read by the job, `status`, the dead-letter topic destination and the trigger.
- `PLAN#<topic>#<partition>`: a run's wall-clock decisions, recorded before any upload (`sink_engine.driver
  .plans`). `topic`, `partition`, `start_offset`, `end_offset`, `cut_at_end` (a scheduled cut at the range's
  end), `expected_committed` (the committed offset the plan started from; absent: none), `wallclock_ms`
  (Wallclock's time; absent: not used), `epoch`. Put by the job in a transaction with the lease check,
  deleted by it once its commits are done; the next run repeats a plan whose partition's committed offset is
  still `expected_committed`.
- `STAGE#<topic>#<partition>`: what a continuous IcebergFormat run's task closed for the partition, staged for the
  driver to append (`sink_engine.target.iceberg_tables.staging`). `topic`, `partition`, `start` (the committed offset
  it starts
  from; -1: none yet), `next_offset`, `parts` (a list of maps, in offset order: `manifest` and `spec_id`, an Iceberg
  manifest describing data files, and of an upsert table `keys`, a Parquet file of the keys their changes replace),
  `files`, `records`, `dead_letters` and `skipped` (maps of counts, as the offsets commit adds them),
  `first_offset`, `dlq_scan_from` and `last_file` (as in `OFFSET#`, when set), `epoch`. Put by the job's tasks in a
  transaction with the lease check, conditional on no stage of the same `start` (`attribute_not_exists(sk) OR
  start <> :start`); read by its driver, which commits a stage whose `start` is the committed offset. A stage whose
  `start` is behind the committed offset is spent; the partition's next stage replaces it.
- `PROGRESS#<task>`: a continuous run's task's figures, for the driver to show (`sink_engine.continuous
  .run_progress`; `<task>` is the Spark partition index of the task). `epoch` (of the run's lease), `records_written`
  and `files` (since the task started), `lag`, `freshness_s`, `partitions`, `reported_at_ms`; `ended` (BOOL) once the
  task's share of the connector ended, with its `error` when it failed. Put by the job's tasks unconditionally when
  they start, every `sink.continuous.metrics.interval.ms` and when their share ends; read by its driver, which
  ignores the items of other epochs; replaced by the next continuous run's task of the same index, deleted by no one.
- `REPLAY#<topic>#<partition>#<offset, 20 digits>`: one replayed dead letter, keyed by its original record
  (`sink_engine.dlq.replay_progress`). `state` (`claimed`, then `replayed`), `error_class`, `target_topic`,
  `claimed_at_ms`, `replayed_at_ms`, `claim_id` (the claiming invocation's). Put by the DLQ replay (its Lambda
  and `sink-engine dlq replay`) if absent (`attribute_not_exists(sk)`), then set `replayed` unconditionally.
- `TRIGGER#<topic>#<partition>`: what the trigger Lambda has seen of a topic-partition (`lambdas.trigger
  .state`). `next_offset` (after the newest record seen), and when something was pending `first_offset`,
  `first_ts_ms`, `newest_ts_ms`. Put by the trigger only, unconditionally: only MSK batches write markers, and
  Lambda hands a partition's batches to one invocation at a time.
- `RUN`: the trigger's claim on the job run it asked for (`lambdas.trigger.state`). `attempt` (seeds the
  StartJobRun client token), `lease_epoch` (the LEASE epoch it saw), `claimed_at_ms`, `expires_at_ms`,
  `failures_before`, and later `job_run_id`, `outcome` (`succeeded`, `failed`, `idle`), `settled_at_ms`.
  Written by the trigger only: a new claim is put if absent (`attribute_not_exists(sk)`) or if `attempt` is
  still the one read; `job_run_id` is set if `attempt` is the claim's; the outcome once
  (`attempt = :attempt AND attribute_not_exists(outcome)`).
- `RESTORE#<request token>`: a restore the trigger started for the connector, followed until it is done
  (`lambdas.trigger.restore_runs`). `request` (the request's fields, JSON), `requested_at`, `attempt` (1, then one
  more per rerun), `job_run_id` (the attempt's), `checkpoint_at_ms` (the `RESTORED#` checkpoint's `recorded_at_ms`
  when the attempt started; 0: none), and once settled `outcome` (`succeeded`, `stopped`). Put by the trigger when it
  starts a restore; updated by its idle-flush tick if `attempt` is still the one read.

A restore (`sink_engine.restore`) keeps its items under `pk` = `restore#<target topic>` (RESTORE_PK_PREFIX), not
a connector's name, so that two restores into one topic meet whatever connectors they read:
- `LEASE`: the restore lease, the run lease's item and protocol (`sink_engine.offsets.lease`) under that `pk`.
  Held while a restore produces; a rerun or a second restore waits until it is released or lapses.
- `RESTORED#<source topic>`: the restore checkpoint, what is known to be in the target of the records restored
  from that topic (`sink_engine.restore.lease`). `scan_from` (a map of target partition, as a string, to the
  target offset from which a restore scans for origins: the target's end when the first restore began, then
  the offset after the last acknowledged record of the latest confirm), `present` (a map of source partition, as
  a string, to the original offsets confirmed in the target as text, `"0-9999,10001-10500"`: inclusive ranges by
  start, adjacent ones merged; absent in items of older restores: nothing), `epoch` (of the restore lease that
  wrote it), `recorded_at_ms` (`created_at_ms` in items of older restores). Put in a transaction with the
  restore lease's epoch check: if absent by the first restore of the topic into the target, then replaced at
  each confirm (every 10,000 records and at the end); kept under 350 KB (a checkpoint that would pass it is not
  written). Deleted by no one (delete it, with the target topic, to restore into a recreated topic of the same
  name whose partitions have grown past the recorded offsets).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # this module is deployed alone with the trigger Lambda (infra/packaging.py): no runtime import
    from sink_engine.aws_types import DynamoDBClient

PK, SK = "pk", "sk"  # the table's partition and sort key attributes, both strings
LEASE_SK = "LEASE"
RUN_SK = "RUN"
OFFSET_PREFIX = "OFFSET#"
PLAN_PREFIX = "PLAN#"
STAGE_PREFIX = "STAGE#"
PROGRESS_PREFIX = "PROGRESS#"
REPLAY_PREFIX = "REPLAY#"
TRIGGER_PREFIX = "TRIGGER#"
RESTORE_RUN_PREFIX = "RESTORE#"  # the trigger's restores of a connector
DEAD_LETTERS_PREFIX = "dead_letters."  # OFFSET# attributes counting dead letters by error class
SKIPPED_PREFIX = "skipped."
RESTORE_PK_PREFIX = "restore#"  # the pk of a restore's items: restore#<target topic>
RESTORED_PREFIX = "RESTORED#"  # OFFSET# attributes counting offsets settled in no object and no dead letter


def key(connector: str, sk: str) -> dict:
    """The DynamoDB key of the connector's item `sk`."""
    return {PK: {"S": connector}, SK: {"S": sk}}


def offset_sk(topic: str, partition: int) -> str:
    return f"{OFFSET_PREFIX}{topic}#{partition}"


def plan_sk(topic: str, partition: int) -> str:
    return f"{PLAN_PREFIX}{topic}#{partition}"


def stage_sk(topic: str, partition: int) -> str:
    return f"{STAGE_PREFIX}{topic}#{partition}"


def progress_sk(task: int) -> str:
    return f"{PROGRESS_PREFIX}{task}"


def trigger_sk(topic: str, partition: int) -> str:
    return f"{TRIGGER_PREFIX}{topic}#{partition}"


def replay_sk(topic: str, partition: int, offset: int) -> str:
    return f"{REPLAY_PREFIX}{topic}#{partition}#{offset:020d}"


def restore_run_sk(token: str) -> str:
    return f"{RESTORE_RUN_PREFIX}{token}"


def restore_pk(target_topic: str) -> str:
    return f"{RESTORE_PK_PREFIX}{target_topic}"


def restored_sk(source_topic: str) -> str:
    return f"{RESTORED_PREFIX}{source_topic}"


def topic_partition(sk: str) -> tuple[str, int]:
    """The topic and partition of an `OFFSET#`, `PLAN#` or `TRIGGER#` sort key."""
    _, topic, partition = sk.rsplit("#", 2)
    return topic, int(partition)


def items_under(dynamodb: DynamoDBClient, table: str, connector: str, prefix: str) -> Iterator[dict]:
    """Every item of the connector whose `sk` starts with `prefix`, read page by page (strongly consistent)."""
    kwargs = {
        "TableName": table,
        "ConsistentRead": True,
        "KeyConditionExpression": f"{PK} = :pk AND begins_with({SK}, :prefix)",
        "ExpressionAttributeValues": {":pk": {"S": connector}, ":prefix": {"S": prefix}},
    }
    while True:
        page = dynamodb.query(**kwargs)
        yield from page["Items"]
        if "LastEvaluatedKey" not in page:
            return
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
