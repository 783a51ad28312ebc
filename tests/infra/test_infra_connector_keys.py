"""`cdk synth` warns about each connector key the job ignores, naming the file and the key."""

from __future__ import annotations

import json

import pytest

from infra.connectors import _load
from infra.settings import load_settings


@pytest.fixture(scope="module")
def with_ignored_keys(tmp_path_factory):
    """dev's stacks for its connector file carrying two keys no one knows."""
    from infra.application import build, new_app
    from tests.infra.conftest import ensure_artifacts

    ensure_artifacts()
    settings = load_settings("dev")
    (shipped,) = sorted(settings.connectors_dir.glob("*.json"))
    document = json.loads(shipped.read_text())
    document["config"].update({"s3.endpoint": "https://s3.eu-west-1.amazonaws.com", "frobnicate": "yes"})
    path = tmp_path_factory.mktemp("ignored") / shipped.name
    path.write_text(json.dumps(document))
    app = new_app(str(tmp_path_factory.mktemp("cdk-ignored")))
    deployment = build(app, "dev", (_load(path, settings),))
    app.synth()
    return deployment


def test_synth_warns_naming_file_and_key(with_ignored_keys):
    from aws_cdk.assertions import Annotations, Match

    stack = Annotations.from_stack(with_ignored_keys.service)
    stack.has_warning(
        "/Sink-dev-Service",
        Match.string_like_regexp(
            r"connector config dev/orders.json, key 's3.endpoint': ignored .*did you mean `store.url`\?"
        ),
    )
    stack.has_warning(
        "/Sink-dev-Service",
        Match.string_like_regexp(
            r"connector config dev/orders.json, key 'frobnicate': ignored \(unknown .*\); set "
            r"connectors.refuse_ignored_keys"
        ),
    )


def test_the_shipped_dev_connector_synthesizes_without_such_warnings(dev):
    from aws_cdk.assertions import Annotations, Match

    Annotations.from_stack(dev.deployment.service).has_no_warning("*", Match.string_like_regexp("ignored"))
