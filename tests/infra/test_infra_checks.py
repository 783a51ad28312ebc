"""Checks over the synthesized templates: cfn-lint, cdk-nag (AwsSolutions) and its acknowledgements."""

import json

import pytest

# CDK makes each Lambda function DependsOn its role and policy, which also follows from GetAtt: redundant, harmless.
CFN_LINT_IGNORED = ["W3005"]


def cfn_lint_findings(cdk_out, deployment) -> list[str]:
    """cfn-lint's findings over the deployment's data and service templates synthesized into `cdk_out`."""
    from cfnlint.api import ManualArgs, lint_file

    findings = []
    for stack in (deployment.data, deployment.service):
        findings += lint_file(
            cdk_out / f"{stack.stack_name}.template.json",
            ManualArgs(regions=[deployment.settings.region], ignore_checks=CFN_LINT_IGNORED),
        )
    return [str(f) for f in findings]


def nag_violations(cdk_out) -> list:
    """cdk-nag's unacknowledged findings in the validation report synthesized into `cdk_out`."""
    report = json.loads((cdk_out / "validation-report.json").read_text())
    return [v for plugin in report["pluginReports"] for v in plugin.get("violations", [])]


def test_cfn_lint_is_clean(each_env):
    assert cfn_lint_findings(each_env.outdir, each_env.deployment) == []


def test_nag_report_has_no_unacknowledged_finding(each_env):
    assert nag_violations(each_env.outdir) == []


def test_every_acknowledgement_has_a_reason(each_env):
    acknowledged = []
    for template in each_env.templates.values():
        for resource in template["Resources"].values():
            for rule in resource.get("Metadata", {}).get("cdk_nag", {}).get("rules_to_suppress", []):
                acknowledged.append(rule)
    assert acknowledged, "the service stack acknowledges IAM findings"
    assert all(rule["id"].startswith("AwsSolutions-") and len(rule["reason"]) > 20 for rule in acknowledged)


def test_nag_fails_synthesis_on_an_unacknowledged_finding(tmp_path):
    from aws_cdk import Stack, Validations
    from aws_cdk import aws_s3 as s3
    from cdk_nag import AwsSolutionsChecks

    from infra.application import new_app

    app = new_app(str(tmp_path))
    s3.Bucket(Stack(app, "Careless"), "Plain")
    Validations.of(app).add_plugins(AwsSolutionsChecks(app))
    with pytest.raises(Exception, match="ValidationFailed") as failed:
        app.synth()
    assert "AwsSolutions-S1'" in str(failed.value) and "AwsSolutions-S10'" in str(failed.value)
