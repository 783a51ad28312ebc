"""S3 objects in the format of `format.class` (the default target): a range's closed files are uploaded under
deterministic keys and are visible once uploaded, so the offsets commit is the whole commit; verify reads the
objects back."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TextIO

from sink_engine.aws_types import S3Client
from sink_engine.target.base import Target

if TYPE_CHECKING:
    from sink_engine.doctor.checks import Check
    from sink_engine.model import PartitionRange, TaskResult
    from sink_engine.offsets import OffsetStore
    from sink_engine.source.reader import RangeReader
    from sink_engine.storage.uploader import Uploader
    from sink_engine.task.output import RangeOutput
    from sink_engine.task.settings import TaskSettings


class S3ObjectsTarget(Target):
    writes_continuously = True

    def write_range(
        self,
        settings: TaskSettings,
        planned: PartitionRange,
        client: S3Client | None = None,
        progress_dir: str | None = None,
        reader: RangeReader | None = None,
        stop: Callable[[], bool] | None = None,
    ) -> TaskResult:
        from sink_engine.task.run import run_range

        return run_range(settings, planned, client, progress_dir, reader, stop)

    def stream_output(self, settings: TaskSettings, planned: PartitionRange, uploader: Uploader) -> RangeOutput:
        from sink_engine.task.object_output import ObjectOutput

        return ObjectOutput(settings, planned, uploader)

    def verify(
        self,
        store: OffsetStore,
        kafka: bool,
        topic: str | None,
        partition: int | None,
        out: TextIO,
        verbose: bool = False,
    ) -> int:
        from sink_engine.aws import S3Access, s3_client
        from sink_engine.verify.audit import audit
        from sink_engine.verify.report import print_report
        from sink_engine.verify.settings import VerifySettings

        config = self.config
        settings = VerifySettings.from_config(config)
        earliest = letters = None
        if kafka:
            from sink_engine.dlq.replay_sources import from_topic
            from sink_engine.source.metadata import partition_watermarks
            from sink_engine.source.settings import SourceSettings

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
        from sink_engine.doctor import s3

        return s3.OBJECT_CHECKS
