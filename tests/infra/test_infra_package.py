"""What `make package` builds is what the stack deploys: the job archive's S3 key keeps an extension Spark
unpacks, the synthesized spark-submit parameters are those tests/deployed runs, and every function's code
folder and layers are those of `infra.packaging.FUNCTIONS` (which tests/deployed lays out for Lambda).
Running the artifacts themselves is tests/deployed's."""

from __future__ import annotations

import shlex
from pathlib import Path

from infra import packaging
from tests.deployed.emr_runner import SPARK_UNPACKS, sink_job_parameters
from tests.deployed.template import Templates


def _templates(synthesized) -> Templates:
    settings = synthesized.deployment.settings
    return Templates(synthesized.templates, settings.account, settings.region)


def _spark_parameters(synthesized) -> str:
    templates = _templates(synthesized)
    stack, function = templates.function("trigger")
    return templates.resolve(stack, function["Properties"]["Environment"]["Variables"]["SPARK_PARAMETERS"], {})


def _archives(parameters: str) -> list[str]:
    words = shlex.split(parameters)
    confs = dict(w.partition("=")[::2] for option, w in zip(words[::2], words[1::2]) if option == "--conf")
    return confs["spark.archives"].split(",")


def test_the_archive_key_keeps_an_extension_spark_unpacks(each_env):
    for entry in _archives(_spark_parameters(each_env)):
        uri, _, alias = entry.partition("#")
        assert uri.startswith("s3://") and alias == "environment", entry
        assert uri.rsplit("/", 1)[-1].lower().endswith(SPARK_UNPACKS), f"Spark would copy {uri}, not unpack it"


def test_the_synthesized_parameters_are_those_the_deployed_tests_run(each_env):
    parameters = _spark_parameters(each_env)
    archive_uri = _archives(parameters)[0].partition("#")[0]
    settings = each_env.deployment.settings
    assert parameters == sink_job_parameters(archive_uri, settings.region, settings.msk.cluster_arn)


def _top_level(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir()}


def test_each_function_has_the_code_and_layers_of_its_package(dev):
    template, outdir = dev.templates["service"], dev.outdir
    asset = lambda properties: outdir / f"asset.{properties['S3Key'].removesuffix('.zip')}"  # noqa: E731
    built = {name: _top_level(packaging.lambda_layer_path(name) / "python") for name in packaging.LAYERS}
    layers = {}
    for logical, resource in template["Resources"].items():
        if resource["Type"] == "AWS::Lambda::LayerVersion":
            contents = _top_level(asset(resource["Properties"]["Content"]) / "python")
            layers[logical] = next(name for name, names in built.items() if names == contents)
    for function, package in packaging.FUNCTIONS.items():
        _, resource = _templates(dev).function(function)
        properties = resource["Properties"]
        assert tuple(layers[ref["Ref"]] for ref in properties["Layers"]) == package.layers, function
        code = asset(properties["Code"])
        assert _top_level(code) == {p.split("/")[0] for p in ("lambdas", *package.packages)}, function
        shared = {p.split("/")[1] for p in package.packages if p.startswith("lambdas/")}
        assert _top_level(code / "lambdas") == {"__init__.py", function, *shared}, function
