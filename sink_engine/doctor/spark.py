"""Where a run's tasks would run: a tiny Spark stage on the job's own Spark, and the executors that ran it.

Under spark-submit (EMR Serverless starts every job so) the stage must run on executors: a stage that ran in the
driver means every run of this deployment would do its work in its driver while the executors EMR bills stay idle
(the job forced a local master). Started directly, the doctor is a local tool: runs use local Spark on purpose,
and the check is skipped.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sink_engine.doctor.checks import Check, Failed
from sink_engine.run.spark_runner import executors_of_job_group, launched_by_spark_submit, spark_session

if TYPE_CHECKING:
    from sink_engine.doctor.runner import Context

STAGE_TASKS = 4
GROUP = "sink-engine-doctor-executors"


def executors(context: Context) -> str:
    spark = spark_session(f"sink-engine-doctor-{context.config.name}")
    master = spark.sparkContext.master
    spark.sparkContext.setJobGroup(GROUP, "doctor: where tasks run")
    try:
        spark.sparkContext.parallelize(range(STAGE_TASKS), STAGE_TASKS).mapPartitions(lambda rows: rows).collect()
    finally:
        spark.sparkContext.setLocalProperty("spark.jobGroup.id", None)  # type: ignore[arg-type]  # None removes it (the JVM's setLocalProperty); pyspark types only str
    ran = executors_of_job_group(spark, GROUP)
    if not ran:
        raise Failed(
            f"a stage of {STAGE_TASKS} tasks ran (master {master}), but Spark's status store did not say where"
        )
    if "driver" in ran:
        raise Failed(
            f"a stage of {STAGE_TASKS} tasks ran inside the driver (master {master}): every run would do "
            "its work in its driver while the executors stay idle; the job must keep the master "
            "spark-submit gives it"
        )
    return f"a stage of {STAGE_TASKS} tasks ran on executors {', '.join(ran)} (master {master})"


CHECKS = (Check("spark executors", executors, applies=lambda config: launched_by_spark_submit()),)
