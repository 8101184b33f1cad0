"""Response headers that keep browsers from misreading or embedding what the API serves.

`nosniff` on every response: a JSON body holding stored text must never be sniffed into HTML. The
inspector's pages (/ui) also get a Content-Security-Policy that allows only its own script and
stylesheet (stored text that slipped past escaping still could not run), no framing (clickjacking),
and no Referer (a /ui URL names scopes and queries).
"""

from __future__ import annotations

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

# style-src allows inline style attributes: the quality bars set their width inline; scripts stay
# 'self' only, which is what stops injected markup from running.
UI_CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
UI_HEADERS = {
    "Content-Security-Policy": UI_CSP,
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
}


class SecurityHeaders:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = str(scope.get("path", ""))
        ui = path.startswith("/ui")
        # Pages hold memories: not kept in the browser's cache (the stylesheet and script may be).
        page = ui and not path.startswith("/ui/static")

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                headers["X-Content-Type-Options"] = "nosniff"
                if ui:
                    for name, value in UI_HEADERS.items():
                        headers.setdefault(name, value)
                if page:
                    headers.setdefault("Cache-Control", "no-store")
            await send(message)

        await self.app(scope, receive, with_headers)
