# Quick start: `make demo` runs the sink end to end on the embedded local stack; `make test` runs every test;
# `make lint` checks the code, `make docs` builds the docs site into site/.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
CDK_STAMP := node_modules/.installed
# The installer of every pinned Maven bundle below but Kafka's broker (python -m devtools.maven_dist install <bundle>:
# resolve with Maven, check each jar against the bundle's .sha256 lists, then move into .venv/<bundle>). Maven keeps
# its downloads in its local repository (~/.m2), so a reinstall resolves offline.
MAVEN_DIST := devtools/maven_dist.py devtools/maven_parts.py devtools/debezium_dist.py devtools/iceberg_spark_dist.py \
    devtools/jvm_oracles.py devtools/connect_peers_dist.py

.PHONY: venv kafka connect-json connect-transforms debezium iceberg-spark connect-peers cdk-cli lint format docs demo clean
.PHONY: test test-faults test-kafka4 test-cdc test-iceberg-readers test-oracle test-scale test-many-partitions soak
.PHONY: bench bench-restore bench-freshness bench-upsert bench-fan-out bench-configs bench-many bench-peers

venv: $(STAMP) kafka connect-json connect-transforms debezium iceberg-spark connect-peers

# Apache Kafka's broker jars (devtools/kafka/pom.xml's profile of each line, checked against kafka-<line>.sha256) under
# .venv/kafka/<line>/libs, for the local stack (devtools/stack.py): 3.9 for make test, 4.1 for make test-kafka4. Maven
# keeps its downloads in its local repository (~/.m2), so a reinstall resolves offline.
kafka: $(VENV)/kafka/3.9/.installed

$(VENV)/kafka/%/.installed: devtools/kafka/pom.xml devtools/kafka/kafka-%.sha256 devtools/kafka_dist.py | $(STAMP)
	rm -f $@
	$(PY) -m devtools.kafka_dist install $*

# Kafka Connect's worker and Debezium's Postgres connector (devtools/debezium/pom.xml, checked against its .sha256
# lists) under .venv/debezium, for the CDC end-to-end test (make test-cdc).
debezium: $(VENV)/debezium/.installed

$(VENV)/debezium/.installed: devtools/debezium/pom.xml devtools/debezium/connect.sha256 \
    devtools/debezium/debezium-postgres.sha256 $(MAVEN_DIST) | $(STAMP)
	rm -rf $(VENV)/debezium
	$(PY) -m devtools.maven_dist install debezium

# Kafka's JsonConverter with its dependencies (devtools/jvm/connect-json/pom.xml, checked against libs.sha256 beside
# it) under .venv/connect-json/libs: the oracle of tests/unit/test_connect_json_oracle.py (tests/connect_json_oracle.py).
connect-json: $(VENV)/connect-json/.installed

$(VENV)/connect-json/.installed: devtools/jvm/connect-json/pom.xml devtools/jvm/connect-json/libs.sha256 \
    $(MAVEN_DIST) | $(STAMP)
	rm -rf $(VENV)/connect-json
	$(PY) -m devtools.maven_dist install connect-json

# Iceberg's Java reader (Iceberg's Spark runtime, its AWS bundle, sqlite-jdbc: devtools/jvm/iceberg-spark/pom.xml,
# checked against libs.sha256 beside it) under .venv/iceberg-spark/libs, for tests/iceberg/spark_reader.py.
iceberg-spark: $(VENV)/iceberg-spark/.installed

$(VENV)/iceberg-spark/.installed: devtools/jvm/iceberg-spark/pom.xml devtools/jvm/iceberg-spark/libs.sha256 \
    $(MAVEN_DIST) | $(STAMP)
	rm -rf $(VENV)/iceberg-spark
	$(PY) -m devtools.maven_dist install iceberg-spark

# Kafka Connect's transforms and JsonConverter (3.9.1) and Debezium's ExtractNewRecordState (3.6.1.Final) with their
# dependencies (devtools/jvm/connect-transforms/pom.xml, checked against libs.sha256 beside it) under
# .venv/connect-transforms/libs: the oracle of the differential transform test
# (tests/unit/transform/test_connect_transforms_oracle.py, tests/connect_transforms_oracle.py).
connect-transforms: $(VENV)/connect-transforms/.installed

$(VENV)/connect-transforms/.installed: devtools/jvm/connect-transforms/pom.xml \
    devtools/jvm/connect-transforms/libs.sha256 $(MAVEN_DIST) | $(STAMP)
	rm -rf $(VENV)/connect-transforms
	$(PY) -m devtools.maven_dist install connect-transforms

