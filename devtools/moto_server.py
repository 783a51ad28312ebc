"""moto's server (`moto_server`'s arguments) with one emulator cost taken out: TransactWriteItems deep-copies a
whole table, for its rollback, once per item of the transaction instead of once per table (moto 5), so a
transaction of 99 offset commits on a table of N items copied 100 N items: a run over 1,000 partitions spent tens
of seconds in the emulator's commits that DynamoDB answers in milliseconds. Here each table is copied once per
transaction (the copies are taken before any item is applied, so they are all the same).

And one difference from DynamoDB: moto applies an UpdateItem to the stored item in place, creating a missing item
with its key alone first and then setting its attributes, so a Query or GetItem served meanwhile by another thread
sees an item without its attributes (a poll of committed offsets met an `OFFSET#` item with no `topic`). DynamoDB
applies an item's write whole, and a read never sees part of one (read-committed isolation, "Isolation levels for
DynamoDB transactions", https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html).
Here DynamoDB's item operations run one at a time (docs/aws-fidelity.md).

And one fault of moto's own state API (`/moto-api/data.json`, which tests read EMR Serverless job runs back
through, docs/aws-fidelity.md): it leaves out attributes that are not JSON but fails whole (500) on one that raises
while read, as an S3 part's `status` does once a multipart upload has been served. Here such an attribute is left
out too. No AWS API answers differently."""

from __future__ import annotations

import copy
import json
import threading

import moto.dynamodb.models as dynamodb_models
from moto.dynamodb.models import DynamoDBBackend
from moto.dynamodb.models.table import Table
from moto.moto_api._internal.responses import MotoAPIResponse
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


def _model_data(self, request, full_url, headers):
    """moto's `/moto-api/data.json`: every tracked instance of every model, its public JSON attributes; an attribute
    whose reading raises is left out (moto's own answers 500)."""
    from moto.core.model_instances import model_data

    results = {}
    for service, models in sorted(model_data.items()):
        # moto types its registry's values as object; they are model classes tracking their instances
        results[service] = {
            name: [_json_attributes(instance) for instance in model.instances_tracked]  # type: ignore[attr-defined]
            for name, model in sorted(models.items())
        }
    return 200, {"Content-Type": "application/javascript"}, json.dumps(results)


def _json_attributes(instance) -> dict:
    found = {}
    for name in dir(instance):
        if name.startswith("_"):
            continue
        try:
            value = getattr(instance, name)
            json.dumps(value)
        except Exception:  # noqa: BLE001 - not JSON, or a property that fails on this instance's state
            continue
        found[name] = value
    return found


# DynamoDB's operations on items, each run whole before another starts (the module docstring)
# (moto serves the batch and TransactGetItems operations through these)
ITEM_OPERATIONS = ("get_item", "put_item", "update_item", "delete_item", "query", "scan", "transact_write_items")


def one_at_a_time(backend: type) -> dict:
    """The backend's ITEM_OPERATIONS, each run under one reentrant lock (a transaction's items go through the
    single-item operations): name -> the wrapped method, to set on the backend class."""
    lock = threading.RLock()

    def wrapped(operation):
        def run(*args, **kwargs):
            with lock:
                return operation(*args, **kwargs)

        return run

    return {name: wrapped(getattr(backend, name)) for name in ITEM_OPERATIONS}


def patch() -> None:
    """Patch moto's server in this process (what the module docstring lists): its data endpoint, DynamoDB's copies
    of tables, and its item operations one at a time."""
    MotoAPIResponse.model_data = _model_data  # type: ignore[method-assign]
    shim = _OneCopyPerTable()
    dynamodb_models.copy = shim  # type: ignore[assignment]  # the module's `copy` global, replaced by the shim
    DynamoDBBackend.transact_write_items = shim.transaction(  # type: ignore[method-assign]
        DynamoDBBackend.transact_write_items
    )
    for name, operation in one_at_a_time(DynamoDBBackend).items():
        setattr(DynamoDBBackend, name, operation)


if __name__ == "__main__":
    patch()
    main()
