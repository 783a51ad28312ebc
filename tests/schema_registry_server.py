"""A minimal Confluent Schema Registry for tests: the REST endpoints that confluent-kafka's client calls to
register and look up AVRO, PROTOBUF and JSON schemas (with schema references) and that the sink's converters
call to read them, with basic auth.

Confluent's registry is Java (no Maven here) and Karapace is not installable from this machine's package
index, so this stands in. Schemas are registered through the real confluent-kafka client and records
are encoded with its real serializers; only the server side is this file. As in the real registry: ids are
global, versions per subject; the same schema (type, text and references) keeps its id across subjects and
its version under one subject; `schemaType` is answered for non-Avro schemas; `latest` names a subject's
newest version; `format=serialized` answers a PROTOBUF schema as a base64 FileDescriptorProto, compiled
from .proto text (with protoc, importing its references and the well-known types) when it was registered
as text. Differences: a PROTOBUF schema registered as a base64 descriptor (as the Python serializer does) is
answered as registered without `format=serialized`, where Confluent's registry prints it as .proto text;
no compatibility checks, no deletes, no contexts.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote

from google.protobuf import descriptor_pb2
from google.protobuf.message import DecodeError


class SchemaRegistryServer:
    def __init__(self, user_info: str | None = None):
        self.user_info = user_info
        self.entries: list[dict] = []  # id - 1 -> {"schema", "schemaType", "references"}
        self.subjects: dict[str, list[int]] = {}  # subject -> ids by version - 1
        self.requests: list[str] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> SchemaRegistryServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()

    def register(self, subject: str, text: str, references: list | None = None, schema_type: str = "AVRO") -> dict:
        """`references`: [{"name", "subject", "version"}] of schemas this one uses by name (Avro), by import
        path (Protobuf) or by `$ref` (JSON Schema)."""
        entry = {"schema": text, "schemaType": schema_type.upper(), "references": references or []}
        with self._lock:
            if entry not in self.entries:
                self.entries.append(entry)
            schema_id = self.entries.index(entry) + 1
            versions = self.subjects.setdefault(subject, [])
            if schema_id not in versions:
                versions.append(schema_id)
            return self.registered(subject, versions.index(schema_id) + 1)

    def lookup(self, subject: str, entry: dict) -> dict | None:
        """The subject's version of this schema, or None."""
        if entry not in self.entries or self.entries.index(entry) + 1 not in self.subjects.get(subject, []):
            return None
        return self.registered(subject, self.subjects[subject].index(self.entries.index(entry) + 1) + 1)

    def registered(self, subject: str, version: int, fmt: str | None = None) -> dict:
        schema_id = self.subjects[subject][version - 1]
        return {"id": schema_id, "subject": subject, "version": version, **self.schema(schema_id, fmt)}

    def schema(self, schema_id: int, fmt: str | None = None) -> dict:
        """The schema of an id as the registry answers it (`schemaType` only when not AVRO)."""
        entry = self.entries[schema_id - 1]
        answer = {"schema": entry["schema"], "references": entry["references"]}
        if entry["schemaType"] != "AVRO":
            answer["schemaType"] = entry["schemaType"]
        if entry["schemaType"] == "PROTOBUF" and fmt == "serialized":
            answer["schema"] = base64.b64encode(self._descriptor(entry).SerializeToString()).decode("ascii")
        return answer

    def versions_of(self, schema_id: int) -> list[dict]:
        return [
            {"subject": s, "version": ids.index(schema_id) + 1} for s, ids in self.subjects.items() if schema_id in ids
        ]

    def _descriptor(self, entry: dict, name: str = "schema.proto") -> descriptor_pb2.FileDescriptorProto:
        """A PROTOBUF schema as a FileDescriptorProto: parsed when registered serialized, else compiled."""
        from tests.protobuf_compiler import compile_files

        serialized = _serialized_descriptor(entry["schema"])
        if serialized is not None:
            return serialized
        imports = {}
        for reference in entry["references"]:
            imported = self.entries[self.subjects[reference["subject"]][reference["version"] - 1] - 1]
            imports[reference["name"]] = self._descriptor(imported, reference["name"])
        return compile_files({name: entry["schema"]}, imports)[name]


def _serialized_descriptor(text: str) -> descriptor_pb2.FileDescriptorProto | None:
    """The FileDescriptorProto of base64 text, or None when the text is not one (.proto text)."""
    try:
        return descriptor_pb2.FileDescriptorProto.FromString(base64.b64decode(text, validate=True))
    except (binascii.Error, DecodeError):
        return None


def _handler(registry: SchemaRegistryServer):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:  # keep test output quiet
            pass

        def do_GET(self) -> None:
            self._serve("GET")

        def do_POST(self) -> None:
            self._serve("POST")

        def _serve(self, method: str) -> None:
            path, _, query = self.path.partition("?")
            registry.requests.append(f"{method} {path}")
            if not self._authorized():
                return self._reply(401, {"error_code": 401, "message": "Unauthorized"})
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"null")
            params = {k: v[0] for k, v in parse_qs(query).items()}
            status, answer = _route(registry, method, path, params, body)
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


NOT_FOUND = (404, {"error_code": 40403, "message": "Schema not found"})


def _route(registry: SchemaRegistryServer, method: str, path: str, params: dict, body) -> tuple[int, object]:
    fmt = params.get("format")
    if method == "POST" and (m := re.fullmatch(r"/subjects/([^/]+)/versions", path)):
        registered = registry.register(
            unquote(m.group(1)), body["schema"], body.get("references"), body.get("schemaType", "AVRO")
        )
        return 200, registered
    if method == "POST" and (m := re.fullmatch(r"/subjects/([^/]+)", path)):
        entry = {
            "schema": body["schema"],
            "schemaType": body.get("schemaType", "AVRO").upper(),
            "references": body.get("references") or [],
        }
        found = registry.lookup(unquote(m.group(1)), entry)
        return (200, found) if found else NOT_FOUND
    if method == "GET" and (m := re.fullmatch(r"/schemas/ids/(\d+)(/versions)?", path)):
        schema_id = int(m.group(1))
        if not 0 < schema_id <= len(registry.entries):
            return NOT_FOUND
        if m.group(2):
            return 200, registry.versions_of(schema_id)
        return 200, registry.schema(schema_id, fmt)
    if method == "GET" and (m := re.fullmatch(r"/subjects/([^/]+)/versions/(\d+|latest)", path)):
        versions = registry.subjects.get(unquote(m.group(1)), [])
        version = len(versions) if m.group(2) == "latest" else int(m.group(2))
        if not 0 < version <= len(versions):
            return NOT_FOUND
        return 200, registry.registered(unquote(m.group(1)), version, fmt)
    if method == "GET" and path == "/subjects":
        return 200, sorted(registry.subjects)
    return 404, {"error_code": 404, "message": f"{method} {path} is not implemented by the test registry"}
