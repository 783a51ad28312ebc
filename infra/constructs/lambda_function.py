"""A Python Lambda built without Docker: its code folder assembled from `lambdas/`, libraries from a layer."""
from __future__ import annotations

import shutil
from pathlib import Path

from aws_cdk import Duration
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from constructs import Construct

from infra.errors import PackagingError
from infra.packaging import BUILD, ROOT, lambda_layer_path

RUNTIME = lambda_.Runtime.PYTHON_3_14
ARCHITECTURE = lambda_.Architecture.ARM_64


def assemble_code(function: str, build: Path = BUILD) -> Path:
    """Copy `lambdas/__init__.py` and `lambdas/<function>/` into a folder of their own; returns the folder."""
    target = build / "lambda" / f"code-{function}"
    shutil.rmtree(target, ignore_errors=True)
    (target / "lambdas").mkdir(parents=True)
    shutil.copy2(ROOT / "lambdas" / "__init__.py", target / "lambdas" / "__init__.py")
    shutil.copytree(ROOT / "lambdas" / function, target / "lambdas" / function,
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return target


class LibrariesLayer(Construct):
    """Attribute: `layer`, Powertools and its tracer for the Lambda runtime, built by `make package`."""

    def __init__(self, scope: Construct, id: str):
        super().__init__(scope, id)
        folder = lambda_layer_path()
        if not (folder / "python").is_dir():
            raise PackagingError(f"Lambda layer folder {folder} is missing: run `make package` first")
        self.layer = lambda_.LayerVersion(self, "Layer", code=lambda_.Code.from_asset(str(folder)),
                                          compatible_runtimes=[RUNTIME], compatible_architectures=[ARCHITECTURE],
                                          description="aws-lambda-powertools and aws-xray-sdk")


class PythonLambda(Construct):
    """Attribute: `function`. Handler `lambdas.<name>.handler.handler`, X-Ray tracing, Powertools settings, and a
    log group with the environment's retention."""

    def __init__(self, scope: Construct, id: str, *, name: str, service: str, layer: lambda_.ILayerVersion,
                 environment: dict[str, str], log_retention_days: int, timeout: Duration, memory_mb: int = 256):
        super().__init__(scope, id)
        self.log_group = logs.LogGroup(self, "Logs", retention=log_retention(log_retention_days))
        self.function = lambda_.Function(
            self, "Function", runtime=RUNTIME, architecture=ARCHITECTURE,
            code=lambda_.Code.from_asset(str(assemble_code(name))), handler=f"lambdas.{name}.handler.handler",
            layers=[layer], timeout=timeout, memory_size=memory_mb, tracing=lambda_.Tracing.ACTIVE,
            log_group=self.log_group,
            environment={"POWERTOOLS_SERVICE_NAME": service, "POWERTOOLS_METRICS_NAMESPACE": "SinkEngine",
                         "POWERTOOLS_LOG_LEVEL": "INFO", **environment},
        )


_RETENTION = {
    1: "ONE_DAY", 3: "THREE_DAYS", 5: "FIVE_DAYS", 7: "ONE_WEEK", 14: "TWO_WEEKS", 30: "ONE_MONTH", 60: "TWO_MONTHS",
    90: "THREE_MONTHS", 120: "FOUR_MONTHS", 150: "FIVE_MONTHS", 180: "SIX_MONTHS", 365: "ONE_YEAR",
    400: "THIRTEEN_MONTHS", 545: "EIGHTEEN_MONTHS", 731: "TWO_YEARS", 1096: "THREE_YEARS", 1827: "FIVE_YEARS",
    2192: "SIX_YEARS", 2557: "SEVEN_YEARS", 2922: "EIGHT_YEARS", 3288: "NINE_YEARS", 3653: "TEN_YEARS",
}


def log_retention(days: int) -> logs.RetentionDays:
    """The CloudWatch Logs retention of `days` (one of the periods settings.py accepts)."""
    return getattr(logs.RetentionDays, _RETENTION[days])
