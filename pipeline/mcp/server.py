"""The MCP tools. Flat parameters named as in the Python client; structured results (pipeline/mcp/results.py).

Every tool is a thin call to the HTTP API (see gateway.py for why). A bad argument, an unknown memory or
an unreachable API comes back as a tool error with a message the model can act on; nothing crashes the
server.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from pipeline import __version__
from pipeline.core.errors import HindsightError
from pipeline.core.models import MAX_ID_CHARS
from pipeline.mcp import results
from pipeline.mcp.gateway import ApiGateway

INSTRUCTIONS = (
    "Long-term memory for this agent. Write each conversation turn with memory_write; recall what is "
    "current and relevant with memory_recall before answering; keep the live session's task, confirmed "
    "slots and open questions with memory_session_set; end the session with memory_session_end so the "
    "background review turns confirmed slots into facts. memory_reflect reviews memory against a goal."
)

AgentId = Annotated[str, Field(min_length=1, max_length=MAX_ID_CHARS, description="the agent (service) id")]
UserId = Annotated[str, Field(min_length=1, max_length=MAX_ID_CHARS, description="the end user's id")]
SessionId = Annotated[str, Field(min_length=1, max_length=MAX_ID_CHARS, description="the conversation's id")]
MemoryId = Annotated[str, Field(description="'episode:<n>' or 'semantic:<n>', as recall and list return")]
Reason = Annotated[str, Field(min_length=1, max_length=2000, description="why (kept in the audit log)")]
AsOf = Annotated[str | None, Field(description="ISO-8601 time with offset; default now")]
K = Annotated[int, Field(ge=1, le=100, description="how many results")]


def caller_scope(agent_id: str, user_id: str, *, api_key: str | None = None) -> tuple[str, str]:
    """The (agent_id, user_id) scope this call names.

    The flat parameters are the scope; what the caller may do with it is decided by the HTTP API, which
    this server calls with its own key (HINDSIGHT_API_KEY, pipeline/mcp/run.py): one place enforces the
    access rules for every client, so none is repeated here. `agent_id` may name the `shared` or
    `system` space as well as the key's own agent.
    """
    del api_key
    return agent_id, user_id


def request_key(ctx: Context | None) -> str | None:
    """The remote caller's own API key, when the tool call came over streamable HTTP with one
    (`Authorization: Bearer` or `X-API-Key`): each remote client acts with its own rights. None over
    stdio, where the server's key applies; over HTTP the server holds no key to fall back on (run.py),
    and a request without one was already refused with 401 when keys are required (http_auth.py)."""
    if ctx is None:
        return None
    try:
        request = ctx.request_context.request
    except ValueError:  # outside a request
        return None
    headers = getattr(request, "headers", None)
    if headers is None:
        return None
    scheme, _, value = (headers.get("authorization") or "").partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return str(value.strip())
    key = headers.get("x-api-key")
    return str(key).strip() if key else None


@contextmanager
def tool_errors() -> Iterator[None]:
    """Our errors become tool errors (is_error=True, the message for the model); anything else is a bug
    the SDK reports as a crash of this call only."""
    try:
        yield
    except HindsightError as exc:
        raise ToolError(str(exc)) from exc


class MemoryTools:
    """The tools, one method each (registered by `build_server`)."""

    def __init__(self, gateway: ApiGateway) -> None:
        self.gateway = gateway

    def _call(self, ctx: Context | None, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        return self.gateway.call(method, path, api_key=request_key(ctx), **kwargs)

    def memory_write(
        self,
        agent_id: AgentId,
        user_id: UserId,
        session_id: SessionId,
        role: Literal["user", "assistant", "tool", "system"],
        content: Annotated[str, Field(min_length=1, description="the turn's text (UTF-8, at most 256 KiB)")],
        ts: AsOf = None,
        source: Literal["user", "agent", "tool", "external"] | None = None,
        metadata: Annotated[
            dict[str, Any] | None,
            Field(
                description="optional: entity, attribute, value (an explicit fact), core, space, priority;"
                " on a tool turn, its call record: tool, args, status (ok|error|timeout), latency_ms, error, task"
            ),
        ] = None,
        turn_id: Annotated[
            str | None, Field(description="your unique id for the turn; made if omitted")
        ] = None,
        ctx: Context | None = None,
    ) -> results.WriteResult:
        """Remember one conversation turn. Returns once it is queued; review happens in the background."""
        agent_id, user_id = caller_scope(agent_id, user_id)
        turn = {
            "turn_id": turn_id or uuid.uuid4().hex,
            "agent_id": agent_id,
            "user_id": user_id,
            "session_id": session_id,
            "role": role,
            "content": content,
            "ts": ts,
            "source": source,
            "metadata": metadata,
        }
        with tool_errors():
            answer = self._call(
                ctx, "POST", "/v1/turns", body=[{k: v for k, v in turn.items() if v is not None}]
            )
        return results.WriteResult(turn_id=answer["turn_ids"][0], accepted=answer["accepted"] == 1)

    def memory_recall(
        self,
        query: Annotated[str, Field(min_length=1, max_length=4000)],
        agent_id: AgentId,
        user_id: UserId,
        k: K = 10,
        as_of: AsOf = None,
        session_id: Annotated[
            str | None, Field(description="adds that session's working memory beside the results")
        ] = None,
        include_cold: bool = False,
        history: Annotated[
            bool,
            Field(description="also what newer facts superseded, flagged and ranked below its replacement"),
        ] = False,
        ctx: Context | None = None,
    ) -> results.RecallResult:
        """The memories most relevant to `query` that are valid now (or at `as_of`), best first."""
        agent_id, user_id = caller_scope(agent_id, user_id)
        params = {
            "q": query,
            "agent_id": agent_id,
            "user_id": user_id,
            "k": k,
            "as_of": as_of,
            "session_id": session_id,
            "include_cold": "true" if include_cold else None,
            "history": "true" if history else None,
        }
        with tool_errors():
            return results.RecallResult.model_validate(self._call(ctx, "GET", "/v1/recall", params=params))

    def memory_reflect(
        self,
        goal: Annotated[
            str, Field(min_length=1, max_length=2000, description="what the agent is trying to do")
        ],
        agent_id: AgentId,
        user_id: UserId,
        session_id: Annotated[str | None, Field(description="include this session's working memory")] = None,
        k: Annotated[int, Field(ge=1, le=50, description="related memories to consider")] = 10,
        as_of: AsOf = None,
        ctx: Context | None = None,
    ) -> results.ReflectResult:
        """Review memory against a goal. With an LLM configured: which memories still hold, which to
        correct, insights and suggested updates. Always: the evidence (current facts, superseded versions,
        related memories)."""
        agent_id, user_id = caller_scope(agent_id, user_id)
        body = {
            "goal": goal,
            "agent_id": agent_id,
            "user_id": user_id,
            "session_id": session_id,
            "k": k,
            "as_of": as_of,
        }
        with tool_errors():
            answer = self._call(
                ctx, "POST", "/v1/reflect", body={k_: v for k_, v in body.items() if v is not None}
            )
            return results.ReflectResult.model_validate(answer)

    def memory_update(
        self,
        memory_id: MemoryId,
        agent_id: AgentId,
        user_id: UserId,
        reason: Reason,
        weight: Annotated[float | None, Field(ge=0, le=10)] = None,
        tags: list[str] | None = None,
        core: Annotated[bool | None, Field(description="core memories never decay")] = None,
        status: Annotated[
            Literal["kept", "cold", "forgotten"] | None, Field(description="'kept' undoes a soft forget")
        ] = None,
        ctx: Context | None = None,
    ) -> results.UpdateResult:
        """Change a memory's weight, tags, core flag or status (audited)."""
        agent_id, user_id = caller_scope(agent_id, user_id)
        body: dict[str, Any] = {"agent_id": agent_id, "user_id": user_id, "reason": reason, "actor": "mcp"}
        for name, value in (("weight", weight), ("tags", tags), ("core", core), ("status", status)):
            if value is not None:
                body[name] = value
        with tool_errors():
            return results.UpdateResult.model_validate(
                self._call(ctx, "PATCH", f"/v1/memories/{_path_id(memory_id)}", body=body)
            )

    def memory_forget(
        self,
        memory_id: MemoryId,
        agent_id: AgentId,
        user_id: UserId,
        reason: Reason,
        hard: Annotated[
            bool, Field(description="purge it and its traces everywhere (erasure) instead of hiding it")
        ] = False,
        ctx: Context | None = None,
    ) -> results.ForgetResult:
        """Forget a memory: soft (out of recall, reversible with memory_update status='kept') or hard."""
        agent_id, user_id = caller_scope(agent_id, user_id)
        body = {"agent_id": agent_id, "user_id": user_id, "reason": reason, "hard": hard, "actor": "mcp"}
        with tool_errors():
            return results.ForgetResult.model_validate(
                self._call(ctx, "POST", f"/v1/memories/{_path_id(memory_id)}/forget", body=body)
            )

    def memory_list(
        self,
        agent_id: AgentId,
        user_id: UserId,
        kind: Literal["episode", "semantic"] | None = None,
        status: Literal["pending", "kept", "cold", "merged", "forgotten"] | None = None,
        session_id: str | None = None,
        limit: Annotated[int, Field(ge=1, le=500)] = 50,
        offset: Annotated[int, Field(ge=0)] = 0,
        ctx: Context | None = None,
    ) -> results.MemoryPage:
        """A scope's memories, newest first, filtered by kind, status and session; page with offset."""
        agent_id, user_id = caller_scope(agent_id, user_id)
        params = {
            "agent_id": agent_id,
            "user_id": user_id,
            "kind": kind,
            "status": status,
            "session_id": session_id,
            "limit": limit,
            "offset": offset,
        }
        with tool_errors():
            return results.MemoryPage.model_validate(self._call(ctx, "GET", "/v1/memories", params=params))

    def memory_tool_insights(
        self,
        agent_id: AgentId,
        user_id: UserId,
        task: Annotated[
            str | None, Field(max_length=500, description="what you are doing, e.g. 'flight search'")
        ] = None,
        limit: Annotated[int, Field(ge=1, le=500)] = 50,
        scope: Annotated[
            Literal["agent", "user"],
            Field(description="agent: learnt over all your users' calls (default); user: this user's only"),
        ] = "agent",
        ctx: Context | None = None,
    ) -> results.ToolInsights:
        """What review learnt about your tools: per task and tool (and argument pattern), how often calls
        succeed, how slow they are and how they fail, best first. Prefer the tools that work. By default
        over all your users' calls; the call turn ids listed are this user's only."""
        agent_id, user_id = caller_scope(agent_id, user_id)
        params: dict[str, Any] = {
            "agent_id": agent_id,
            "user_id": user_id,
            "task": task,
            "limit": limit,
            "scope": scope,
        }
        with tool_errors():
            return results.ToolInsights.model_validate(
                self._call(
                    ctx, "GET", "/v1/tool-insights", params={k: v for k, v in params.items() if v is not None}
                )
            )

    def memory_session_get(
        self, agent_id: AgentId, user_id: UserId, session_id: SessionId, ctx: Context | None = None
    ) -> results.WorkingMemory:
        """The live session's working memory: current task, confirmed slots, pending questions."""
        agent_id, user_id = caller_scope(agent_id, user_id)
        with tool_errors():
            return results.WorkingMemory.model_validate(
                self._call(
                    ctx, "GET", _wm_path(session_id), params={"agent_id": agent_id, "user_id": user_id}
                )
            )

    def memory_session_set(
        self,
        agent_id: AgentId,
        user_id: UserId,
        session_id: SessionId,
        task: Annotated[str | None, Field(description='the current task; "" clears it')] = None,
        slots: Annotated[
            dict[str, str | None] | None,
            Field(description="confirmed slots to set (name -> value); a null value removes a slot"),
        ] = None,
        pending_questions: Annotated[
            list[str] | None, Field(description="replaces the open questions")
        ] = None,
        replace: Annotated[bool, Field(description="start from empty instead of merging")] = False,
        ctx: Context | None = None,
    ) -> results.WorkingMemory:
        """Change the live session's working memory (merged; restarts its expiry)."""
        agent_id, user_id = caller_scope(agent_id, user_id)
        body: dict[str, Any] = {"agent_id": agent_id, "user_id": user_id, "replace": replace}
        for name, value in (("task", task), ("slots", slots), ("pending_questions", pending_questions)):
            if value is not None:
                body[name] = value
        with tool_errors():
            return results.WorkingMemory.model_validate(
                self._call(ctx, "PATCH", _wm_path(session_id), body=body)
            )

    def memory_session_end(
        self, agent_id: AgentId, user_id: UserId, session_id: SessionId, ctx: Context | None = None
    ) -> results.SessionEnded:
        """End the session: it is reviewed now, and its confirmed slots become facts."""
        agent_id, user_id = caller_scope(agent_id, user_id)
        body = {"agent_id": agent_id, "user_id": user_id, "session_id": session_id}
        with tool_errors():
            answer = self._call(ctx, "POST", "/v1/sessions/end", body=body)
        return results.SessionEnded(session_id=session_id, slots_handed_over=answer["slots_handed_over"])


