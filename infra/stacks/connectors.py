"""Where each connector's own resources go: its job role, its Glue tables, its topics' MSK event source mappings,
its alarms and its Iceberg upkeep rule.

With `connector_stacks` 0 (the default) the constructs that make them hold them, in the service stack, as before.
With `connector_stacks` N, they go to N nested stacks of the service stack (`Connectors<i>`), a connector to
stack `crc32(name) % N`: adding or removing a connector moves no other one (a resource that moved to another stack
would be created there before its old copy is deleted, which the Glue tables' and job roles' fixed names refuse).
"""

from __future__ import annotations

import zlib

from aws_cdk import NestedStack, Stack
from constructs import Construct

NESTED_ID = "Connectors"


def connector_stack_index(connector: str, count: int) -> int:
    """The nested stack of `connector` among `count`: stable across deployments and connector sets."""
    return zlib.crc32(connector.encode()) % count


class ConnectorStacks:
    """Attribute: `nested` (index -> NestedStack, those that hold a connector). `grouped`: whether nested stacks
    hold the connectors' resources (`count` > 0)."""

    def __init__(self, service: Stack, count: int):
        self._service, self._count = service, count
        self.nested: dict[int, NestedStack] = {}
        # kept here: each construct lookup is a call into CDK's node process, thousands of them per synthesis
        self._parts: dict[tuple[int, str], Construct] = {}
        self._owner_ids: dict[int, str] = {}

    @property
    def grouped(self) -> bool:
        return self._count > 0

    def scope(self, owner: Construct, connector: str) -> Construct:
        """The scope of `connector`'s resources that `owner` makes: `owner` itself, or the construct named as
        `owner` in the connector's nested stack (so that ids stay those of one service stack)."""
        if not self.grouped:
            return owner
        if id(owner) not in self._owner_ids:
            self._owner_ids[id(owner)] = owner.node.id
        part = self._owner_ids[id(owner)]
        index = connector_stack_index(connector, self._count)
        if (index, part) not in self._parts:
            self._parts[index, part] = Construct(self.stack_of(connector), part)
        return self._parts[index, part]

    def stack_of(self, connector: str) -> NestedStack:
        index = connector_stack_index(connector, self._count)
        if index not in self.nested:
            self.nested[index] = NestedStack(
                self._service,
                f"{NESTED_ID}{index:03d}",
                description=f"{self._service.stack_name}: connectors of group {index}",
            )
        return self.nested[index]
