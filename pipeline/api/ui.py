"""The memory inspector (`/ui`): server-rendered pages over the same queries the JSON API serves.

No build step: Jinja2 templates, one stylesheet and a few lines of plain JS (a table filter).
"""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import parse_qs

from fastapi import APIRouter, FastAPI, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse
from fastapi.staticfiles import StaticFiles

from pipeline.adapters.dead_letters import read_dead_letters
from pipeline.adapters.postgres.audit_sql import AuditStore
from pipeline.adapters.postgres.inspect_sql import InspectStore, MemoryFilter
from pipeline.adapters.postgres.supersession_sql import SupersessionStore
from pipeline.api import ui_session
from pipeline.api.auth import Caller, KeyResolver, guard
from pipeline.api.deps import Deps, memory_ref
from pipeline.api.recall_route import run_recall
from pipeline.api.ui_pages import HERE, page
from pipeline.core.authz import may_see_status, readable
from pipeline.core.errors import NotFound, Unauthenticated
from pipeline.core.models import EPISODE, MAX_ID_CHARS

router = APIRouter(prefix="/ui", include_in_schema=False)
login_router = APIRouter(prefix="/ui", include_in_schema=False)  # open: where a browser gets its key in
PAGE = 50
# Keys of a recall result that are the result itself, not a part of its score.
RESULT_KEYS = {"id", "kind", "text", "valid_from", "valid_to", "source_turn_ids", "session_id"}
CROSS_SITE = (
    "this sign-in came from another site and was refused (it could sign your browser in with someone "
    "else's key); type or paste the key here yourself"
)


Text = Annotated[str | None, Query(max_length=500)]


def mount_static(app: FastAPI) -> None:
    app.mount("/ui/static", StaticFiles(directory=HERE / "static"), name="ui-static")


def score_breakdown(result: dict[str, Any]) -> dict[str, Any]:
    """What the page shows under a recall hit: the result's own breakdown when recall gives one
    (`explain` / `score_breakdown`), else the numeric parts it has (score, weight, ...)."""
    for key in ("explain", "score_breakdown", "breakdown"):
        value = result.get(key)
        if isinstance(value, dict) and value:
            return value
    return {k: v for k, v in result.items() if k not in RESULT_KEYS and isinstance(v, int | float | bool)}


@login_router.get("/login", response_class=HTMLResponse)
def login_page(request: Request, key: Annotated[str | None, Query(max_length=300)] = None) -> HTMLResponse:
    """The key form; `?key=` signs in directly (a link an operator hands out), then drops it from the URL.
    A `?key=` link followed from another site only fills the form: signing in takes a click here."""
    if key and ui_session.cross_site(request, navigation=True):
        return page(request, "login.html", error=CROSS_SITE, key=key)
    if key:
        return _sign_in(request, key)
    return page(request, "login.html", error=None)


@login_router.post("/login", response_class=HTMLResponse)
async def login_form(request: Request) -> HTMLResponse:
    if ui_session.cross_site(request):
        return page(request, "login.html", 403, error=CROSS_SITE)
    # A urlencoded form parsed by hand: one field does not justify the python-multipart dependency.
    form = parse_qs((await request.body()).decode("utf-8", "replace"))
    return _sign_in(request, (form.get("key") or [""])[0])


def _sign_in(request: Request, key: str) -> HTMLResponse:
    resolver: KeyResolver | None = request.app.state.key_resolver
    if resolver is None:
        return RedirectResponse("/ui", status_code=303)  # type: ignore[return-value]
    try:
        session = resolver.open_session(key)
    except Unauthenticated as exc:
        return page(request, "login.html", 401, error=str(exc))
    response = RedirectResponse("/ui", status_code=303)
    settings = request.app.state.deps.settings
    response.set_cookie(
        ui_session.COOKIE,
        session,
        path="/ui",
        httponly=True,
        samesite="strict",
        secure=ui_session.secure_cookie(request, settings.auth.cookie_secure),
    )
    return response  # type: ignore[return-value]


@router.get("", response_class=HTMLResponse)
def home(request: Request, deps: Deps, caller: Caller) -> HTMLResponse:
    scopes = [s for s in InspectStore(deps.repo.engine).scopes() if readable(caller, s["agent_id"])]
    # Deployment-wide counts are for operators; an agent's key sees only its scopes.
    stats = deps.repo.stats() if caller.is_admin else None
    stream = deps.stream.stats(deps.settings.scheduler_group) if caller.is_admin else None
    return page(request, "home.html", scopes=scopes, stats=stats, stream=stream)


@router.get("/", include_in_schema=False)
def home_slash() -> RedirectResponse:
    return RedirectResponse("/ui")