TOOLS = (
    "memory_write",
    "memory_recall",
    "memory_reflect",
    "memory_update",
    "memory_forget",
    "memory_list",
    "memory_tool_insights",
    "memory_session_get",
    "memory_session_set",
    "memory_session_end",
)


# pydantic ends each argument error with a link to its docs: noise for the model and the person reading.
_PYDANTIC_URL = re.compile(r"\n[ \t]*For further information visit https://errors\.pydantic\.dev/\S*")


class HindsightServer(MCPServer):
    """The SDK's server, with argument errors that end with the reason rather than pydantic's URL."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            cleaned = _PYDANTIC_URL.sub("", str(exc))
            if cleaned == str(exc):
                raise
            raise type(exc)(cleaned) from exc.__cause__  # the cause: the SDK logs only its field names


def build_server(gateway: ApiGateway) -> MCPServer:
    server: MCPServer = HindsightServer(name="hindsight", version=__version__, instructions=INSTRUCTIONS)
    tools = MemoryTools(gateway)
    for name in TOOLS:
        server.add_tool(getattr(tools, name), name=name)
    return server


def _path_id(memory_id: str) -> str:
    kind, _, ref = memory_id.partition(":")
    if kind not in ("episode", "semantic") or not ref.isdigit():
        raise ToolError(f"memory_id: expected 'episode:<n>' or 'semantic:<n>', got {memory_id[:64]!r}")
    return memory_id


def _wm_path(session_id: str) -> str:
    from urllib.parse import quote

    return f"/v1/sessions/{quote(session_id, safe='')}/working-memory"
