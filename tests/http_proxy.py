"""A small forwarding HTTP proxy on 127.0.0.1 for tests: absolute-form requests (`GET http://host:port/path`) are
forwarded, CONNECT opens a tunnel; each request's method, target and Proxy-Authorization header are recorded."""

from __future__ import annotations

import http.client
import select
import socket
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

_HOP_BY_HOP = {"proxy-authorization", "proxy-connection", "connection", "keep-alive", "te", "trailer", "upgrade"}


@dataclass(frozen=True)
class Seen:
    method: str
    target: str
    proxy_authorization: str | None


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, *args) -> None:
        pass

    def _record(self) -> None:
        with self.server.lock:
            self.server.seen.append(Seen(self.command, self.path, self.headers.get("Proxy-Authorization")))

    def do_CONNECT(self) -> None:
        self._record()
        host, _, port = self.path.rpartition(":")
        upstream = socket.create_connection((host, int(port)))
        self.send_response(200, "Connection established")
        self.end_headers()
        sockets = [self.connection, upstream]
        while True:
            readable, _, _ = select.select(sockets, [], [], 10)
            if not readable:
                break
            for s in readable:
                data = s.recv(65536)
                if not data:
                    upstream.close()
                    return
                (upstream if s is self.connection else self.connection).sendall(data)

    def _forward(self) -> None:
        self._record()
        url = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP_BY_HOP}
        upstream = http.client.HTTPConnection(url.hostname, url.port or 80, timeout=30)
        upstream.request(self.command, url.path + (f"?{url.query}" if url.query else ""), body=body, headers=headers)
        answer = upstream.getresponse()
        payload = answer.read()
        self.send_response(answer.status, answer.reason)
        for key, value in answer.getheaders():
            if key.lower() not in _HOP_BY_HOP | {"content-length", "transfer-encoding"}:
                self.send_header(key, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)
        upstream.close()

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _forward


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.lock = threading.Lock()
        self.seen: list[Seen] = []


class Proxy:
    """Context manager: `url` is the proxy's http://127.0.0.1:<port>, `seen` what went through it."""

    def __enter__(self) -> Proxy:
        self._server = _Server()
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    @property
    def seen(self) -> list[Seen]:
        with self._server.lock:
            return list(self._server.seen)

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()