@router.get("/scope", response_class=HTMLResponse)
def scope(
    request: Request,
    deps: Deps,
    caller: Caller,
    agent_id: Annotated[str, Query(min_length=1, max_length=MAX_ID_CHARS)],
    user_id: Annotated[str, Query(min_length=1, max_length=MAX_ID_CHARS)],
    kind: Text = None,
    status: Text = None,
    contains: Text = None,
    q: Annotated[str | None, Query(max_length=4000)] = None,
    offset: Annotated[int, Query(ge=0)] = 0,
) -> HTMLResponse:
    guard(caller, agent_id, user_id, "read")
    if not may_see_status(caller, status or None):
        guard(caller, None, None, "admin")
    store = InspectStore(deps.repo.engine)
    f = MemoryFilter(
        agent_id=agent_id,
        user_id=user_id,
        kind=kind if kind in ("episode", "semantic") else None,
        status=status or None,
        contains=contains or None,
    )
    memories, total = store.list_memories(f, limit=PAGE, offset=offset)
    results = None
    if q:
        results = run_recall(deps, q, agent_id=agent_id, user_id=user_id, k=10, observe=False)
        for r in results:
            r["breakdown"] = score_breakdown(r)
    facts = deps.repo.facts(agent_id, user_id)
    return page(
        request,
        "scope.html",
        agent_id=agent_id,
        user_id=user_id,
        memories=memories,
        total=total,
        offset=offset,
        page=PAGE,
        filters={"kind": kind or "", "status": status or "", "contains": contains or ""},
        q=q or "",
        results=results,
        facts=facts,
        insights=deps.repo.tool_insights(agent_id, user_id, limit=50),
        # The agent's own, over all its users' calls: numbers only, and this user's share of the calls.
        agent_insights=deps.repo.tool_insights(agent_id, user_id, limit=50, scope="agent"),
        reviews=store.reviews(agent_id=agent_id, user_id=user_id, limit=10, before_id=None),
    )


@router.get("/memory/{memory_id}", response_class=HTMLResponse)
def memory(
    request: Request,
    deps: Deps,
    caller: Caller,
    memory_id: str,
    agent_id: Annotated[str, Query(min_length=1, max_length=MAX_ID_CHARS)],
    user_id: Annotated[str, Query(min_length=1, max_length=MAX_ID_CHARS)],
) -> HTMLResponse:
    guard(caller, agent_id, user_id, "read")
    kind, ref = memory_ref(memory_id)
    found = InspectStore(deps.repo.engine).get_memory(kind, ref, agent_id=agent_id, user_id=user_id)
    if found is None or not may_see_status(caller, found["status"]):
        raise NotFound(f"memory {memory_id} not found in scope agent_id={agent_id!r} user_id={user_id!r}")
    links = (
        SupersessionStore(deps.repo.engine).list(agent_id, user_id, episode_id=ref) if kind == EPISODE else []
    )
    return page(request, "memory.html", m=found, agent_id=agent_id, user_id=user_id, links=links)


@router.get("/facts", response_class=HTMLResponse)
def fact_chain(
    request: Request,
    deps: Deps,
    caller: Caller,
    agent_id: Annotated[str, Query(min_length=1, max_length=MAX_ID_CHARS)],
    user_id: Annotated[str, Query(min_length=1, max_length=MAX_ID_CHARS)],
    entity: Annotated[str, Query(min_length=1)],
    attribute: Annotated[str, Query(min_length=1)],
) -> HTMLResponse:
    guard(caller, agent_id, user_id, "read")
    versions = deps.repo.facts(agent_id, user_id, entity=entity, attribute=attribute, history=True)
    if not versions:
        raise NotFound(
            f"no fact chain {entity}.{attribute} in scope agent_id={agent_id!r} user_id={user_id!r}"
        )
    return page(
        request,
        "facts.html",
        agent_id=agent_id,
        user_id=user_id,
        entity=entity,
        attribute=attribute,
        versions=versions,
    )


@router.get("/reviews", response_class=HTMLResponse)
def reviews(
    request: Request,
    deps: Deps,
    caller: Caller,
    before_id: Annotated[int | None, Query(ge=1)] = None,
) -> HTMLResponse:
    guard(caller, None, None, "admin")  # every scope's log
    rows = InspectStore(deps.repo.engine).reviews(
        agent_id=None, user_id=None, limit=PAGE, before_id=before_id
    )
    return page(
        request, "reviews.html", reviews=rows, next_before_id=rows[-1]["id"] if len(rows) == PAGE else None
    )


@router.get("/audit", response_class=HTMLResponse)
def audit(
    request: Request,
    deps: Deps,
    caller: Caller,
    before_id: Annotated[int | None, Query(ge=1)] = None,
) -> HTMLResponse:
    guard(caller, None, None, "admin")  # every scope's changes
    rows = AuditStore(deps.repo.engine).entries(agent_id=None, user_id=None, limit=PAGE, before_id=before_id)
    return page(
        request, "audit.html", entries=rows, next_before_id=rows[-1]["id"] if len(rows) == PAGE else None
    )


@router.get("/dead", response_class=HTMLResponse)
def dead_letters(request: Request, deps: Deps, caller: Caller) -> HTMLResponse:
    guard(caller, None, None, "admin")
    letters, total = read_dead_letters(deps.stream.client, deps.settings.stream_dead, count=PAGE)
    return page(request, "dead.html", letters=letters, total=total)
