"""A scripted OpenAI-compatible endpoint for tests: real HTTP on 127.0.0.1, no model.

    with StubLLM() as stub:
        stub.status(429, retry_after=2).good({"score": 0.8, "reason": "preference"}, tokens=42)
        settings = LLMSettings(base_url=stub.url, ...)
        ...
        assert len(stub.requests) == 2

Each POST to {url}/chat/completions takes the next scripted Reply; when the script is empty the
`default` reply is used (a 500 unless told otherwise, so a test that forgot to script a reply fails loudly).
Requests are served on their own threads, so a hanging reply does not block the retries behind it, and
`close()` wakes every hanging reply so the server always shuts down promptly.
"""

from __future__ import annotations

import json
import sys
import threading
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any


@dataclass(frozen=True)
class Reply:
    """One scripted answer. `content` is wrapped in a chat-completion envelope; `body` replaces it whole."""

    status: int = 200
    content: str | None = None
    body: bytes | None = None
    headers: tuple[tuple[str, str], ...] = ()
    delay_s: float = 0.0
    tokens: int | None = None  # usage.total_tokens; None leaves usage out

    @classmethod
    def good(cls, obj: Any, *, tokens: int | None = None) -> Reply:
        return cls(content=json.dumps(obj), tokens=tokens)

    @classmethod
    def raw(cls, text: str, *, tokens: int | None = None) -> Reply:
        """Message content exactly as given: malformed JSON, fenced JSON, prose."""
        return cls(content=text, tokens=tokens)

    @classmethod
    def raw_body(cls, body: bytes | str, *, status: int = 200) -> Reply:
        """An HTTP body that is not a chat completion at all."""
        return cls(status=status, body=body.encode() if isinstance(body, str) else body)

    @classmethod
    def error(cls, code: int, *, retry_after: float | str | None = None) -> Reply:
        headers = (("Retry-After", str(retry_after)),) if retry_after is not None else ()
        body = json.dumps({"error": {"message": f"stub says {code}", "type": "stub"}}).encode()
        return cls(status=code, body=body, headers=headers)

    @classmethod
    def hang(cls, seconds: float) -> Reply:
        """Sleep `seconds` (longer than the client's timeout) before answering an empty object."""
        return cls(content="{}", delay_s=seconds)


def envelope(content: str, tokens: int | None) -> bytes:
    data: dict[str, Any] = {
        "id": "chatcmpl-stub",
        "object": "chat.completion",
        "model": "stub",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
        ],
    }
    if tokens is not None:
        data["usage"] = {
            "prompt_tokens": tokens // 2,
            "completion_tokens": tokens - tokens // 2,
            "total_tokens": tokens,
        }
    return json.dumps(data).encode()


class _Server(ThreadingHTTPServer):
    # Handler threads are joined on close (not daemons + block_on_close), so none outlives the stub.
    daemon_threads = False

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that timed out and hung up is part of the script (hang), not a stub failure.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class StubLLM:
    """Context manager; `url` is the base_url to configure (…/v1)."""

    def __init__(self, default: Reply | None = None) -> None:
        self.default = default or Reply.error(500)
        self.requests: list[Any] = []  # request bodies, parsed JSON (or the raw text when not JSON)
        self.headers: list[dict[str, str]] = []  # request headers, lower-case names
        self._script: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._server = _Server(("127.0.0.1", 0), self._handler_class())
        # A short poll interval: shutdown() waits for the serving loop to notice, 0.5 s by default.
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, name="stub-llm", daemon=True
        )
        self._thread.start()

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    # -- scripting (chainable) -----------------------------------------------------------------------

    def script(self, *replies: Reply) -> StubLLM:
        with self._lock:
            self._script.extend(replies)
        return self

    def good(self, obj: Any, *, tokens: int | None = None) -> StubLLM:
        return self.script(Reply.good(obj, tokens=tokens))

    def raw(self, text: str, *, tokens: int | None = None) -> StubLLM:
        return self.script(Reply.raw(text, tokens=tokens))

    def raw_body(self, body: bytes | str, *, status: int = 200) -> StubLLM:
        return self.script(Reply.raw_body(body, status=status))

    def status(self, code: int, *, retry_after: float | str | None = None) -> StubLLM:
        return self.script(Reply.error(code, retry_after=retry_after))

    def hang(self, seconds: float) -> StubLLM:
        return self.script(Reply.hang(seconds))

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._script)

    # -- lifecycle -------------------------------------------------------------------------------------

    def close(self) -> None:
        if self._closing.is_set():
            return
        self._closing.set()  # wakes hanging replies
        self._server.shutdown()
        self._server.server_close()  # joins the handler threads
        self._thread.join(timeout=5)

    def __enter__(self) -> StubLLM:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # -- serving ---------------------------------------------------------------------------------------

    def _next(self, body: bytes, headers: dict[str, str]) -> Reply:
        try:
            parsed: Any = json.loads(body)
        except ValueError:
            parsed = body.decode("utf-8", "replace")
        with self._lock:
            self.requests.append(parsed)
            self.headers.append(headers)
            return self._script.popleft() if self._script else self.default

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            # HTTP/1.0: one request per connection, so no handler thread idles on a kept-alive socket.
            protocol_version = "HTTP/1.0"
            timeout = 10  # a client that connects and says nothing cannot hold close() forever

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                if self.path.rstrip("/") != "/v1/chat/completions":
                    self._send(Reply.raw_body("not found", status=404))
                    return
                reply = stub._next(body, {k.lower(): v for k, v in self.headers.items()})
                if reply.delay_s and stub._closing.wait(reply.delay_s):
                    return  # shutting down: drop the connection unanswered
                self._send(reply)

            def _send(self, reply: Reply) -> None:
                data = reply.body if reply.body is not None else envelope(reply.content or "", reply.tokens)
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for name, value in reply.headers:
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout) before the answer: expected with hang()

            def log_message(self, format: str, *args: Any) -> None:
                pass  # keep test output clean

        return Handler
