"""The keys a continuous run reads itself, once (each seam's own keys are its settings'), and the Wallclock settings
it cannot follow."""

from __future__ import annotations

from dataclasses import dataclass

from sink_engine.config import SinkConfig
from sink_engine.errors import ConfigError
from sink_engine.partition.registry import TIME_BASED
from sink_engine.run.settings import RunSettings
from sink_engine.run.wall_clock import WallClockCuts


@dataclass(frozen=True)
class ContinuousSettings:
    run: RunSettings
    cuts: WallClockCuts  # rotate.schedule.interval.ms and timezone (rotate.interval.ms with Wallclock is refused)
    metrics_interval_ms: int  # sink.continuous.metrics.interval.ms

    @classmethod
    def from_config(cls, config: SinkConfig) -> ContinuousSettings:
        """ConfigError naming the key of a Wallclock setting a continuous run cannot follow: a bounded run fixes one
        wall-clock time per range, a continuous one has no range."""
        if config["timestamp.extractor"] == "wallclock" and config["partitioner.class"] in TIME_BASED:
            raise ConfigError(
                "timestamp.extractor",
                "Wallclock with a time-based partitioner is not supported by a continuous run (a bounded run fixes "
                "one wall-clock time per range); use Record or RecordField",
            )
        if config["timestamp.extractor"] == "wallclock" and config["rotate.interval.ms"] > 0:
            raise ConfigError(
                "rotate.interval.ms",
                "with timestamp.extractor=Wallclock is not supported by a continuous run; use "
                "rotate.schedule.interval.ms for wall-clock rotation",
            )
        return cls(
            RunSettings.from_config(config),
            WallClockCuts.from_config(config),
            config["sink.continuous.metrics.interval.ms"],
        )
