"""How the inspector renders a page, its own errors included (HTML for a browser, not the API's JSON)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import Request
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates

HERE = Path(__file__).parent
templates = Jinja2Templates(directory=HERE / "templates")
QUALITY_KEYS = ("density", "timeliness", "uniqueness", "actionability")
TITLES = {400: "Bad request", 401: "Sign-in needed", 403: "Not allowed", 404: "Not found", 422: "Bad request"}


def is_page(request: Request) -> bool:
    """A request for an inspector page (its errors render as HTML), not for a static file."""
    path = request.url.path
    return path.startswith("/ui") and not path.startswith("/ui/static")


def operator_view(request: Request) -> bool:
    """Whether this browser may open the deployment-wide pages (review log, dead letters): an admin
    key, or no keys at all (auth off: the local operator). Links it cannot open are not shown."""
    if request.app.state.key_resolver is None:
        return True
    caller = getattr(request.state, "principal", None)
    return bool(caller is not None and caller.is_admin)


def page(request: Request, name: str, status_code: int = 200, **context: Any) -> HTMLResponse:
    return templates.TemplateResponse(
        request,
        name,
        {"quality_keys": QUALITY_KEYS, "operator": operator_view(request), **context},
        status_code=status_code,
    )


def error_page(request: Request, status_code: int, detail: str) -> HTMLResponse:
    title = TITLES.get(status_code, "Error" if status_code < 500 else "Server error")
    return page(request, "error.html", status_code, title=title, status=status_code, detail=detail)
