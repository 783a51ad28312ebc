"""Every config error of one pass: checks that do not depend on each other each run, and the errors they raise
are reported together (`ConfigErrors`), so that `validate` lists them all at once."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sink_engine.errors import ConfigError, ConfigErrors


class Collector:
    """Collects the ConfigErrors raised inside `check()` blocks; `raise_found()` raises them."""

    def __init__(self) -> None:
        self.errors: list[ConfigError] = []

    @contextmanager
    def check(self) -> Iterator[None]:
        try:
            yield
        except ConfigErrors as e:
            self.errors.extend(e.errors)
        except ConfigError as e:
            self.errors.append(e)

    def raise_found(self) -> None:
        """Nothing when no check failed; the one error; or ConfigErrors with all of them, in order."""
        if len(self.errors) == 1:
            raise self.errors[0]
        if self.errors:
            raise ConfigErrors(self.errors)
