#!/usr/bin/env python3
"""CDK entry: `cdk synth -c env=dev` / `cdk deploy --all -c env=prod`. Artifacts come from `make package`."""

import os

os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")

from infra.application import build, check_template_sizes, new_app  # noqa: E402

app = new_app()
build(app, app.node.try_get_context("env"))
check_template_sizes(app.synth().directory)
