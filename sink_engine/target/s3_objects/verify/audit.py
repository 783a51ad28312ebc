"""Gather a connector's objects, dead letters and commits per topic-partition and check each one's coverage."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from sink_engine.aws_types import S3Client
from sink_engine.dlq.letter import DeadLetter
from sink_engine.model import CommittedOffset, TopicPartition
from sink_engine.target.s3_objects.verify.counters import RecordCounter
from sink_engine.target.s3_objects.verify.coverage import Commit, Coverage, Entry, Letter, check
from sink_engine.target.s3_objects.verify.listing import Lister
from sink_engine.target.s3_objects.verify.settings import VerifySettings


@dataclass(frozen=True)
class Audit:
    partitions: dict[TopicPartition, Coverage]
    requests: int  # S3 requests made
    objects: int  # data objects listed


def audit(
    settings: VerifySettings,
    s3: S3Client,
    committed: dict[TopicPartition, CommittedOffset],
    earliest: dict[TopicPartition, int] | None = None,
    topic: str | None = None,
    partition: int | None = None,
    topic_letters: Iterable[DeadLetter] | None = None,
) -> Audit:
    """Check every committed topic-partition (or those of `topic`, `partition`), and the partitions that have
    objects but no commit. With `--kafka`: `earliest`, the topics' earliest retained offsets, the lowest offset
    to check where the commit does not know its first offset; `topic_letters`, the connector's dead letters read
    from its dead-letter topic."""

    def wanted(tp: TopicPartition) -> bool:
        return (topic is None or tp.topic == topic) and (partition is None or tp.partition == partition)

    lister = Lister(s3, settings.bucket)
    counter = RecordCounter(s3, settings.bucket, settings.formats, settings.tagged)
    committed = {tp: c for tp, c in committed.items() if wanted(tp)}
    topics = sorted({tp.topic for tp in committed} | ({topic} if topic else set()))
    objects, letters = _stored(settings, lister, topics, topic_letters, wanted)
    readable = settings.letters is not None or not settings.letters_topic or topic_letters is not None
    found = {}
    for tp in sorted(set(committed) | set(objects) | set(letters)):
        entry = committed.get(tp) or CommittedOffset(0, 0, None, first_offset=0)  # no commit: nothing to check
        commit = Commit(
            entry.next_offset, entry.first_offset, sum(entry.dead_letters.values()), sum(entry.skipped.values())
        )
        entries = [
            counter.entry(obj) if obj.start_offset < commit.next_offset else Entry(obj.key, obj.start_offset, 0)
            for obj in objects.get(tp, [])
        ]
        found[tp] = check(
            entries, letters.get(tp, []) if readable else None, commit, settings.contiguous, (earliest or {}).get(tp)
        )
    return Audit(found, lister.requests + counter.requests, sum(len(v) for v in objects.values()))


def _stored(
    settings: VerifySettings,
    lister: Lister,
    topics: list[str],
    topic_letters: Iterable[DeadLetter] | None,
    wanted: Callable[[TopicPartition], bool],
) -> tuple[dict, dict]:
    """The data objects and the dead letters of the wanted topic-partitions, by topic-partition."""
    objects: dict[TopicPartition, list] = {}
    letters: dict[TopicPartition, list] = {}
    for name in topics:
        for obj in lister.data_objects(settings.naming, settings.folder_of(name), settings.extension):
            if obj.topic == name and wanted(TopicPartition(name, obj.partition)):
                objects.setdefault(TopicPartition(name, obj.partition), []).append(obj)
        if settings.letters is not None:
            for letter_topic, letter_partition, letter in lister.letters(settings.letters, name):
                if letter_topic == name and wanted(TopicPartition(name, letter_partition)):
                    letters.setdefault(TopicPartition(name, letter_partition), []).append(letter)
    for dead in topic_letters or []:
        if wanted(TopicPartition(dead.topic, dead.partition)):
            letters.setdefault(TopicPartition(dead.topic, dead.partition), []).append(
                Letter(f"topic {settings.letters_topic}", dead.offset)
            )
    return objects, letters
