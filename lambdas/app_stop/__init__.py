"""Stops the EMR Serverless application before CloudFormation updates it (a custom resource)."""
