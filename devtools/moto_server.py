"""moto's server (`moto_server`'s arguments) with one emulator cost taken out: TransactWriteItems deep-copies a
whole table, for its rollback, once per item of the transaction instead of once per table (moto 5), so a
transaction of 99 offset commits on a table of N items copied 100 N items: a run over 1,000 partitions spent tens
of seconds in the emulator's commits that DynamoDB answers in milliseconds. Here each table is copied once per
transaction (the copies are taken before any item is applied, so they are all the same). Nothing else changes."""
from __future__ import annotations

import copy
import threading

import moto.dynamodb.models as dynamodb_models
from moto.dynamodb.models import DynamoDBBackend
from moto.dynamodb.models.table import Table
from moto.server import main


class _OneCopyPerTable:
    """Stands in for the `copy` module inside moto's DynamoDB backend: while a thread runs a transaction, a table
    is deep-copied once; everything else is copied as `copy.deepcopy` copies it."""

    def __init__(self):
        self._local = threading.local()

    def deepcopy(self, value, memo=None):
        copies = getattr(self._local, "tables", None)
        if copies is None or not isinstance(value, Table):
            return copy.deepcopy(value, memo)
        if id(value) not in copies:
            copies[id(value)] = copy.deepcopy(value, memo)
        return copies[id(value)]

    def transaction(self, run):
        def transact_write_items(backend, transact_items):
            self._local.tables = {}
            try:
                return run(backend, transact_items)
            finally:
                self._local.tables = None

        return transact_write_items


def patch() -> None:
    shim = _OneCopyPerTable()
    dynamodb_models.copy = shim
    DynamoDBBackend.transact_write_items = shim.transaction(DynamoDBBackend.transact_write_items)


if __name__ == "__main__":
    patch()
    main()
