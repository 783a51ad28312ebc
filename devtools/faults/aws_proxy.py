"""An HTTP proxy in front of moto's server that injects AWS faults into S3 and DynamoDB requests.

Clients point at it as they point at AWS (`AWS_ENDPOINT_URL`, Spark workers included). Every request is
matched against a rule table; the first rule that matches and fires decides its fate, else it is forwarded:

- `slowdown`: 503 SlowDown (S3) / 400 ThrottlingException (DynamoDB), not forwarded;
- `internal`: 500 InternalError (S3) / 500 InternalServerError (DynamoDB), not forwarded;
- `throttle`: 503 SlowDown (S3) / 400 ProvisionedThroughputExceededException (DynamoDB), not forwarded;
- `drop_before`: the connection is closed before the request is forwarded (nothing happened);
- `drop_after`: the request is forwarded, then the connection is closed instead of answering (the write
  happened, the client does not know);
- `txn_conflict` (DynamoDB TransactWriteItems only): 400 TransactionCanceledException whose CancellationReasons
  give `TransactionConflict` for the first item and `None` for the others, not forwarded: what DynamoDB answers
  when another write touches an item of the transaction while it runs (moto never does);
- `outage`: from the first matching request on (after `skip`), for `seconds`, every matching request is dropped
  unforwarded.

Requests are told apart by the service they are signed for; a rule matches a service (`s3`, `dynamodb`; others
are always forwarded), optionally an operation (S3: PutObject, GetObject, HeadObject,
CreateMultipartUpload, UploadPart, CompleteMultipartUpload, AbortMultipartUpload, ListMultipartUploads, ...,
told from the method and the query: `?uploads`, `?partNumber=`, `?uploadId=`; DynamoDB: the `X-Amz-Target`
action, PutItem, TransactWriteItems, ...) and optionally a substring `where` of the S3 path or the DynamoDB
request body (to aim at one key or item). It fires with `probability` (drawn from the proxy's seeded
random.Random), after letting `skip` matching requests through, at most `times` times. `injected` counts the
faults by kind, `forwarded` the requests that reached moto by (service, operation).
"""

from __future__ import annotations

import contextlib
import http.client
import json
import random
import socket
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

KINDS = ("slowdown", "internal", "throttle", "drop_before", "drop_after", "outage", "txn_conflict")
_HOP_BY_HOP = {
    "connection",
    "keep-alive",
    "proxy-connection",
    "transfer-encoding",
    "te",
    "trailer",
    "upgrade",
    "expect",
    "content-length",
}
_S3_ERRORS = {
    "slowdown": (503, "SlowDown", "Please reduce your request rate."),
    "throttle": (503, "SlowDown", "Please reduce your request rate."),
    "internal": (500, "InternalError", "We encountered an internal error. Please try again."),
}
_DYNAMODB_ERRORS = {
    "slowdown": (400, "ThrottlingException", "Rate of requests exceeds the allowed throughput."),
    "throttle": (
        400,
        "ProvisionedThroughputExceededException",
        "The level of configured provisioned throughput for the table was exceeded.",
    ),
    "internal": (500, "InternalServerError", "Internal server error"),
}


@dataclass
class Rule:
    kind: str
    service: str
    operation: str | None = None
    where: str | None = None
    probability: float = 1.0
    times: int | None = None
    skip: int = 0
    seconds: float = 0.0  # outage length
    fired: int = field(default=0, init=False)
    seen: int = field(default=0, init=False)
    outage_until: float | None = field(default=None, init=False)

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"unknown fault kind {self.kind!r}; one of {', '.join(KINDS)}")
        if self.service not in ("s3", "dynamodb"):
            raise ValueError(f"unknown service {self.service!r}; s3 or dynamodb")

    def matches(self, service: str, operation: str, where_text: str) -> bool:
        return (
            service == self.service
            and self.operation in (None, operation)
            and (self.where is None or self.where in where_text)
        )

    def fires(self, rand: random.Random, now: float) -> bool:
        """Called for a matching request, under the proxy's lock."""
        self.seen += 1
        if self.kind == "outage":
            if self.outage_until is None:
                if self.seen <= self.skip:
                    return False
                self.outage_until = now + self.seconds
            return now < self.outage_until
        if self.seen <= self.skip or (self.times is not None and self.fired >= self.times):
            return False
        if rand.random() >= self.probability:
            return False
        self.fired += 1
        return True


