#!/usr/bin/env python3
"""CDK entry: `cdk synth -c env=dev` / `cdk deploy --all -c env=prod`. Artifacts come from `make package`."""

import os
import sys

os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")

from infra.application import build, check_template_sizes, new_app  # noqa: E402
from infra.errors import ConnectorSpecError, PackagingError, SettingsError, TemplateSizeError  # noqa: E402

app = new_app()
try:
    build(app, app.node.try_get_context("env"))
    check_template_sizes(app.synth().directory)
except (ConnectorSpecError, SettingsError, PackagingError, TemplateSizeError) as e:
    # one line naming the file and the key or setting at fault (infra/errors.py), not a Python traceback
    print(f"error: {e}", file=sys.stderr)
    sys.exit(1)
