"""A minimal Confluent Schema Registry for tests: exactly the REST endpoints that confluent-kafka's client
calls to register Avro schemas and that the sink's AvroConverter calls to read them, with basic auth.

Confluent's registry is Java (no Maven here) and Karapace is not installable from this machine's package
index, so this stands in. Schemas are registered through the real confluent-kafka client and records
are encoded with its real AvroSerializer; only the server side is this file. Ids are global, versions
per subject, and the same schema text under one subject keeps its id and version, as in the real registry.
"""
from __future__ import annotations

import base64
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class SchemaRegistryServer:
    def __init__(self, user_info: str | None = None):
        self.user_info = user_info
        self.schemas: list[str] = []  # id - 1 -> schema text
        self.references: list[list] = []  # id - 1 -> the schema's references
        self.subjects: dict[str, list[int]] = {}  # subject -> ids by version - 1
        self.requests: list[str] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> "SchemaRegistryServer":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()

    def register(self, subject: str, text: str, references: list | None = None) -> dict:
        """`references`: [{"name", "subject", "version"}] of schemas this one uses by name."""
        with self._lock:
            if text not in self.schemas:
                self.schemas.append(text)
                self.references.append(references or [])
            schema_id = self.schemas.index(text) + 1
            versions = self.subjects.setdefault(subject, [])
            if schema_id not in versions:
                versions.append(schema_id)
            return self._registered(subject, versions.index(schema_id) + 1)

    def _registered(self, subject: str, version: int) -> dict:
        schema_id = self.subjects[subject][version - 1]
        return {"id": schema_id, "subject": subject, "version": version, "schema": self.schemas[schema_id - 1],
                "references": self.references[schema_id - 1]}

    def versions_of(self, schema_id: int) -> list[dict]:
        return [{"subject": s, "version": ids.index(schema_id) + 1} for s, ids in self.subjects.items()
                if schema_id in ids]


def _handler(registry: SchemaRegistryServer):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:  # keep test output quiet
            pass

        def do_GET(self) -> None:
            self._serve("GET")

        def do_POST(self) -> None:
            self._serve("POST")

        def _serve(self, method: str) -> None:
            path = self.path.split("?")[0]
            registry.requests.append(f"{method} {path}")
            if not self._authorized():
                return self._reply(401, {"error_code": 401, "message": "Unauthorized"})
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"null")
            status, answer = _route(registry, method, path, body)
            self._reply(status, answer)

        def _authorized(self) -> bool:
            if registry.user_info is None:
                return True
            expected = "Basic " + base64.b64encode(registry.user_info.encode()).decode()
            return self.headers.get("Authorization") == expected

        def _reply(self, status: int, answer) -> None:
            data = json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/vnd.schemaregistry.v1+json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler


def _route(registry: SchemaRegistryServer, method: str, path: str, body) -> tuple[int, object]:
    not_found = (404, {"error_code": 40403, "message": "Schema not found"})
    if method == "POST" and (m := re.fullmatch(r"/subjects/([^/]+)/versions", path)):
        return 200, registry.register(m.group(1), body["schema"], body.get("references"))
    if method == "POST" and (m := re.fullmatch(r"/subjects/([^/]+)", path)):
        if body["schema"] not in registry.schemas:
            return not_found
        found = registry.schemas.index(body["schema"]) + 1
        if found not in registry.subjects.get(m.group(1), []):
            return not_found
        return 200, registry.register(m.group(1), body["schema"])
    if method == "GET" and (m := re.fullmatch(r"/schemas/ids/(\d+)(/versions)?", path)):
        schema_id = int(m.group(1))
        if not 0 < schema_id <= len(registry.schemas):
            return not_found
        if m.group(2):
            return 200, registry.versions_of(schema_id)
        return 200, {"schema": registry.schemas[schema_id - 1], "references": registry.references[schema_id - 1]}
    if method == "GET" and (m := re.fullmatch(r"/subjects/([^/]+)/versions/(\d+)", path)):
        if not 0 < int(m.group(2)) <= len(registry.subjects.get(m.group(1), [])):
            return not_found
        return 200, registry._registered(m.group(1), int(m.group(2)))
    return 404, {"error_code": 404, "message": f"{method} {path} is not implemented by the test registry"}