def s3_operation(method: str, path: str, query: dict) -> str:
    """The S3 API operation of a path-style request (bucket operations by their query)."""
    is_object = "/" in path.lstrip("/")
    if "uploads" in query:
        return "CreateMultipartUpload" if method == "POST" else "ListMultipartUploads"
    if "uploadId" in query:
        if "partNumber" in query:
            return "UploadPart"
        return {"POST": "CompleteMultipartUpload", "DELETE": "AbortMultipartUpload", "GET": "ListParts"}.get(
            method, "Multipart"
        )
    if "tagging" in query:
        return {"PUT": "PutObjectTagging", "GET": "GetObjectTagging"}.get(method, "Tagging")
    if "delete" in query and method == "POST":
        return "DeleteObjects"
    if not is_object:
        return {"GET": "ListObjects", "HEAD": "HeadBucket", "PUT": "CreateBucket"}.get(method, "Bucket")
    return {"PUT": "PutObject", "GET": "GetObject", "HEAD": "HeadObject", "DELETE": "DeleteObject"}.get(
        method, "Object"
    )


def _signed_service(authorization: str) -> str:
    """The service a SigV4 request is signed for (`Credential=<key>/<date>/<region>/<service>/aws4_request`)."""
    scope = authorization.partition("Credential=")[2].split(",", 1)[0].split("/")
    return scope[3] if len(scope) > 3 else ""