# The peers of make bench-peers: Apache Iceberg's Kafka Connect sink 1.10.1 with Parquet, S3FileIO, the JDBC catalog's
# SQLite driver and Hadoop's client (devtools/jvm/connect-peers/pom.xml, checked against iceberg.sha256 beside it)
# under .venv/connect-peers/plugins/iceberg, a plugin folder of the debezium bundle's Kafka Connect worker.
connect-peers: $(VENV)/connect-peers/.installed

$(VENV)/connect-peers/.installed: devtools/jvm/connect-peers/pom.xml devtools/jvm/connect-peers/iceberg.sha256 \
    $(MAVEN_DIST) | $(STAMP)
	rm -rf $(VENV)/connect-peers
	$(PY) -m devtools.maven_dist install connect-peers

# The differential transform test with many more generated examples per transform (make test runs 100; about 18 minutes).
test-oracle: venv
	ORACLE_EXAMPLES=1000 $(PY) -m pytest tests/unit/transform/test_connect_transforms_oracle.py -s

# The AWS CDK CLI pinned in package.json (npx aws-cdk then runs it from node_modules).
cdk-cli: $(CDK_STAMP)

$(CDK_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $(CDK_STAMP)

$(STAMP): requirements.txt requirements-columnar.txt requirements-spark.txt requirements-dev.txt requirements-infra.txt \
    requirements-docs.txt requirements-duckdb-iceberg.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip==25.3
	$(PY) -m pip install --quiet -r requirements-dev.txt
	$(PY) -m pip install --quiet --no-deps -e .
	$(PY) -m pip install --quiet --no-deps --upgrade --target $(VENV)/duckdb-iceberg -r requirements-duckdb-iceberg.txt
	touch $(STAMP)

# Lint and format check of sink_engine/, lambdas/, infra/, devtools/, tests/ and app.py (pyproject.toml's [tool.ruff]),
# type check of the same but tests/ ([tool.mypy]: every def annotated in sink_engine/ and lambdas/); `make format`
# applies ruff's safe fixes and its formatting.
lint: venv
	$(VENV)/bin/ruff check
	$(VENV)/bin/ruff format --check
	$(VENV)/bin/mypy

format: venv
	$(VENV)/bin/ruff check --fix
	$(VENV)/bin/ruff format

# The docs site (mkdocs.yml, docs/) into site/, strict: a warning, a broken link or a missing anchor fails it. First
# the configuration reference (docs/reference/configuration.md) is written from the key tables
# (devtools/config_reference.py); under CI (CI set) it is only checked, so that a page not regenerated and committed
# fails there. (NO_MKDOCS_2_WARNING: Material's banner about its end of life, printed on every build.)
docs: venv
	$(PY) -m devtools.config_reference $(if $(CI),--check,)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --site-dir site

demo: venv
	$(PY) -m devtools.demo

# In two worker processes (pytest-xdist), each with its own local stack and Spark session, a test module at a time;
# the tests that synthesize the CDK app share one worker (tests/conftest.py, SYNTHESIZING).
test: venv cdk-cli
	$(PY) -m pytest -n 2 --dist loadgroup -m "not fault_matrix and not soak and not scale and not many_partitions and not cdc"

# 500 connectors of 10 topics in one environment (tests/infra/test_infra_scale.py): a minute of synthesis, two on a
# shared machine; run by CI after `make test` as test-faults is.
test-scale: venv
	$(PY) -m pytest tests/infra/test_infra_scale.py -m scale -s

# The full fault matrix (tests/faults, seeded: a failing seed is printed), run by CI after `make test`.
test-faults: venv
	$(PY) -m pytest tests/faults -m "not soak"

# The Iceberg tests and the continuous runs into tables, every table they read back read again by Iceberg's Java reader
# (Spark), pyiceberg and DuckDB, which must agree (tests/iceberg/every_table.py); make test reads one table of each
# kind so (tests/iceberg/test_java_reader.py). Run by CI after make test.
test-iceberg-readers: venv
	ICEBERG_JAVA_READER=1 $(PY) -m pytest tests/iceberg tests/continuous/test_iceberg_continuous.py \
	    tests/continuous/test_upsert_continuous.py -n 2 --dist loadgroup \
	    -m "not fault_matrix and not soak and not scale and not many_partitions"

# A representative part of the suite against Apache Kafka 4.1, the newest line MSK offers (make test runs 3.9): the
# exactly-once runs, transactional, compacted and trimmed topics, dead letters to a topic, a continuous run over
# transactions, Iceberg upserts, connection resets through the fault proxy and a leader SIGKILLed on a three-broker
# cluster; run by CI after make test.
KAFKA4_TESTS := tests/functional/test_exactly_once.py tests/functional/test_transactional_topics.py \
    tests/functional/test_topic_changes.py tests/functional/test_dead_letters.py \
    tests/continuous/test_continuous_transactions.py tests/iceberg/test_upsert.py \
    tests/faults/test_kafka_faults.py::test_connection_resets_mid_run_the_run_completes \
    tests/faults/test_broker_faults.py::test_a_broker_killed_mid_run_its_leaders_move_and_every_record_lands_once
test-kafka4: venv $(VENV)/kafka/4.1/.installed
	KAFKA_VERSION=4.1 $(PY) -m pytest -n 2 --dist loadgroup $(KAFKA4_TESTS)

# PostgreSQL (Debian's package) -> Debezium in Kafka Connect -> Apache Kafka -> upsert tables, with a SIGKILL
# (tests/cdc); run by CI after make test.
test-cdc: venv
	$(PY) -m pytest tests/cdc -m cdc

# A run over 1,000 partitions end to end (tests/faults/test_many_partitions.py; about a minute on 2 cores).
test-many-partitions: venv
	$(PY) -m pytest tests/faults/test_many_partitions.py -m many_partitions

# Long soaks (SIGKILL loops over millions of records), not in CI.
soak: venv
	$(PY) -m pytest tests/faults -m soak -s

bench: venv
	$(PY) -m devtools.bench

# Freshness of sink-engine run --continuous (produce -> object listed) at 2,000 records/s and at full rate, and a
# continuous run against a bounded one on the same backlog (not part of make test; SOAK=30 adds a 30-minute soak).
bench-freshness: venv
	$(PY) -m devtools.bench_freshness $(if $(SOAK),--soak-minutes $(SOAK))

# Upsert tables: copy-on-write against equality deletes (docs/iceberg.md, "Upsert tables"); ROWS, RUNS and
# DUCKDB (a `pip install --target` of duckdb and its iceberg/avro extension wheels, which read equality deletes).
bench-upsert: venv
	$(PY) -m devtools.bench_upsert $(if $(ROWS),--rows $(ROWS),) $(if $(RUNS),--runs $(RUNS),) \
	    $(if $(DUCKDB),--duckdb-path $(DUCKDB),)

# IcebergFormat with fan-out by field into 3, 30 and 300 tables, the snapshots committed one table after another and
# 8 at once (docs/performance/index.md, "Iceberg: fan-out to many tables"; about 6 minutes on 2 cores)
bench-fan-out: venv
	$(PY) -m devtools.bench_fan_out

# sink-engine restore of an envelope backup (Parquet, JSON) of 1M records, and its rerun (not part of make test).
bench-restore: venv
	$(PY) -m devtools.bench_restore

# sink-engine's bounded and continuous runs beside the connectors users run instead (Apache Iceberg's Kafka Connect
# sink; Maven Central serves no S3 sink), on the same broker, records and machine: records/s and CPU over a backlog,
# RSS, files, freshness at a steady rate (docs/performance/peers.md; RECORDS, default 2,000,000; SECONDS of the
# steady scenario, default 60). make test runs its short form (tests/functional/test_bench_peers.py).
bench-peers: venv
	$(PY) -m devtools.bench_peers $(if $(RECORDS),--records $(RECORDS),) $(if $(SECONDS),--seconds $(SECONDS),)

# Bounded runs of many small connectors: one application (--config-dir) against a run process per connector
bench-configs: venv
	$(PY) -m devtools.bench_configs

# One continuous job serving 1, 12 and 50 connectors at 5,000 records/s in all (docs/continuous.md); seconds per
# scenario: MANY_SECONDS (60; 600 for the RSS target over 10 minutes).
bench-many: venv
	$(PY) -m devtools.bench_many $(if $(MANY_SECONDS),--seconds $(MANY_SECONDS))

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache node_modules site

# AWS deployment artifacts (see infra/packaging.py), under build/: the EMR job archive, each Lambda's code
# folder and its layers, for the deployed platforms (ARM64; EMR Python 3.11, Lambda Python 3.14).
.PHONY: package
package: venv
	$(PY) -m infra.packaging

# The deployed chain end to end under enforced IAM (also part of `make test`): MSK event -> packaged trigger ->
# StartJobRun -> the job from that request (spark-submit, packaged archive) -> S3 and DynamoDB -> status -> replay.
.PHONY: e2e
e2e: venv
	$(PY) -m pytest tests/e2e
