"""The backoff after failed runs and the client token, pure."""

import pytest

from lambdas.trigger.runs import Backoff, client_token

BACKOFF = Backoff(base_ms=60_000, cap_ms=3_600_000)


@pytest.mark.parametrize(
    "failures, wait_ms",
    [(0, 0), (1, 60_000), (2, 120_000), (3, 240_000), (6, 1_920_000), (7, 3_600_000), (500, 3_600_000)],
)
def test_the_wait_doubles_from_base_up_to_the_cap(failures, wait_ms):
    assert BACKOFF.delay_ms(failures) == wait_ms


def test_the_client_token_is_one_per_connector_and_attempt():
    assert client_token("orders", 1) == client_token("orders", 1)
    assert len({client_token("orders", 1), client_token("orders", 2), client_token("audit", 1)}) == 3
