"""EMR Serverless entry point of the sink job: `entrypoint.py run --config s3://bucket/key` (the trigger also starts
`doctor` and `iceberg maintain` runs through it).

Spark runs this file with the archive's interpreter (`./environment/bin/python`), whose site-packages hold the
sink engine and its dependencies; the arguments go to the engine's CLI unchanged. First it checks that interpreter
(`interpreter_problem`) and exits with status 2 and a message naming the setting `emr.interpreter` when it cannot
run the job. Written for any Python 3 (it may run under the image's default interpreter) and the standard library
only: nothing of the engine is importable before the check passes.
"""

import os
import sys

SETTING = "emr.interpreter"
ARCHIVE_PYTHON = "./environment/bin/python"


def interpreter_problem(prefix, version, executor_python):
    """Why this driver cannot run the job, or None. `prefix`: the running interpreter's `sys.prefix`, the job
    archive (a venv: `pyvenv.cfg` states the Python its packages were built for) when it runs the archive's
    `bin/python`; `version`: its (major, minor); `executor_python`: the executors' interpreter (`PYSPARK_PYTHON`,
    relative to the working directory) or None."""
    running = "%d.%d" % tuple(version[:2])
    config = os.path.join(prefix, "pyvenv.cfg")
    if not os.path.isfile(config):
        return (
            "the driver runs %s (Python %s), not the job archive's interpreter %s: the job's Spark parameters "
            "must set spark.emr-serverless.driverEnv.PYSPARK_DRIVER_PYTHON to it" % (prefix, running, ARCHIVE_PYTHON)
        )
    wanted = _venv_version(config)
    if wanted != running:
        return (
            "the job archive's packages are for Python %s, but its bin/python runs Python %s: the image's "
            '/usr/bin/python%s is another interpreter; set %s to "image" (an image the stack builds with '
            "Python %s) and redeploy" % (wanted, running, wanted, SETTING, wanted)
        )
    if executor_python and not os.path.exists(executor_python):
        target = os.path.realpath(executor_python)
        return (
            "the executors' interpreter %s (PYSPARK_PYTHON) leads to %s, which this image does not have: set %s "
            'to "image" (an image the stack builds with Python %s) and redeploy'
            % (executor_python, target, SETTING, wanted)
        )
    return None


def _venv_version(config):
    """The major.minor of `version = 3.11.x` (venv) or `version_info = ...` (virtualenv) in a pyvenv.cfg."""
    with open(config) as f:
        for line in f:
            key, _, value = line.partition("=")
            if key.strip() in ("version", "version_info"):
                return ".".join(value.strip().split(".")[:2])
    return "(unstated)"


if __name__ == "__main__":
    problem = interpreter_problem(sys.prefix, sys.version_info, os.environ.get("PYSPARK_PYTHON"))
    if problem:
        sys.stderr.write("sink job cannot start: %s\n" % problem)
        sys.exit(2)
    from sink_engine.cli import main

    sys.exit(main(sys.argv[1:]))
