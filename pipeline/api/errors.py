"""Every error the API returns is JSON `{"detail": "..."}` with a message a person can act on; the
inspector's pages (/ui) get the same message as an HTML page, since a browser is reading them."""

from __future__ import annotations

from collections.abc import Mapping

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, RedirectResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from pipeline.api.ui_pages import error_page, is_page
from pipeline.core.errors import (
    Forbidden,
    HindsightError,
    InvalidTurn,
    InvalidValue,
    NotFound,
    RetryableError,
    TurnIdConflict,
    Unauthenticated,
)
from pipeline.core.logging import get_logger

log = get_logger(__name__)


def _http_detail(request: Request, exc: StarletteHTTPException) -> str:
    # Starlette's own 404/405 say only "Not Found" / "Method Not Allowed": name what was asked.
    if exc.status_code == 404 and exc.detail == "Not Found":
        return f"no such endpoint: {request.method} {request.url.path} (the API is described at /docs)"
    if exc.status_code == 405:
        allowed = (exc.headers or {}).get("Allow") or (exc.headers or {}).get("allow")
        suffix = f"; allowed: {allowed}" if allowed else ""
        return f"method {request.method} not allowed on {request.url.path}{suffix}"
    return str(exc.detail)


# The status of each refusal in the error tree, most specific first (a TurnIdConflict is an InvalidTurn).
_STATUS: tuple[tuple[type[HindsightError], int], ...] = (
    (TurnIdConflict, 409),
    (InvalidTurn, 422),
    (InvalidValue, 422),
    (NotFound, 404),
    (Forbidden, 403),
)


def _reply(
    request: Request, status_code: int, detail: str, headers: Mapping[str, str] | None = None
) -> Response:
    if is_page(request):
        response: Response = error_page(request, status_code, detail)
        for name, value in (headers or {}).items():
            if name.lower() != "www-authenticate":  # a browser would pop up a password dialog
                response.headers[name] = value
        return response
    return JSONResponse({"detail": detail}, status_code=status_code, headers=dict(headers or {}))


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(Unauthenticated)
    async def unauthenticated(request: Request, exc: Unauthenticated) -> Response:
        if request.url.path.startswith("/ui") and request.method == "GET":
            return RedirectResponse("/ui/login", status_code=303)  # a browser: to the key form
        return _reply(request, 401, str(exc), {"WWW-Authenticate": "Bearer"})

    @app.exception_handler(RetryableError)
    async def unavailable(request: Request, exc: RetryableError) -> Response:
        return _reply(request, 503, str(exc), {"Retry-After": "5"})

    @app.exception_handler(HindsightError)
    async def refused(request: Request, exc: HindsightError) -> Response:
        status = next((code for kind, code in _STATUS if isinstance(exc, kind)), 400)
        return _reply(request, status, str(exc))

    @app.exception_handler(RequestValidationError)
    async def bad_request(request: Request, exc: RequestValidationError) -> Response:
        errors = exc.errors()
        parts = [f"{'.'.join(str(p) for p in e.get('loc', ()))}: {e.get('msg')}" for e in errors[:5]]
        return _reply(request, 422, "; ".join(parts) or "invalid request")

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        return _reply(request, exc.status_code, _http_detail(request, exc), exc.headers)

    @app.exception_handler(Exception)
    async def crash(request: Request, exc: Exception) -> Response:
        # A bug: say so (no stack trace to the caller), log it whole here.
        log.exception("api.unhandled", method=request.method, path=request.url.path)
        return _reply(request, 500, f"internal error ({type(exc).__name__}); see the API log")
