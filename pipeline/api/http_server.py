"""How the API is served: uvicorn's h11 protocol, answering 431 to oversized request headers.

h11 stops buffering a request head past `h11_max_incomplete_event_size` (16 KiB by default) and raises
with the hint 431. uvicorn turns that into a 400 and closes the socket at once, while the client is still
sending: the unread bytes make the kernel reset the connection, so the client sees "connection reset"
instead of any answer. Here the answer is 431 with a JSON detail like every other error, and the socket
is closed only once the client stops sending (or after a short grace), so the answer is read.
"""

from __future__ import annotations

import json
from typing import Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

MAX_HEADER_BYTES = 16 * 1024  # h11's own default, stated so the 431's message can name it
_DRAIN_GRACE_S = 5.0  # how long an oversized request may go on sending before the socket is closed


class HeaderLimitProtocol(H11Protocol):
    """uvicorn's H11Protocol, with a 431 that the client gets to read (see the module docstring)."""

    _draining = False

    def send_400_response(self, msg: str) -> None:
        buffered, _ = self.conn.trailing_data
        if len(buffered) <= MAX_HEADER_BYTES:
            super().send_400_response(msg)  # some other malformed request: uvicorn's own answer
            return
        body = json.dumps({"detail": f"request headers larger than {MAX_HEADER_BYTES} bytes"}).encode()
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            (b"connection", b"close"),
        ]
        for event in (
            h11.Response(status_code=431, headers=headers, reason=b"Request Header Fields Too Large"),
            h11.Data(data=body),
            h11.EndOfMessage(),
        ):
            self.transport.write(self.conn.send(event))
        self._draining = True
        self.loop.call_later(_DRAIN_GRACE_S, self.transport.close)

    def data_received(self, data: bytes) -> None:
        if self._draining:
            return  # the rest of the oversized head: read and dropped, so the socket is not reset
        super().data_received(data)

    def eof_received(self) -> None:
        if self._draining:
            self.transport.close()
            return
        super().eof_received()


def server_config(app: Any, *, host: str, port: int, **kwargs: Any) -> uvicorn.Config:
    """The uvicorn config every API server uses (`hindsight api`, `hindsight up`, the tests' live API)."""
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        http=HeaderLimitProtocol,
        h11_max_incomplete_event_size=MAX_HEADER_BYTES,
        **kwargs,
    )
