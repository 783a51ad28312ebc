"""The trigger's view of the offsets table: committed offsets, its own pending markers, the lease, the run claim.

Items under `pk = <connector>`: the engine's `LEASE` and `OFFSET#<topic>#<partition>` (read only here), and the
trigger's `TRIGGER#<topic>#<partition>` markers and `RUN` claim.
"""
from __future__ import annotations

from dataclasses import dataclass

from botocore.exceptions import ClientError

from lambdas.trigger.pending import Seen

OFFSET_PREFIX = "OFFSET#"
MARKER_PREFIX = "TRIGGER#"
LEASE_SK = "LEASE"
RUN_SK = "RUN"


@dataclass(frozen=True)
class Lease:
    epoch: int
    expires_at_ms: int

    def held(self, now_ms: int) -> bool:
        return self.expires_at_ms > now_ms


@dataclass(frozen=True)
class RunClaim:
    """A run the trigger asked for: attempt number (the client token's seed), the lease epoch it saw, its expiry,
    and the EMR job run id once StartJobRun answered."""

    attempt: int
    lease_epoch: int
    expires_at_ms: int
    job_run_id: str | None


class TriggerState:
    def __init__(self, dynamodb, table: str):
        self._db, self._table = dynamodb, table

    def committed(self, connector: str) -> dict[tuple[str, int], int]:
        return {(i["topic"]["S"], int(i["partition"]["N"])): int(i["next_offset"]["N"])
                for i in self._query(connector, OFFSET_PREFIX)}

    def markers(self, connector: str) -> dict[tuple[str, int], Seen]:
        found = {}
        for item in self._query(connector, MARKER_PREFIX):
            _, topic, partition = item["sk"]["S"].rsplit("#", 2)
            oldest = item.get("oldest_offset")
            found[(topic, int(partition))] = Seen(
                int(item["next_offset"]["N"]),
                int(oldest["N"]) if oldest else None,
                int(item["oldest_ts_ms"]["N"]) if oldest else None,
            )
        return found

    def save_marker(self, connector: str, topic: str, partition: int, seen: Seen) -> None:
        item = {"pk": {"S": connector}, "sk": {"S": f"{MARKER_PREFIX}{topic}#{partition}"},
                "next_offset": {"N": str(seen.next_offset)}}
        if seen.oldest_offset is not None:
            item["oldest_offset"] = {"N": str(seen.oldest_offset)}
            item["oldest_ts_ms"] = {"N": str(seen.oldest_ts_ms)}
        self._db.put_item(TableName=self._table, Item=item)

    def lease(self, connector: str) -> Lease | None:
        item = self._get(connector, LEASE_SK)
        return Lease(int(item["epoch"]["N"]), int(item["expires_at_ms"]["N"])) if item else None

    def claim(self, connector: str) -> RunClaim | None:
        item = self._get(connector, RUN_SK)
        if not item:
            return None
        return RunClaim(int(item["attempt"]["N"]), int(item["lease_epoch"]["N"]), int(item["expires_at_ms"]["N"]),
                        item.get("job_run_id", {}).get("S"))

    def put_claim(self, connector: str, claim: RunClaim, previous_attempt: int | None) -> bool:
        """Write a new claim if the stored attempt is still `previous_attempt` (None: no claim). False if raced."""
        condition = "attribute_not_exists(sk)" if previous_attempt is None else "attempt = :previous"
        values = {} if previous_attempt is None else {":previous": {"N": str(previous_attempt)}}
        item = {"pk": {"S": connector}, "sk": {"S": RUN_SK}, "attempt": {"N": str(claim.attempt)},
                "lease_epoch": {"N": str(claim.lease_epoch)}, "expires_at_ms": {"N": str(claim.expires_at_ms)}}
        return self._conditional(lambda: self._db.put_item(
            TableName=self._table, Item=item, ConditionExpression=condition,
            **({"ExpressionAttributeValues": values} if values else {})))

    def record_job_run(self, connector: str, attempt: int, job_run_id: str) -> bool:
        return self._conditional(lambda: self._db.update_item(
            TableName=self._table, Key={"pk": {"S": connector}, "sk": {"S": RUN_SK}},
            UpdateExpression="SET job_run_id = :id", ConditionExpression="attempt = :attempt",
            ExpressionAttributeValues={":id": {"S": job_run_id}, ":attempt": {"N": str(attempt)}}))

    def _get(self, connector: str, sk: str) -> dict | None:
        return self._db.get_item(TableName=self._table, Key={"pk": {"S": connector}, "sk": {"S": sk}},
                                 ConsistentRead=True).get("Item")

    def _query(self, connector: str, prefix: str) -> list[dict]:
        kwargs = {"TableName": self._table, "ConsistentRead": True,
                  "KeyConditionExpression": "pk = :pk AND begins_with(sk, :prefix)",
                  "ExpressionAttributeValues": {":pk": {"S": connector}, ":prefix": {"S": prefix}}}
        items = []
        while True:
            page = self._db.query(**kwargs)
            items += page["Items"]
            if "LastEvaluatedKey" not in page:
                return items
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    @staticmethod
    def _conditional(write) -> bool:
        try:
            write()
            return True
        except ClientError as e:
            if e.response["Error"]["Code"] == "ConditionalCheckFailedException":
                return False
            raise
