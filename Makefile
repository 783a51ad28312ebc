# Quick start: `make demo` runs the sink end to end on the embedded local stack; `make test` runs every test.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: venv demo test test-faults soak bench clean

venv: $(STAMP)

$(STAMP): requirements.txt requirements-dev.txt requirements-infra.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip==25.3
	$(PY) -m pip install --quiet -r requirements-dev.txt
	$(PY) -m pip install --quiet --no-deps -e .
	touch $(STAMP)

demo: venv
	$(PY) -m devtools.demo

test: venv
	$(PY) -m pytest -m "not fault_matrix and not soak"

# The full fault matrix (tests/faults, seeded: a failing seed is printed), run by CI after `make test`.
test-faults: venv
	$(PY) -m pytest tests/faults -m "not soak"

# Long soaks (SIGKILL loops over millions of records), not in CI.
soak: venv
	$(PY) -m pytest tests/faults -m soak -s

bench: venv
	$(PY) -m devtools.bench

clean:
	rm -rf $(VENV) .pytest_cache

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
