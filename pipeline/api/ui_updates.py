"""The inspector's side of knowledge updates (issue 39): undo a wrong supersession from a memory's page.

A plain HTML form posts here; the session cookie is `SameSite=Strict` and a request a browser says came from
another site is refused, so no other page can undo a link on a visitor's behalf.
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlencode

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse

from pipeline.adapters.postgres.supersession_sql import SupersessionStore
from pipeline.api import ui_session
from pipeline.api.auth import Caller, guard
from pipeline.api.ui_pages import error_page
from pipeline.core.authz import audit_key
from pipeline.ingest.validation import utcnow

router = APIRouter(prefix="/ui", include_in_schema=False)


@router.post("/supersessions/{link_id}/undo", response_class=HTMLResponse)
async def undo_from_inspector(request: Request, caller: Caller, link_id: int) -> HTMLResponse:
    if ui_session.cross_site(request):
        return error_page(request, 403, "this undo came from another site and was refused")
    form = {k: v[0] for k, v in parse_qs((await request.body()).decode("utf-8", "replace")).items()}
    agent_id, user_id = form.get("agent_id", ""), form.get("user_id", "")
    reason = form.get("reason", "").strip() or "undone in the inspector"
    if not agent_id or not user_id:
        return error_page(request, 422, "agent_id and user_id are required")
    guard(caller, agent_id, user_id, "write")
    done = SupersessionStore(request.app.state.deps.repo.engine).undo(
        link_id,
        agent_id=agent_id,
        user_id=user_id,
        actor="inspector",
        key_prefix=audit_key(caller),
        reason=reason[:2000],
        now=utcnow(),
    )
    back = form.get("back") or done["old"]
    query = urlencode({"agent_id": agent_id, "user_id": user_id})
    return RedirectResponse(f"/ui/memory/{back}?{query}", status_code=303)  # type: ignore[return-value]
