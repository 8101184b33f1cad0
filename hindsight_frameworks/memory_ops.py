"""remember / recall / forget, written once for the LangChain tools and the Agents SDK function tools."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from hindsight_frameworks.transport import Call, Op

RECALL_TEXT_CHARS = 600


@dataclass(frozen=True, slots=True)
class MemoryScope:
    """Whose memory the tools act on: one agent, one user, and the session their writes belong to.
    `source` of what the model asks to remember: "agent" (inferred, trust 0.7) unless told otherwise."""

    agent_id: str
    user_id: str
    session_id: str
    source: str = "agent"


REMEMBER_DOC = (
    "Remember a fact, preference or event about the user for later conversations. "
    "Write one self-contained statement, e.g. 'The user is allergic to peanuts.'"
)
RECALL_DOC = (
    "Search long-term memory for what is known about the user that is relevant to `query`. "
    "Returns one memory per line as '<memory_id> (<score>): <text>'."
)
FORGET_DOC = (
    "Forget one memory by its memory_id (as recall shows it), e.g. because the user asked to; say why."
)


def remember(scope: MemoryScope, content: str) -> Op[str]:
    turn_id = yield Call(
        "write_memory",
        (scope.agent_id, scope.user_id, scope.session_id, "user", content),
        {"turn_id": uuid.uuid4().hex, "source": scope.source},
    )
    return f"Remembered (turn {turn_id})."


def recall(scope: MemoryScope, query: str, k: int = 5) -> Op[str]:
    hits = yield Call("recall", (query,), {"agent_id": scope.agent_id, "user_id": scope.user_id, "k": k})
    if not hits:
        return "Nothing relevant is remembered."
    return "\n".join(
        f"{h['id']} ({float(h['score']):.2f}): {' '.join(h['text'].split())[:RECALL_TEXT_CHARS]}"
        for h in hits
    )


def forget(scope: MemoryScope, memory_id: str, reason: str) -> Op[str]:
    yield Call(
        "forget",
        (memory_id,),
        {"agent_id": scope.agent_id, "user_id": scope.user_id, "reason": reason or "asked by the agent"},
    )
    return f"Forgot {memory_id}."
