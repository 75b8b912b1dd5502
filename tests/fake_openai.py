"""A fake OpenAI-compatible chat-completions server on loopback, for the selector tests.

Real sockets (the stdlib's threading HTTP server), so the client under test
does real connects, sends, waits and hang-ups. Each test sets a
:class:`Behaviour` (delay before answering, status, the answer or a raw body)
and reads back what the server saw: every request's body and headers, and
whether a client hung up while the server was still delaying its answer.

The delay is a wait on the client's socket, not a sleep: if the client closes
the connection the server notices at once and records the disconnect. A client
that hangs up before its request is read (a short timeout on a loaded machine
can expire before the server thread gets to the connection) is recorded as a
disconnect too: the connection ended from its side with nothing answered.
Threading events (``received``, ``disconnected``, ``answered``) let a test
wait for these moments instead of sleeping.
"""

from __future__ import annotations

import contextlib
import http.server
import json
import re
import select
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import attrs

_LINE = re.compile(r"- \[\w+\] (.*?) \(\d{4}-\d\d-\d\dT[\d:.]+Z\)(?:: |$)")

Answer = Callable[[dict[str, Any]], object]
"""Maps the request body to the ``selected_memories`` value (or any JSON value)."""


def manifest_ids(body: dict[str, Any]) -> list[str]:
    """The manifest ids in a request's user message, in manifest order."""
    user = body["messages"][1]["content"]
    return [m.group(1) for line in user.splitlines() if (m := _LINE.match(line))]


def first_two(body: dict[str, Any]) -> object:
    """Pick the first two ids of the manifest."""
    return manifest_ids(body)[:2]


@attrs.define
class Behaviour:
    """How the server answers the next requests."""

    delay: float = 0.0
    status: int = 200
    answer: Answer = first_two
    raw: bytes | None = None
    """Sent as the whole response body instead of a chat completion."""
    content: str | None = None
    """Sent as the message content instead of the JSON answer."""


@attrs.define(eq=False)
class FakeOpenAI:
    """The server's state: behaviour, the requests seen, and the moments a test waits for."""

    behaviour: Behaviour = attrs.field(factory=Behaviour)
    requests: list[dict[str, Any]] = attrs.field(factory=list)
    raw_requests: list[bytes] = attrs.field(factory=list)
    headers: list[dict[str, str]] = attrs.field(factory=list)
    received: threading.Event = attrs.field(factory=threading.Event)
    answered: threading.Event = attrs.field(factory=threading.Event)
    disconnected: threading.Event = attrs.field(factory=threading.Event)
    port: int = 0

    @property
    def base_url(self) -> str:
        """The API root to give the selector."""
        return f"http://127.0.0.1:{self.port}/v1"

    def reply_body(self, request: dict[str, Any]) -> bytes:
        """The response body for ``request`` under the current behaviour."""
        behaviour = self.behaviour
        if behaviour.raw is not None:
            return behaviour.raw
        content = behaviour.content
        if content is None:
            content = json.dumps({"selected_memories": behaviour.answer(request)})
        reply = {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "model": request.get("model", ""),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": "stop",
                }
            ],
        }
        return json.dumps(reply).encode("utf-8")


def _client_gone(connection: socket.socket, seconds: float) -> bool:
    """Wait up to ``seconds`` on the socket; True as soon as the client hangs up."""
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        readable, _, _ = select.select([connection], [], [], left)
        if readable:
            try:
                if connection.recv(1, socket.MSG_PEEK) == b"":
                    return True
            except OSError:
                return True
            return False  # more bytes from the client: not a hang-up
    return False


def _handler(state: FakeOpenAI) -> type[http.server.BaseHTTPRequestHandler]:
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def handle(self) -> None:
            try:
                super().handle()
            finally:
                # the connection is over; with nothing answered, the client hung up (it may
                # have done so before its request was read)
                if not state.answered.is_set():
                    state.disconnected.set()

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            raw = self.rfile.read(length)
            state.raw_requests.append(raw)
            state.headers.append(dict(self.headers.items()))
            try:
                body = json.loads(raw)
            except ValueError:
                body = {}
            state.requests.append(body)
            state.received.set()
            if state.behaviour.delay and _client_gone(self.connection, state.behaviour.delay):
                state.disconnected.set()
                self.close_connection = True
                return
            if self.path != "/v1/chat/completions":
                self._send(404, b'{"error": "not found"}')
            elif state.behaviour.status != 200:
                self._send(state.behaviour.status, b'{"error": {"message": "boom"}}')
            else:
                self._send(200, state.reply_body(body))
            state.answered.set()

        def _send(self, status: int, payload: bytes) -> None:
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
            except OSError:
                state.disconnected.set()

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet."""

    return Handler


@contextlib.contextmanager
def serve(behaviour: Behaviour | None = None) -> Iterator[FakeOpenAI]:
    """Run a fake server on an ephemeral loopback port for the ``with`` block."""
    state = FakeOpenAI(behaviour or Behaviour())
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    server.daemon_threads = True
    state.port = server.server_address[1]
    thread = threading.Thread(
        target=server.serve_forever, args=(0.01,), name="fake-openai", daemon=True
    )
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def refused_port() -> int:
    """A loopback port with nothing listening (connects are refused)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
