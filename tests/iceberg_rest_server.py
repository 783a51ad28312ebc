"""A minimal Iceberg REST catalog for tests: the endpoints of the Iceberg REST Catalog OpenAPI spec that
pyiceberg's RestCatalog calls to write a table (config; namespaces create, load, exists; tables create, staged
create, load, exists, commit), over a pyiceberg SqlCatalog that keeps the tables (SQLite, files in moto's S3).

S3 Tables' Iceberg REST endpoint is AWS's (no local build); this stands in for it the way
tests/schema_registry_server.py stands in for Confluent's registry. Requests are parsed with pyiceberg's own
models of the spec (CreateTableRequest, CommitTableRequest) and answered with its response models (TableResponse,
CommitTableResponse); a commit's requirements and updates are applied by SqlCatalog.commit_table, so a failed
requirement (a stale base) is answered 409 as the spec says. Authorization headers are recorded, not verified
(S3 Tables checks the SigV4 signature against IAM). Not served: listing, drops, renames, views, scan planning.
"""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote

from pyiceberg.catalog import Catalog
from pyiceberg.catalog.rest import CreateTableRequest, TableResponse
from pyiceberg.exceptions import (
    CommitFailedException,
    NamespaceAlreadyExistsError,
    NoSuchNamespaceError,
    NoSuchTableError,
    TableAlreadyExistsError,
)
from pyiceberg.table import CommitTableRequest

NAMESPACE_SEPARATOR = "\x1f"  # pyiceberg's default, as the spec's multi-level namespaces are sent
_ROUTES = (
    ("namespaces", re.compile(r"/v1/namespaces")),
    ("namespace", re.compile(r"/v1/namespaces/(?P<namespace>[^/]+)")),
    ("tables", re.compile(r"/v1/namespaces/(?P<namespace>[^/]+)/tables")),
    ("table", re.compile(r"/v1/namespaces/(?P<namespace>[^/]+)/tables/(?P<table>[^/]+)")),
    ("config", re.compile(r"/v1/config")),
)
_ERRORS = {
    NoSuchNamespaceError: 404,
    NoSuchTableError: 404,
    NamespaceAlreadyExistsError: 409,
    TableAlreadyExistsError: 409,
    CommitFailedException: 409,
}


class IcebergRestServer:
    def __init__(self, catalog: Catalog):
        self.catalog = catalog
        self.authorizations: list[str] = []  # every request's Authorization header ("" when none)
        self.refused_commits: list[str] = []  # the 409 messages of commits whose requirements failed
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> IcebergRestServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()

    def answer(self, method: str, path: str, body: bytes) -> tuple[int, dict | None]:
        """(status, JSON body) of one request; a pyiceberg error becomes the spec's error response."""
        for route, pattern in _ROUTES:
            if match := pattern.fullmatch(path):
                handle = getattr(self, f"_{method.lower()}_{route}", None)
                if handle is None:
                    return _error(405, "NotImplemented", f"{method} {path}")
                try:
                    return handle(body, **{k: unquote(v) for k, v in match.groupdict().items()})
                except tuple(_ERRORS) as e:
                    if isinstance(e, CommitFailedException):
                        self.refused_commits.append(str(e))
                    return _error(_ERRORS[type(e)], type(e).__name__, str(e))
                except Exception as e:  # the client sees the server's fault as the spec's 500
                    return _error(500, type(e).__name__, repr(e))
        return _error(404, "NotFound", path)

    def _get_config(self, body: bytes):
        return 200, {"defaults": {}, "overrides": {}}

    def _post_namespaces(self, body: bytes):
        request = json.loads(body)
        self.catalog.create_namespace(tuple(request["namespace"]), request.get("properties", {}))
        return 200, {"namespace": request["namespace"], "properties": request.get("properties", {})}

    def _get_namespace(self, body: bytes, namespace: str):
        properties = self.catalog.load_namespace_properties(_namespace(namespace))
        return 200, {"namespace": list(_namespace(namespace)), "properties": properties}

    def _head_namespace(self, body: bytes, namespace: str):
        return (204 if self.catalog.namespace_exists(_namespace(namespace)) else 404), None

    def _post_tables(self, body: bytes, namespace: str):
        """Create a table, or with `stage-create` only its first metadata (the commit that follows creates it)."""
        # the spec's optional fields; pyiceberg's client leaves them out when unset, its model declares no default
        request = CreateTableRequest.model_validate(
            {"location": None, "partition-spec": None, "write-order": None, **json.loads(body)}
        )
        identifier = (*_namespace(namespace), request.name)
        if not self.catalog.namespace_exists(_namespace(namespace)):
            raise NoSuchNamespaceError(f"Namespace does not exist: {namespace}")
        if self.catalog.table_exists(identifier):
            raise TableAlreadyExistsError(f"Table already exists: {'.'.join(identifier)}")
        create = self.catalog._create_staged_table if request.stage_create else self.catalog.create_table
        table = create(
            identifier,
            request.table_schema,
            request.location,
            request.partition_spec,
            request.write_order,
            request.properties,
        )
        location = None if request.stage_create else table.metadata_location
        return 200, _dump(TableResponse(metadata_location=location, metadata=table.metadata))

    def _get_table(self, body: bytes, namespace: str, table: str):
        loaded = self.catalog.load_table((*_namespace(namespace), table))
        return 200, _dump(TableResponse(metadata_location=loaded.metadata_location, metadata=loaded.metadata))

    def _head_table(self, body: bytes, namespace: str, table: str):
        return (204 if self.catalog.table_exists((*_namespace(namespace), table)) else 404), None

    def _post_table(self, body: bytes, namespace: str, table: str):
        """Apply a commit's updates if its requirements hold against the table as stored (409 otherwise)."""
        request = CommitTableRequest.model_validate_json(body)
        identifier = (*_namespace(namespace), table)  # the path names the table (the body's identifier may not)
        response = self.catalog.commit_table(_Named(identifier), request.requirements, request.updates)
        return 200, _dump(response)


class _Named:
    """What SqlCatalog.commit_table reads of its table argument (it loads the stored table itself): the name."""

    def __init__(self, identifier: tuple[str, ...]):
        self._identifier = identifier

    def name(self) -> tuple[str, ...]:
        return self._identifier


def _namespace(path_part: str) -> tuple[str, ...]:
    return tuple(path_part.split(NAMESPACE_SEPARATOR))


def _dump(model) -> dict:
    return json.loads(model.model_dump_json())


def _error(code: int, kind: str, message: str) -> tuple[int, dict]:
    return code, {"error": {"message": message, "type": kind, "code": code}}


def _handler(server: IcebergRestServer):
    class Handler(BaseHTTPRequestHandler):
        def _serve(self) -> None:
            server.authorizations.append(self.headers.get("Authorization", ""))
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            status, answer = server.answer(self.command, self.path.split("?")[0], body)
            payload = json.dumps(answer).encode() if answer is not None else b""
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(payload)

        do_GET = do_POST = do_HEAD = do_DELETE = _serve

        def log_message(self, *args) -> None:
            pass

    return Handler
