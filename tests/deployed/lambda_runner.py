"""Invoke a Lambda handler from its package as the Lambda runtime does, in an interpreter that sees nothing of
the development venv: `python -S` (no site-packages), PYTHONPATH = task : opt/python : runtime only, the
runtime's reserved variables, the event as JSON on stdin, and a context object with what Powertools reads.

    result = invoke(artifacts.lambda_layout("dlq_replay"), {"connector": "orders"}, {"CONNECTORS_URI": "s3://..."},
                    stack.env)
"""

from __future__ import annotations

import json
import subprocess
import tempfile
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tests.deployed.artifacts import BASE_PYTHON, LambdaLayout

ACCOUNT = "123456789012"
MEMORY_MB = 1024
# Run inside the isolated interpreter: argv = handler, context attributes (JSON), result file; the event on stdin.
_BOOTSTRAP = r"""
import importlib, json, sys, time

class LambdaContext:
    def __init__(self, attributes, timeout_s):
        self.__dict__.update(attributes)
        self._deadline = time.monotonic() + timeout_s

    def get_remaining_time_in_millis(self):
        return max(0, int((self._deadline - time.monotonic()) * 1000))

handler_name, context, result_file = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
if context.pop("sign_payload_hash"):  # for an IAM-enforcing moto (tests/iam/world.py `sign_payload_hash`)
    import hashlib, boto3

    def sign(request, **_):
        body = request.body or b""
        body = body.encode() if isinstance(body, str) else body
        request.headers["X-Amz-Content-SHA256"] = hashlib.sha256(body).hexdigest()

    boto3.setup_default_session()
    for service in ("emr-serverless", "lambda"):
        boto3.DEFAULT_SESSION.events.register("before-sign." + service, sign)
module, _, name = handler_name.rpartition(".")
handler = getattr(importlib.import_module(module), name)
result = handler(json.load(sys.stdin), LambdaContext(context.pop("attributes"), context["timeout_s"]))
with open(result_file, "w") as f:
    json.dump(result, f)
"""


class LambdaInvokeError(Exception):
    """The handler raised (or its interpreter died): names the handler, with the interpreter's stderr."""


def invoke(
    layout: LambdaLayout,
    event: Any,
    environment: Mapping[str, str],
    aws: Mapping[str, str],
    timeout_s: int = 120,
    sign_payload_hash: bool = False,
) -> Any:
    """The handler's JSON result for `event`. `environment`: the function's variables (as the template sets
    them); `aws`: credentials, region and AWS_ENDPOINT_URL (moto's server). With `sign_payload_hash`, the handler's
    EMR Serverless and Lambda requests sign their payload hash, which an IAM-enforcing moto needs for a request
    without a body (GetJobRun, ListJobRuns, ListEventSourceMappings: docs/aws-fidelity.md); the handler's code is
    unchanged. Raises LambdaInvokeError with the handler's stderr and log lines when it raises or the interpreter
    exits non-zero."""
    name = f"sink-{layout.function.replace('_', '-')}"
    region = aws.get("AWS_REGION", "us-east-1")
    runtime = {  # what the Lambda runtime sets (reserved variables), and the handler's path only
        "PATH": "/usr/bin:/bin",
        "LANG": "en_US.UTF-8",
        "TZ": ":UTC",
        "PYTHONPATH": ":".join(str(p) for p in layout.python_path),
        "LAMBDA_TASK_ROOT": str(layout.task),
        "LAMBDA_RUNTIME_DIR": str(layout.runtime),
        "_HANDLER": layout.handler,
        "AWS_EXECUTION_ENV": "AWS_Lambda_python3.14",
        "AWS_LAMBDA_FUNCTION_NAME": name,
        "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST",
        "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": str(MEMORY_MB),
        "AWS_LAMBDA_LOG_GROUP_NAME": f"/aws/lambda/{name}",
        "AWS_LAMBDA_LOG_STREAM_NAME": "2026/01/01/[$LATEST]0",
        "AWS_REGION": region,
        "AWS_DEFAULT_REGION": region,
        "_X_AMZN_TRACE_ID": "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1",
    }
    context = {
        "timeout_s": timeout_s,
        "sign_payload_hash": sign_payload_hash,
        "attributes": {  # what Powertools' inject_lambda_context reads
            "function_name": name,
            "function_version": "$LATEST",
            "memory_limit_in_mb": MEMORY_MB,
            "invoked_function_arn": f"arn:aws:lambda:{region}:{ACCOUNT}:function:{name}",
            "aws_request_id": str(uuid.uuid4()),
            "log_group_name": runtime["AWS_LAMBDA_LOG_GROUP_NAME"],
            "log_stream_name": runtime["AWS_LAMBDA_LOG_STREAM_NAME"],
        },
    }
    with tempfile.TemporaryDirectory(prefix=f"lambda-{layout.function}-") as scratch:
        result_file = Path(scratch) / "result.json"
        done = subprocess.run(
            [BASE_PYTHON, "-S", "-c", _BOOTSTRAP, layout.handler, json.dumps(context), str(result_file)],
            input=json.dumps(event),
            capture_output=True,
            text=True,
            cwd=layout.task,
            env={**environment, **aws, **runtime},
            timeout=timeout_s,
        )
        if done.returncode != 0 or not result_file.is_file():
            raise LambdaInvokeError(
                f"{layout.handler} failed (exit {done.returncode}):\n{done.stderr[-6000:]}"
                f"\n--- log lines ---\n{done.stdout[-3000:]}"
            )
        return json.loads(result_file.read_text())
