"""Liveness and readiness: open routes (no key), for load balancers and orchestrators."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse
from sqlalchemy import text

from pipeline.api.deps import ApiDeps, Deps
from pipeline.core.logging import get_logger

log = get_logger(__name__)
router = APIRouter()


@router.get("/healthz")
def healthz() -> dict[str, str]:
    return {"status": "ok"}


@router.get("/readyz")
def readyz(deps: Deps) -> JSONResponse:
    checks: dict[str, str] = {}
    for name, probe in (
        ("postgres", lambda: _ping_postgres(deps)),
        ("redis", lambda: deps.stream.client.ping()),
        ("qdrant", lambda: deps.index.count()),
    ):
        try:
            probe()
            checks[name] = "ok"
        except Exception as exc:  # readiness reports every failure instead of raising
            # /readyz needs no key, so the answer names the kind of failure only: a driver's message can
            # carry host names, user names and paths. The log has it whole.
            log.warning("readyz.failed", dependency=name, error=str(exc)[:500])
            checks[name] = f"error: {type(exc).__name__}"
    ok = all(v == "ok" for v in checks.values())
    return JSONResponse(
        {"status": "ok" if ok else "unavailable", "checks": checks}, status_code=200 if ok else 503
    )


def _ping_postgres(deps: ApiDeps) -> None:
    with deps.repo.engine.connect() as conn:
        conn.execute(text("SELECT 1"))
