"""S3 objects in the format of `format.class` (the default target): a range's closed files are uploaded under
deterministic keys and are visible once uploaded, so the offsets commit is the whole commit; verify reads the
objects back. Its steps import pyarrow where they run: the DLQ replay Lambda validates configs without it."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TextIO

from sink_engine.aws import S3Access, s3_client
from sink_engine.aws_types import DynamoDBClient, S3Client
from sink_engine.dlq.replay_sources import from_topic
from sink_engine.source.metadata import partition_watermarks
from sink_engine.source.settings import SourceSettings
from sink_engine.target.contract import SUPPORTED, Capabilities, ContinuousTarget, VerifiedTarget
from sink_engine.target.s3_objects import doctor

if TYPE_CHECKING:
    from sink_engine.doctor.checks import Check
    from sink_engine.model import PartitionRange, TaskResult
    from sink_engine.offsets import LeaseToken, OffsetStore
    from sink_engine.source.reader import RangeReader
    from sink_engine.storage.uploader import Uploader
    from sink_engine.target.contract import StreamCommits
    from sink_engine.task.output import StreamOutput
    from sink_engine.task.settings import TaskSettings


class S3ObjectsTarget(ContinuousTarget, VerifiedTarget):
    CAPABILITIES = Capabilities(continuous=SUPPORTED, verify=SUPPORTED)

    def write_range(
        self,
        settings: TaskSettings,
        planned: PartitionRange,
        client: S3Client | None = None,
        progress_dir: str | None = None,
        reader: RangeReader | None = None,
        stop: Callable[[], bool] | None = None,
    ) -> TaskResult:
        from sink_engine.target.s3_objects.output import run_range  # imports pyarrow

        return run_range(settings, planned, client, progress_dir, reader, stop)

    def stream_output(self, settings: TaskSettings, planned: PartitionRange, uploader: Uploader) -> StreamOutput:
        from sink_engine.target.s3_objects.output import ObjectOutput  # imports pyarrow

        return ObjectOutput(settings, planned, uploader)

    def stream_commits(
        self, dynamodb: DynamoDBClient, store: OffsetStore, token: LeaseToken, uploader: Uploader
    ) -> StreamCommits:
        from sink_engine.target.s3_objects.stream_commits import OffsetCommits  # imports pyarrow

        return OffsetCommits(store, token, uploader)

    def verify(
        self,
        store: OffsetStore,
        kafka: bool,
        topic: str | None,
        partition: int | None,
        out: TextIO,
        verbose: bool = False,
    ) -> int:
        from sink_engine.target.s3_objects.verify.audit import audit  # imports pyarrow
        from sink_engine.target.s3_objects.verify.report import print_report  # imports pyarrow
        from sink_engine.target.s3_objects.verify.settings import VerifySettings  # imports pyarrow

        config = self.config
        settings = VerifySettings.from_config(config)
        earliest = letters = None
        if kafka:
            source = SourceSettings.from_config(config)
            earliest = {tp: low for tp, (low, _) in partition_watermarks(source).items()}
            letters = from_topic(source, settings.letters_topic) if settings.letters_topic else None
        result = audit(
            settings,
            s3_client(S3Access.from_config(config)),
            store.committed(config.name),
            earliest,
            topic,
            partition,
            letters,
        )
        return print_report(result, out, verbose)

    def doctor_checks(self) -> tuple[Check, ...]:
        return doctor.CHECKS
