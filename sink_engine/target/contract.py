"""`Target`: what a run writes to, and the steps in which targets differ. A run's steps call these for every
target: its config checks, `sink-engine init`, a Spark task's write of a range, the driver's recovery and commit of
the tasks' results, `sink-engine verify` and the doctor's checks."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import TYPE_CHECKING, ClassVar, TextIO

from sink_engine.config import SinkConfig
from sink_engine.errors import ConfigError

if TYPE_CHECKING:
    from sink_engine.continuous.commits import CommitCoordinator, StreamCommits
    from sink_engine.doctor.checks import Check
    from sink_engine.model import PartitionRange, TaskResult
    from sink_engine.offsets import Leases, LeaseToken, OffsetStore
    from sink_engine.source.reader import RangeReader
    from sink_engine.storage.uploader import Uploader
    from sink_engine.task.output import RangeOutput
    from sink_engine.task.settings import TaskSettings


class Target(ABC):
    """Built from the connector's config (`registry.target_for`); it builds its own settings from it when needed.
    A target crosses to the Spark tasks as its class and config (`__reduce__`), so whatever it built on the driver
    is built again where the task runs (an Iceberg catalog's S3 endpoint is the worker's).

    Declared capabilities: `key_prefixes`, the config keys only this target reads (another target refuses them);
    `libraries`, distribution -> module that its runs import besides the engine's own (the doctor checks them);
    `writes_continuously`, whether a continuous run can write it (`stream_output`)."""

    key_prefixes: ClassVar[tuple[str, ...]] = ()
    writes_continuously: ClassVar[bool] = False  # implements `stream_output` (`sink-engine run --continuous`)
    libraries: ClassVar[dict[str, str]] = {}

    def __init__(self, config: SinkConfig):
        self.config = config

    def __reduce__(self):
        return type(self), (self.config,)

    def validate(self) -> None:
        """ConfigError naming the key of what this target cannot write (`validation.check_config`)."""

    def init(self) -> list[str]:
        """Create what this target's runs need besides the offsets table and the bucket, when missing (`sink-engine
        init`); a line per thing, saying whether it was created."""
        return []

    @abstractmethod
    def write_range(
        self,
        settings: TaskSettings,
        planned: PartitionRange,
        client=None,
        progress_dir: str | None = None,
        reader: RangeReader | None = None,
        stop: Callable[[], bool] | None = None,
    ) -> TaskResult:
        """A Spark task's side: write one planned range, as `sink_engine.task.run.write_to` does (never raises a
        SinkError; what the driver's `commit` needs beyond the offsets is the result's `target_result`; `stop` ends
        it early, task/deadline.py)."""

    def check_continuous(self) -> None:
        """ConfigError naming the key of what a continuous run cannot write of this target's (`writes_continuously`
        False: all of it)."""
        if not self.writes_continuously:
            raise ConfigError("format.class", f"{type(self).__name__} is not written by a continuous run (yet)")

    def stream_output(self, settings: TaskSettings, planned: PartitionRange, uploader: Uploader) -> RangeOutput:
        """A continuous run's side (sink_engine/continuous): the output one topic-partition's records go into for as
        long as the task runs, open from `planned.start_offset` (its end is open), committed each time its commit
        point moves. ConfigError when this target cannot be written continuously."""
        raise ConfigError("format.class", f"{type(self).__name__} cannot be written by a continuous run (yet)")

    @property
    def stream_cut_interval_ms(self) -> int:
        """A continuous run's wall-clock cuts: every open file closes on these boundaries (not positive: off)."""
        from sink_engine.run.wall_clock import WallClockCuts

        return WallClockCuts.from_config(self.config).schedule_ms

    def stream_commits(self, dynamodb, store: OffsetStore, token: LeaseToken, uploader: Uploader) -> StreamCommits:
        """A continuous run's task side of its commits: by default the offsets, once the files are uploaded."""
        from sink_engine.continuous.commits import OffsetCommits

        return OffsetCommits(store, token, uploader)

    def stream_coordinator(
        self, dynamodb, store: OffsetStore, leases: Leases, token: LeaseToken, clock: Callable[[], int]
    ) -> CommitCoordinator | None:
        """A continuous run's driver side of its commits (None: the tasks' commits are the whole commit)."""
        return None

    def recover(self, store: OffsetStore, token: LeaseToken, topics: set[str]) -> bool:
        """The driver, under the lease and before planning: move the committed offsets of `topics` forward to what
        this target committed before a run died; True when any moved (plan again)."""
        return False

    def commit(self, results: list[TaskResult], leases: Leases, token: LeaseToken, lease_ms: int) -> None:
        """The driver, once the tasks of a batch returned and before their offsets are committed: make what the
        results wrote part of the target, exactly once (a conflict with another run raises). Nothing to do where
        an upload is all it takes."""

    @abstractmethod
    def verify(
        self,
        store: OffsetStore,
        kafka: bool,
        topic: str | None,
        partition: int | None,
        out: TextIO,
        verbose: bool = False,
    ) -> int:
        """`sink-engine verify`: check from what is stored that every committed offset (of `topic`, `partition`)
        is in exactly one place, and print the report to `out`; the exit code (1: a finding). `kafka`: also read
        what only Kafka knows (earliest retained offsets, the dead-letter topic); `verbose`: list every object past
        the commit, not a few. ConfigError when this target cannot be verified."""

    def doctor_checks(self) -> tuple[Check, ...]:
        """The doctor's checks of what this target writes to."""
        return ()
