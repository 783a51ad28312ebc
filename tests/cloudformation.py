"""CloudFormation's side of a custom resource, for tests: the endpoint its pre-signed ResponseURL points at, and
the events it sends the function."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, HTTPServer


@contextmanager
def response_endpoint() -> Iterator[tuple[str, list[dict]]]:
    """A local HTTP endpoint standing where the ResponseURL points: yields (url, the responses PUT to it)."""
    received: list[dict] = []

    class Responses(BaseHTTPRequestHandler):
        def do_PUT(self):  # noqa: N802 (http.server's naming)
            received.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", 0), Responses)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/response", received
    finally:
        server.shutdown()


def custom_resource_event(
    kind: str,
    url: str,
    properties: dict,
    resource_type: str,
    request_id: str = "r-1",
    physical_id: str | None = None,
    logical_id: str = "AdminConnectors",
    stack_id: str = "arn:aws:cloudformation:eu-west-1:1:stack/s/1",
) -> dict:
    """The event CloudFormation sends for a Create, Update or Delete (`kind`) of a custom resource."""
    event = {
        "RequestType": kind,
        "ResponseURL": url,
        "StackId": stack_id,
        "RequestId": request_id,
        "LogicalResourceId": logical_id,
        "ResourceType": resource_type,
        "ResourceProperties": properties,
    }
    if physical_id:
        event["PhysicalResourceId"] = physical_id
    return event
