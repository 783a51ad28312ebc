"""S3 objects in the format of `format.class` (the default target): a range's closed files are uploaded under
deterministic keys and are visible once uploaded, so the offsets commit is the whole commit; verify reads the
objects back."""

from __future__ import annotations

from typing import TextIO

from sink_engine.target.contract import Target


class S3ObjectsTarget(Target):
    writes_continuously = True

    def write_range(self, settings, planned, client=None, progress_dir=None, reader=None, stop=None):
        from sink_engine.task.run import run_range

        return run_range(settings, planned, client, progress_dir, reader, stop)

    def stream_output(self, settings, planned, uploader):
        from sink_engine.target.s3_objects.output import ObjectOutput

        return ObjectOutput(settings, planned, uploader)

    def verify(
        self, store, kafka: bool, topic: str | None, partition: int | None, out: TextIO, verbose: bool = False
    ) -> int:
        from sink_engine.aws import S3Access, s3_client
        from sink_engine.target.s3_objects.verify.audit import audit
        from sink_engine.target.s3_objects.verify.report import print_report
        from sink_engine.target.s3_objects.verify.settings import VerifySettings

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

    def doctor_checks(self):
        from sink_engine.doctor import s3

        return s3.OBJECT_CHECKS
