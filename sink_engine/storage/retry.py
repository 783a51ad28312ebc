"""Retries of S3 requests with exponential backoff and full jitter (`s3.part.retries`, `s3.retry.backoff.ms`)."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from botocore.exceptions import BotoCoreError, ClientError

T = TypeVar("T")
MAX_BACKOFF_MS = 20_000
_RETRYABLE_CODES = {
    "SlowDown",
    "Throttling",
    "ThrottlingException",
    "RequestTimeout",
    "RequestTimeTooSkewed",
    "InternalError",
    "ServiceUnavailable",
    "RequestLimitExceeded",
    "ConditionalRequestConflict",
}  # 409: a concurrent conditional write on the key (If-None-Match)


def is_retryable(error: Exception) -> bool:
    """Connection errors, throttling and 5xx answers are worth another try; other 4xx answers are not."""
    if isinstance(error, ClientError):
        status = error.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0)
        return status >= 500 or error.response.get("Error", {}).get("Code") in _RETRYABLE_CODES
    return isinstance(error, BotoCoreError)


def backoff_ms(attempt: int, base_ms: int, rand: Callable[[], float] = random.random) -> float:
    """Wait before retry number `attempt` (1-based): uniform in [0, min(cap, base * 2^(attempt-1)))."""
    return rand() * min(MAX_BACKOFF_MS, base_ms * 2 ** (attempt - 1))


@dataclass(frozen=True)
class RetryPolicy:
    retries: int = 3
    base_ms: int = 200
    sleep: Callable[[float], None] = time.sleep
    rand: Callable[[], float] = random.random

    def call(self, request: Callable[[], T]) -> T:
        """Run `request`, retrying retryable errors; the last error propagates."""
        attempt = 0
        while True:
            try:
                return request()
            except (ClientError, BotoCoreError) as e:
                attempt += 1
                if attempt > self.retries or not is_retryable(e):
                    raise
                self.sleep(backoff_ms(attempt, self.base_ms, self.rand) / 1000)
