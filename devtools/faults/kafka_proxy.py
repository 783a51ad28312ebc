"""A TCP proxy in front of a Kafka broker that injects network faults: reset, stall, outage.

The broker must advertise the proxy's address (devtools/kafka_broker.py: `advertised_port`),
so that every connection a client opens after bootstrap goes through the proxy too. One thread runs a selector
loop over every connection; faults are commands to that loop, applied now or once the broker has sent a given
number of bytes to the clients (a point mid-run that does not depend on timing):

- `reset`: every open connection is reset (RST, as when a broker restarts); new ones are accepted.
- `stall`: no byte moves in either direction (connections stay open, bytes are held) until `resume` or the
  fault's duration ends; connections opened meanwhile are stalled too.
- `outage`: connections are reset and new ones refused (the port is closed) until `resume` or the duration ends.
"""

from __future__ import annotations

import collections
import contextlib
import selectors
import socket
import struct
import threading
import time
from collections.abc import Callable

KINDS = ("reset", "stall", "outage")
CHUNK = 65536
HELD_MAX = 1 << 20  # bytes buffered per direction before the proxy stops reading (back-pressure)


class _Pipe:
    """One client connection and its broker connection, with the bytes read but not yet written each way."""

    def __init__(self, client: socket.socket, broker: socket.socket):
        self.client, self.broker = client, broker
        self.to_broker, self.to_client = bytearray(), bytearray()

    def peer_of(self, sock: socket.socket) -> tuple[socket.socket, bytearray]:
        return (self.broker, self.to_broker) if sock is self.client else (self.client, self.to_client)

    def pending_for(self, sock: socket.socket) -> bytearray:
        return self.to_client if sock is self.client else self.to_broker


