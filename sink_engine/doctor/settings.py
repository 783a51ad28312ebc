"""What the doctor's checks read of the config, built once per doctor run (`Context.settings`) from the settings a
run builds: the checks reach each thing as the run would, so they read its keys through the same objects."""

from __future__ import annotations

from dataclasses import dataclass

from sink_engine.config import SinkConfig
from sink_engine.dlq.settings import DeadLetterSettings
from sink_engine.run.settings import RunSettings
from sink_engine.source.settings import SourceSettings
from sink_engine.storage.naming import ObjectNaming
from sink_engine.storage.object_options import ObjectOptions
from sink_engine.storage.s3 import S3Access


@dataclass(frozen=True)
class DoctorSettings:
    run: RunSettings  # the offsets table and its region, the bucket
    source: SourceSettings  # the Kafka cluster, the topics
    s3: S3Access  # the S3 client: region, endpoint, credentials (an assumed role), proxy
    object_options: ObjectOptions  # what objects are written with (SSE and its KMS key, ACL, tags)
    naming: ObjectNaming  # topics.dir, directory.delim
    dead_letters: DeadLetterSettings  # the dead-letter topic or S3 prefix

    @classmethod
    def from_config(cls, config: SinkConfig) -> DoctorSettings:
        return cls(
            RunSettings.from_config(config),
            SourceSettings.from_config(config),
            S3Access.from_config(config),
            ObjectOptions.from_config(config),
            ObjectNaming.from_config(config),
            DeadLetterSettings.from_config(config),
        )