class AwsFaultProxy:
    """Context manager: a threaded proxy on `url` in front of `upstream` (moto's server URL)."""

    def __init__(self, upstream: str, seed: int = 0, port: int = 0, host: str = "127.0.0.1"):
        parts = urlsplit(upstream)
        assert parts.hostname is not None, f"{upstream} names no host"
        self._upstream = (parts.hostname, parts.port or 80)
        self.rules: list[Rule] = []
        self.injected: Counter = Counter()
        self.forwarded: Counter = Counter()
        self._lock = threading.Lock()
        self._random = random.Random(seed)
        self._server = ThreadingHTTPServer((host, port), _handler_class(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="aws-fault-proxy", daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.socket.getsockname()[:2]  # the bound address (server_address after bind)
        return f"http://{host}:{port}"

    def add(self, *rules: Rule) -> None:
        with self._lock:
            self.rules.extend(rules)

    def reset(self, seed: int) -> None:
        """Drop every rule and count, and reseed (between scenarios)."""
        with self._lock:
            self.rules.clear()
            self.injected.clear()
            self.forwarded.clear()
            self._random.seed(seed)

    def clear_rules(self) -> None:
        """The faults stop; counts are kept."""
        with self._lock:
            self.rules.clear()

    def __enter__(self) -> AwsFaultProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()

    def decide(self, service: str, operation: str, where_text: str) -> str | None:
        """The fault kind to inject into this request, or None to forward it."""
        with self._lock:
            now = time.monotonic()
            for rule in self.rules:
                if rule.matches(service, operation, where_text) and rule.fires(self._random, now):
                    self.injected[rule.kind] += 1
                    return rule.kind
            return None

    def count_forwarded(self, service: str, operation: str) -> None:
        with self._lock:
            self.forwarded[(service, operation)] += 1

    def forward(self, method: str, path: str, headers: list[tuple[str, str]], body: bytes):
        """Send the request to moto; returns (status, reason, headers, body)."""
        connection = http.client.HTTPConnection(*self._upstream, timeout=120)
        try:
            connection.request(method, path, body=body, headers=dict(headers) | {"Content-Length": str(len(body))})
            answer = connection.getresponse()
            return answer.status, answer.reason, answer.getheaders(), answer.read()
        finally:
            connection.close()


def _handler_class(proxy: AwsFaultProxy):
    class Handler(_ProxyHandler):
        pass

    Handler.proxy = proxy
    return Handler


class _ProxyHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, and `Expect: 100-continue` answered as S3 does
    proxy: AwsFaultProxy

    def log_message(self, *args) -> None:
        """Quiet: the proxy's own log would drown the test output."""

    def do_GET(self):
        self._handle()

    do_PUT = do_POST = do_DELETE = do_HEAD = do_PATCH = do_GET

    def _handle(self) -> None:
        body = self._read_body()
        service = _signed_service(self.headers.get("Authorization", ""))
        if service == "dynamodb":
            target = self.headers.get("X-Amz-Target", "")
            operation, where_text = target.rsplit(".", 1)[-1], body.decode("utf-8", "replace")
        else:
            split = urlsplit(self.path)
            query = parse_qs(split.query, keep_blank_values=True)
            operation, where_text = s3_operation(self.command, split.path, query), split.path
        fault = self.proxy.decide(service, operation, where_text)
        if fault in ("drop_before", "outage"):
            return self._drop()
        if fault in ("slowdown", "internal", "throttle"):
            return self._error(service, fault)
        if fault == "txn_conflict":
            return self._cancelled(body)
        headers = [(name, value) for name, value in self.headers.items() if name.lower() not in _HOP_BY_HOP]
        status, reason, answer_headers, answer = self.proxy.forward(self.command, self.path, headers, body)
        self.proxy.count_forwarded(service, operation)
        if fault == "drop_after":
            return self._drop()
        self.send_response(status, reason)
        length = None
        for name, value in answer_headers:
            if name.lower() == "content-length":
                length = value
            elif name.lower() not in _HOP_BY_HOP:
                self.send_header(name, value)
        # a HEAD answer keeps the object's length; any other carries exactly its body
        self.send_header("Content-Length", length if self.command == "HEAD" and length else str(len(answer)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(answer)

    def _read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks: list[bytes] = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline().strip():  # trailers
                        pass
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _drop(self) -> None:
        """Close the connection without a byte of answer."""
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)

    def _cancelled(self, body: bytes) -> None:
        """DynamoDB's TransactionCanceledException for a transaction that met a concurrent write, one reason per
        item in request order (API_TransactWriteItems: CancellationReasons)."""
        items = json.loads(body).get("TransactItems", [])
        reasons = [{"Code": "TransactionConflict", "Message": "Transaction is ongoing for the item"}]
        reasons += [{"Code": "None"}] * (len(items) - 1)
        codes = ", ".join(reason["Code"] for reason in reasons)
        self._send_json(
            400,
            {
                "__type": "com.amazonaws.dynamodb.v20120810#TransactionCanceledException",
                "Message": f"Transaction cancelled, please refer cancellation reasons for specific reasons [{codes}]",
                "CancellationReasons": reasons,
            },
        )

    def _send_json(self, status: int, document: dict) -> None:
        answer = json.dumps(document).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/x-amz-json-1.0")
        self.send_header("x-amzn-RequestId", "fault-proxy")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def _error(self, service: str, kind: str) -> None:
        if service == "s3":
            status, code, message = _S3_ERRORS[kind]
            body = (
                f'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>{code}</Code><Message>{message}</Message>'
                f"<RequestId>fault-proxy</RequestId></Error>"
            ).encode()
            content_type = "application/xml"
        else:
            status, code, message = _DYNAMODB_ERRORS[kind]
            body = f'{{"__type":"com.amazonaws.dynamodb.v20120810#{code}","message":"{message}"}}'.encode()
            content_type = "application/x-amz-json-1.0"
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("x-amzn-RequestId", "fault-proxy")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
