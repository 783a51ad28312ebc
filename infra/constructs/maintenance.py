"""The scheduled table upkeep of each IcebergFormat connector: an EventBridge rule per connector invokes the trigger
with `maintenance_input`, and the trigger starts an EMR job run of `sink-engine iceberg maintain --config <its
published config>` with the connector's own job role (lambdas/trigger/runs.py, `start_maintenance`)."""

from __future__ import annotations

from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

from infra.connectors import ConnectorSpec
from infra.errors import SettingsError
from infra.settings import Settings
from infra.stacks.connectors import ConnectorStacks

# the upkeep of a continuous connector's tables without a schedule of its own: a snapshot per table every
# `iceberg.control.commit.interval-ms` (docs/iceberg.md, "Upkeep")
CONTINUOUS_SCHEDULE = "rate(1 hour)"


def maintenance_schedule(settings: Settings, spec: ConnectorSpec) -> str:
    """The connector's `iceberg.connectors.<name>.maintenance_schedule`; else CONTINUOUS_SCHEDULE for a continuous
    connector, `iceberg.maintenance_schedule` for the others."""
    own = settings.iceberg.connector_schedules.get(spec.name)
    return own or (CONTINUOUS_SCHEDULE if spec.continuous else settings.iceberg.maintenance_schedule)


def maintenance_input(connector: str) -> dict:
    """The trigger's event of a connector's tick; `time` (the scheduled event's time) names the tick."""
    return {"action": "maintain", "connector": connector, "time": events.EventField.time}


class IcebergMaintenance(Construct):
    """Attribute: `rules` (connector name -> its schedule rule), at its `maintenance_schedule`; each where
    `placement` puts its connector's resources."""

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        settings: Settings,
        connectors: tuple[ConnectorSpec, ...],
        function: lambda_.IFunction,
        placement: ConnectorStacks,
    ):
        super().__init__(scope, id)
        iceberg = {spec.name: spec for spec in connectors if spec.iceberg}
        for name in settings.iceberg.connector_schedules:
            if name not in iceberg:
                raise SettingsError(
                    settings.source,
                    f"iceberg.connectors.{name}",
                    "names no IcebergFormat connector "
                    f"of this environment ({', '.join(sorted(iceberg)) or 'it has none'})",
                )
        self.rules: dict[str, events.Rule] = {}
        for name in sorted(iceberg):
            self.rules[name] = events.Rule(
                placement.scope(self, name),
                f"Maintain-{name}",
                schedule=events.Schedule.expression(maintenance_schedule(settings, iceberg[name])),
                description=f"sink-engine iceberg maintain of connector {name}: rewrite small files, expire snapshots",
                targets=[
                    targets.LambdaFunction(function, event=events.RuleTargetInput.from_object(maintenance_input(name)))
                ],
            )
