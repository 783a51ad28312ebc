"""Lambda functions of the deployment; each folder holds a thin `handler` and the `service` it drives."""
