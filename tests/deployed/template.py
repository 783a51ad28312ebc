"""A synthesized environment's templates read as the deployed services see them: intrinsic functions resolved to
plain values, each reference to a resource replaced by the value the test stands up for that kind of resource
(moto's table, the EMR application moto created, a bucket...).

    templates = synthesize("dev", tmp_path)
    env = templates.function_environment("trigger", {("AWS::DynamoDB::GlobalTable", "Ref"): "test-offsets",
                                                      ("AWS::EMRServerless::Application", "ApplicationId"): app_id})

A reference with no value given raises Unresolved naming the resource type and attribute to add.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

Values = Mapping[tuple[str, str], str]  # (resource type, "Ref" or an attribute name) -> value
_SUB = re.compile(r"\$\{([^}!][^}]*)\}")


class Unresolved(KeyError):
    """A reference the test gave no value for; names the resource type and attribute."""


class Templates:
    """The templates of one synthesized environment (stack name -> template), for `account` and `region`."""

    def __init__(self, templates: Mapping[str, dict], account: str, region: str):
        self.templates, self.account, self.region = dict(templates), account, region

    def function_environment(self, function: str, values: Values) -> dict[str, str]:
        """The environment of the function whose handler is `lambdas.<function>.handler.handler`."""
        stack, resource = self.function(function)
        variables = resource["Properties"].get("Environment", {}).get("Variables", {})
        return {name: self.resolve(stack, value, values) for name, value in variables.items()}

    def resources(self, resource_type: str) -> list[tuple[str, str, dict]]:
        """(stack, logical id, resource) of every resource of `resource_type`."""
        return [
            (stack, logical, resource)
            for stack, template in self.templates.items()
            for logical, resource in template.get("Resources", {}).items()
            if resource["Type"] == resource_type
        ]

    def resolve(self, stack: str, node: Any, values: Values) -> Any:
        """`node` of `stack`'s template with Ref, Fn::GetAtt, Fn::ImportValue, Fn::Join, Fn::Sub, Fn::Select
        and Fn::Split resolved (dicts and lists recursively; strings and numbers as they are)."""
        if isinstance(node, list):
            return [self.resolve(stack, item, values) for item in node]
        if not isinstance(node, dict):
            return node
        first = next(iter(node), "")
        if len(node) != 1 or not (first == "Ref" or first.startswith("Fn::")):  # not an intrinsic function
            return {key: self.resolve(stack, value, values) for key, value in node.items()}
        ((function, argument),) = node.items()
        if function == "Ref":
            return self._reference(stack, argument, "Ref", values)
        if function == "Fn::GetAtt":
            return self._reference(stack, argument[0], argument[1], values)
        if function == "Fn::ImportValue":
            return self._import(self.resolve(stack, argument, values), values)
        if function == "Fn::Join":
            return argument[0].join(str(self.resolve(stack, part, values)) for part in argument[1])
        if function == "Fn::Sub":
            text, variables = (argument, {}) if isinstance(argument, str) else argument
            local = {k: self.resolve(stack, v, values) for k, v in variables.items()}
            return _SUB.sub(lambda m: str(self._variable(stack, m[1], local, values)), text)
        if function == "Fn::Select":
            return self.resolve(stack, argument[1], values)[int(argument[0])]
        if function == "Fn::Split":
            return self.resolve(stack, argument[1], values).split(argument[0])
        raise ValueError(f"{function} in stack {stack} is not resolved by tests/deployed/template.py")

    def _variable(self, stack: str, name: str, local: Mapping[str, Any], values: Values) -> Any:
        """A `${name}` of Fn::Sub: one of its own variables, a pseudo parameter, `Logical` or `Logical.Attr`."""
        if name in local:
            return local[name]
        logical, _, attribute = name.partition(".")
        return self._reference(stack, logical, attribute or "Ref", values)

    def _reference(self, stack: str, name: str, attribute: str, values: Values) -> str:
        pseudo = {
            "AWS::AccountId": self.account,
            "AWS::Region": self.region,
            "AWS::Partition": "aws",
            "AWS::URLSuffix": "amazonaws.com",
            "AWS::StackName": stack,
        }
        if attribute == "Ref" and name in pseudo:
            return pseudo[name]
        resources = self.templates[stack].get("Resources", {})
        if name not in resources:
            raise Unresolved(f"{name} is not a resource of stack {stack}")
        kind = resources[name]["Type"]
        if (kind, attribute) not in values:
            raise Unresolved(f"{stack}/{name}: give a value for ({kind!r}, {attribute!r})")
        return values[(kind, attribute)]

    def _import(self, export: str, values: Values) -> str:
        for stack, template in self.templates.items():
            for output in template.get("Outputs", {}).values():
                if output.get("Export", {}).get("Name") == export:
                    return self.resolve(stack, output["Value"], values)
        raise Unresolved(f"no stack exports {export}")

    def function(self, function: str) -> tuple[str, dict]:
        """(stack, resource) of the function whose handler is `lambdas.<function>.handler.handler`."""
        handler = f"lambdas.{function}.handler.handler"
        found = [
            (stack, resource)
            for stack, _, resource in self.resources("AWS::Lambda::Function")
            if resource["Properties"].get("Handler") == handler
        ]
        if len(found) != 1:
            raise LookupError(f"{len(found)} functions with handler {handler} (expected 1)")
        return found[0]


def synthesize(env: str, outdir: Path) -> Templates:
    """Synthesize environment `env` into `outdir` (the artifacts of `make package` must exist: see
    tests/infra/conftest.py `ensure_artifacts`)."""
    os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")
    from infra.application import build, new_app

    app = new_app(str(outdir))
    deployment = build(app, env)
    app.synth()
    stacks = (deployment.data, deployment.service)
    return Templates(
        {s.stack_name: json.loads((outdir / f"{s.stack_name}.template.json").read_text()) for s in stacks},
        deployment.settings.account,
        deployment.settings.region,
    )
