"""The target contract: what a run writes to. `Target` is what every target implements (a bounded run's steps);
`ContinuousTarget` and `VerifiedTarget` are opt-in interfaces for what only some targets do; `Capabilities` declares
which, as data, so that the CLI, `cdk synth` (infra/) and the trigger's connector index consult them before asking
(as dlt's `DestinationCapabilitiesContext`). A target never raises to say it cannot do something: it declares it.

A target's parts beyond these (its writer, output, commit sides, checks and settings) live in its folder,
`sink_engine/target/<target>/`; `choice.py` is the one place that chooses a connector's target."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar, TextIO

from sink_engine.aws_types import DynamoDBClient, S3Client
from sink_engine.config import SinkConfig
from sink_engine.errors import ConfigError
from sink_engine.run.wall_clock import WallClockCuts

if TYPE_CHECKING:
    from sink_engine.doctor.checks import Check
    from sink_engine.model import PartitionRange, TaskResult, TopicPartition
    from sink_engine.offsets import Leases, LeaseToken, OffsetStore
    from sink_engine.source.reader import RangeReader
    from sink_engine.storage.uploader import Uploader
    from sink_engine.task.output import StreamOutput
    from sink_engine.task.settings import TaskSettings
    from sink_engine.task.stream import PartitionStream


@dataclass(frozen=True)
class Capability:
    """One thing a target may do: `supported`, or not, with the key that decides it and why."""

    supported: bool
    key: str = "format.class"
    reason: str = ""

    def require(self) -> None:
        """For the caller that consults it: ConfigError naming the key, when unsupported."""
        if not self.supported:
            raise ConfigError(self.key, self.reason)


SUPPORTED = Capability(True)


@dataclass(frozen=True)
class Capabilities:
    """What a target declares. `key_prefixes`: the config keys only it reads (another target refuses them);
    `libraries`: distribution -> module its runs import besides the engine's own (the doctor checks them);
    `continuous`: a continuous run writes it (a `ContinuousTarget`); `verify`: `sink-engine verify` checks it (a
    `VerifiedTarget`); `tables`: it writes tables (`sink-engine iceberg maintain` applies, and its driver loads their
    metadata to commit: the trigger's index carries it, infra/connectors.py)."""

    key_prefixes: tuple[str, ...] = ()
    libraries: Mapping[str, str] = field(default_factory=dict)
    continuous: Capability = Capability(False, reason="is not written by a continuous run (yet)")
    verify: Capability = Capability(False, reason="is not checked by sink-engine verify")
    tables: bool = False


class Target(ABC):
    """Built from the connector's config (`choice.target_for`); it builds its own settings from it when needed.
    A target crosses to the Spark tasks as its class and config (`__reduce__`), so whatever it built on the driver
    is built again where the task runs (an Iceberg catalog's S3 endpoint is the worker's).

    `CAPABILITIES`: what the class declares; `capabilities`: what it can do with this connector's config (a config
    may take a capability away, never add one)."""

    CAPABILITIES: ClassVar[Capabilities] = Capabilities()

    def __init__(self, config: SinkConfig):
        self.config = config

    def __reduce__(self) -> tuple[type[Target], tuple[SinkConfig]]:
        return type(self), (self.config,)

    @property
    def capabilities(self) -> Capabilities:
        return self.CAPABILITIES

    def validate(self) -> None:
        """ConfigError naming the key of what this target cannot write (`validation.check_config`)."""

    def init(self) -> list[str]:
        """Create what this target's runs need besides the offsets table and the bucket, when missing (`sink-engine
        init`); a line per thing, saying whether it was created."""
        return []

    def describe(self) -> list[str]:
        """What the connector's config makes of this target that no single key says, a line each (`sink-engine
        validate` prints them after the keys); none by default."""
        return []

    @abstractmethod
    def write_range(
        self,
        settings: TaskSettings,
        planned: PartitionRange,
        client: S3Client | None = None,
        progress_dir: str | None = None,
        reader: RangeReader | None = None,
        stop: Callable[[], bool] | None = None,
    ) -> TaskResult:
        """A Spark task's side: write one planned range, as `sink_engine.task.run.write_to` does (never raises a
        SinkError; what the driver's `commit` needs beyond the offsets is the result's `target_result`; `stop` ends
        it early, task/deadline.py)."""

    def recover(self, store: OffsetStore, token: LeaseToken, topics: set[str]) -> bool:
        """The driver, under the lease and before planning: move the committed offsets of `topics` forward to what
        this target committed before a run died; True when any moved (plan again)."""
        return False

    def commit(self, results: list[TaskResult], leases: Leases, token: LeaseToken, lease_ms: int) -> None:
        """The driver, once the tasks of a batch returned and before their offsets are committed: make what the
        results wrote part of the target, exactly once (a conflict with another run raises). Nothing to do where
        an upload is all it takes."""

    def doctor_checks(self) -> tuple[Check, ...]:
        """The doctor's checks of what this target writes to."""
        return ()


class StreamCommits(ABC):
    """A continuous run's task side of its commits (`ContinuousTarget.stream_commits`). `commit` and `refresh`
    return True when the lease was lost (nothing more may be committed)."""

    def resume(self, tp: TopicPartition, expected: int | None) -> int | None:
        """Where `tp`'s stream starts when something after its committed offset `expected` is already on its way to
        being committed by an earlier attempt (None: from `expected`)."""
        return None

    def refresh(self, streams: Iterable[PartitionStream]) -> bool:
        """Settle what another process committed for these streams since the last look."""
        return False

    @abstractmethod
    def commit(self, streams: Iterable[PartitionStream], wait: bool) -> bool:
        """Commit (or hand on) what the streams closed since the last time, once its uploads are done. Without
        `wait`, nothing while an upload is under way (the next cycle does it: reading goes on meanwhile)."""


class CommitCoordinator(ABC):
    """A continuous run's driver side of its commits, called between its looks at the tasks; raises a SinkError
    that ends the run."""

    @abstractmethod
    def tick(self) -> None:
        """Commit what the tasks handed on, when it is time."""

    @abstractmethod
    def finish(self, budget_s: float) -> None:
        """The tasks ended: commit what they handed on, within `budget_s` seconds if at all."""


class ContinuousTarget(Target):
    """Opt-in: a target a continuous run writes (sink_engine/continuous; `capabilities.continuous`)."""

    @abstractmethod
    def stream_output(self, settings: TaskSettings, planned: PartitionRange, uploader: Uploader) -> StreamOutput:
        """The output one topic-partition's records go into for as long as the task runs, open from
        `planned.start_offset` (its end is open), committed each time its commit point moves."""

    @property
    def stream_cut_interval_ms(self) -> int:
        """The wall-clock cuts: every open file closes on these boundaries (not positive: off)."""
        return WallClockCuts.from_config(self.config).schedule_ms

    @abstractmethod
    def stream_commits(
        self, dynamodb: DynamoDBClient, store: OffsetStore, token: LeaseToken, uploader: Uploader
    ) -> StreamCommits:
        """The task side of the commits."""

    def stream_coordinator(
        self, dynamodb: DynamoDBClient, store: OffsetStore, leases: Leases, token: LeaseToken, clock: Callable[[], int]
    ) -> CommitCoordinator | None:
        """The driver side of the commits (None: the tasks' commits are the whole commit)."""
        return None


class VerifiedTarget(Target):
    """Opt-in: a target `sink-engine verify` checks (`capabilities.verify`)."""

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
        """Check from what is stored that every committed offset (of `topic`, `partition`) is in exactly one place,
        and print the report to `out`; the exit code (1: a finding). `kafka`: also read what only Kafka knows
        (earliest retained offsets, the dead-letter topic); `verbose`: list every object past the commit, not a
        few."""
