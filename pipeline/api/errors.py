"""Every error the API returns is JSON `{"detail": "..."}` with a message a person can act on."""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, RedirectResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

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


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(Unauthenticated)
    async def unauthenticated(request: Request, exc: Unauthenticated) -> Response:
        if request.url.path.startswith("/ui") and request.method == "GET":
            return RedirectResponse("/ui/login", status_code=303)  # a browser: to the key form
        return JSONResponse({"detail": str(exc)}, status_code=401, headers={"WWW-Authenticate": "Bearer"})

    @app.exception_handler(RetryableError)
    async def unavailable(_: Request, exc: RetryableError) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=503, headers={"Retry-After": "5"})

    @app.exception_handler(HindsightError)
    async def refused(_: Request, exc: HindsightError) -> JSONResponse:
        status = next((code for kind, code in _STATUS if isinstance(exc, kind)), 400)
        return JSONResponse({"detail": str(exc)}, status_code=status)

    @app.exception_handler(RequestValidationError)
    async def bad_request(_: Request, exc: RequestValidationError) -> JSONResponse:
        errors = exc.errors()
        parts = [f"{'.'.join(str(p) for p in e.get('loc', ()))}: {e.get('msg')}" for e in errors[:5]]
        return JSONResponse({"detail": "; ".join(parts) or "invalid request"}, status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        return JSONResponse(
            {"detail": _http_detail(request, exc)}, status_code=exc.status_code, headers=exc.headers
        )

    @app.exception_handler(Exception)
    async def crash(request: Request, exc: Exception) -> JSONResponse:
        # A bug: say so in JSON (no stack trace to the caller), log it whole here.
        log.exception("api.unhandled", method=request.method, path=request.url.path)
        return JSONResponse(
            {"detail": f"internal error ({type(exc).__name__}); see the API log"}, status_code=500
        )