class KafkaProxy:
    """Context manager. `port` is where clients connect; `upstream` is the broker's (host, port).

    `injected` counts the faults applied by kind and `history` lists them as (time.monotonic(), kind);
    `bytes_to_clients` counts what the broker sent through the proxy."""

    def __init__(self, upstream: tuple[str, int], port: int = 0, host: str = "127.0.0.1"):
        self.upstream, self.host = upstream, host
        self.injected: collections.Counter = collections.Counter()
        self.history: list[tuple[float, str]] = []
        self.bytes_to_clients = 0
        self._port = port
        self._selector = selectors.DefaultSelector()
        self._listener: socket.socket | None = None
        self._pipes: dict[socket.socket, _Pipe] = {}
        self._commands: list[Callable[[], None]] = []
        self._timers: list[tuple[float, Callable[[], None]]] = []
        self._triggers: list[tuple[int, Callable[[], None]]] = []
        self._lock = threading.Lock()
        self._wake_r, self._wake_w = socket.socketpair()
        self._stalled = self._down = self._stopping = False
        self._thread = threading.Thread(target=self._loop, name="kafka-proxy", daemon=True)

    @property
    def port(self) -> int:
        return self._port

    @property
    def address(self) -> str:
        return f"{self.host}:{self._port}"

    def start(self) -> KafkaProxy:
        self._selector.register(self._wake_r, selectors.EVENT_READ)
        self._open_listener()
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping = True
        self._wake()
        self._thread.join(timeout=5)

    def __enter__(self) -> KafkaProxy:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def inject(self, kind: str, seconds: float | None = None, after_bytes: int = 0) -> None:
        """Apply fault `kind` now, or once `after_bytes` more bytes went from the broker to the clients.

        A stall or outage ends after `seconds` (None: until `resume`); a reset is instantaneous."""
        if kind not in KINDS:
            raise ValueError(f"unknown fault {kind!r}; expected one of {', '.join(KINDS)}")

        def apply() -> None:
            self.injected[kind] += 1
            self.history.append((time.monotonic(), kind))
            getattr(self, f"_{kind}")()
            if seconds is not None and kind != "reset":
                self._timers.append((time.monotonic() + seconds, self._resume))

        with self._lock:
            if after_bytes > 0:
                self._triggers.append((self.bytes_to_clients + after_bytes, apply))
            else:
                self._commands.append(apply)
        self._wake()

    def resume(self) -> None:
        """End a stall or an outage now."""
        with self._lock:
            self._commands.append(self._resume)
        self._wake()

    def clear(self) -> None:
        """Drop the faults armed for later and end any stall or outage now."""
        with self._lock:
            self._triggers.clear()
            self._commands.append(self._timers.clear)
            self._commands.append(self._resume)
        self._wake()

    # --- the loop thread ----------------------------------------------------------------------------------------

    def _loop(self) -> None:
        try:
            while not self._stopping:
                self._register_interest()
                for key, events in self._selector.select(timeout=self._next_timeout()):
                    sock = key.fileobj
                    if sock is self._wake_r:
                        self._wake_r.recv(4096)
                    elif sock is self._listener:
                        self._accept()
                    elif sock in self._pipes:
                        self._service(sock, events)
                self._run_due()
        finally:
            for sock in list(self._pipes):
                self._close(sock, reset=True)
            self._close_listener()
            self._selector.close()
            self._wake_r.close()
            self._wake_w.close()

    def _next_timeout(self) -> float:
        if not self._timers:
            return 0.5
        return max(0.0, min(t for t, _ in self._timers) - time.monotonic())

    def _run_due(self) -> None:
        now = time.monotonic()
        with self._lock:
            due, self._commands = self._commands, []
            fired = [action for threshold, action in self._triggers if self.bytes_to_clients >= threshold]
            self._triggers = [(t, a) for t, a in self._triggers if self.bytes_to_clients < t]
        due += fired + [action for deadline, action in self._timers if deadline <= now]
        self._timers = [(deadline, action) for deadline, action in self._timers if deadline > now]
        for action in due:
            action()

    def _register_interest(self) -> None:
        for sock, pipe in self._pipes.items():
            peer, outgoing = pipe.peer_of(sock)
            events = 0
            if not self._stalled:
                if len(outgoing) < HELD_MAX:
                    events |= selectors.EVENT_READ
                if pipe.pending_for(sock):
                    events |= selectors.EVENT_WRITE
            self._set_interest(sock, events)

    def _set_interest(self, sock: socket.socket, events: int) -> None:
        registered = self._selector.get_map().get(sock)
        if registered is None and events:
            self._selector.register(sock, events)
        elif registered is not None and not events:
            self._selector.unregister(sock)
        elif registered is not None and registered.events != events:
            self._selector.modify(sock, events)

    def _accept(self) -> None:
        assert self._listener is not None  # the selector found it readable
        try:
            client, _ = self._listener.accept()
        except (BlockingIOError, OSError):
            return
        try:
            broker = socket.create_connection(self.upstream, timeout=5)
        except OSError:
            _reset(client)
            return
        for sock in (client, broker):
            sock.setblocking(False)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        pipe = _Pipe(client, broker)
        self._pipes[client] = self._pipes[broker] = pipe

    def _service(self, sock: socket.socket, events: int) -> None:
        pipe = self._pipes[sock]
        if events & selectors.EVENT_WRITE:
            pending = pipe.pending_for(sock)
            try:
                sent = sock.send(pending)
            except (BlockingIOError, InterruptedError):
                sent = 0
            except OSError:
                return self._close(sock, reset=True)
            if sock is pipe.client:
                self.bytes_to_clients += sent
            del pending[:sent]
        if events & selectors.EVENT_READ and sock in self._pipes:
            try:
                data = sock.recv(CHUNK)
            except (BlockingIOError, InterruptedError):
                return None
            except OSError:
                return self._close(sock, reset=True)
            if not data:
                return self._close(sock, reset=False)
            pipe.peer_of(sock)[1].extend(data)
        return None

    def _close(self, sock: socket.socket, reset: bool) -> None:
        pipe = self._pipes.get(sock)
        if pipe is None:
            return
        for end in (pipe.client, pipe.broker):
            self._pipes.pop(end, None)
            if end in self._selector.get_map():
                self._selector.unregister(end)
            _reset(end) if reset else end.close()

    def _open_listener(self) -> None:
        """Listen on the proxy's port (the same one again after an outage: the broker advertises it)."""
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        for attempt in range(50):  # after an outage, a connection of the old listener may hold the port briefly
            try:
                listener.bind((self.host, self._port))
                break
            except OSError:
                if attempt == 49:
                    listener.close()
                    raise
                time.sleep(0.1)
        listener.listen(64)
        listener.setblocking(False)
        self._port = listener.getsockname()[1]
        self._listener = listener
        self._selector.register(listener, selectors.EVENT_READ)

    def _close_listener(self) -> None:
        if self._listener is not None:
            if self._listener in self._selector.get_map():
                self._selector.unregister(self._listener)
            self._listener.close()
            self._listener = None

    def _reset(self) -> None:
        for sock in list(self._pipes):
            self._close(sock, reset=True)

    def _stall(self) -> None:
        self._stalled = True

    def _outage(self) -> None:
        self._down = True
        self._close_listener()
        self._reset()

    def _resume(self) -> None:
        self._stalled = False
        if self._down:
            self._down = False
            self._open_listener()

    def _wake(self) -> None:
        with contextlib.suppress(OSError):
            self._wake_w.send(b"x")


def _reset(sock: socket.socket) -> None:
    """Close with an RST (linger 0), as a crashed peer would, not with an orderly FIN."""
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()
