"""`sink-engine doctor --config FILE`: a deployment proves itself before data flows. Each check reaches one thing a
run needs (the interpreter and libraries, Kafka with the configured authentication, the schema registry, S3 with
the configured credentials and object options, the DynamoDB offsets table, secrets, the Iceberg catalog) and
names what fails; a refused AWS call names the IAM action and the job role's statement that grants it.
`runner.doctor` runs them; the package itself imports nothing, so that a target's checks (sink_engine.target) import
only their own modules."""
