"""A LangGraph `BaseStore` on Hindsight (`pip install hindsight-memory[langgraph]`).

Namespaces: `(agent_id, user_id, *path)`. The first two labels are the Hindsight scope (an API key is an
agent's: it reaches that agent's namespaces); the rest is a path inside the scope. A shorter namespace is
refused with LangGraph's `InvalidNamespaceError`, as is any label LangGraph refuses.

- `put` is a `write_memory`: one turn, queued and returned from at once (fire-and-forget, no waiting for
  review). Its turn id is made once per put (so a resent put never doubles) and its metadata carries
  the item and its fact keys (`entity` = the path, `attribute` = the key, `value`): writing a key again
  is a new version, and review's fact chain closes the older one, which recall then no longer returns.
- `get` reads the newest version by key (`GET /v1/turns/latest`); `created_at` is when its first version
  was written, `updated_at` the newest. A put this store made is seen by its own `get` at once, before
  the pipeline has stored it (read your own writes); other readers see it within a second or two, also
  when the write-side screen was unsure of it and left it to review (`held=pending`: review may be
  minutes away, and an item is the application's data, not a recall). A version review quarantines
  as an instruction to the agent is no longer served: the one before it is.
- `search(prefix, query=...)` is a recall in the prefix's scope (`GET /v1/turns/recall`: one request), its
  hits mapped to the items they are
  versions of (each item once, at its best hit's score, with its current value), then `filter`, `offset`
  and `limit`; without a query, the prefix's items, most recently updated first. A search reaches at most
  100 recall hits deep (the API's `k`).
- `delete` is a (soft: audited, reversible) forget of every version of the item.
- `list_namespaces` lists the namespaces of the scopes the caller may read.
- A key, or a path percent-encoded, longer than 2,000 characters, and text with a lone surrogate, are
  refused by every operation with a ValueError (InvalidNamespaceError for the namespace) naming what.
- `ttl` is refused: Hindsight memories do not expire at a set time, they fade with use (decay), and a
  store that pretended otherwise would lie.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    validate_op_namespace,
)

from hindsight_frameworks import keys
from hindsight_frameworks.aclient import AsyncMemoryClient
from hindsight_frameworks.transport import Call, arun, run
from hindsight_frameworks.transport import Op as Steps
from pipeline.client import MemoryClient
from pipeline.ingest.validation import utcnow

MAX_RECALL_K = 100
PAGE = 500
MAX_PENDING = 10_000
SERVED = "pending"  # which held turns a read serves (GET /v1/turns/latest's `held`): see the module doc
DELETE_WAIT_S = 10.0
TTL_REFUSED = (
    "HindsightStore does not support ttl: Hindsight memories are not dropped at a set time, they fade with "
    "disuse (decay: weight = w0 * exp(-0.05 * days since last access), cold below 0.1) and can be forgotten "
    "with delete(); pass ttl=None"
)


@dataclass(frozen=True, slots=True)
class _Pending:
    turn_id: str
    value: dict[str, Any]
    ts: datetime


class HindsightStore(BaseStore):
    """`HindsightStore()` reaches HINDSIGHT_API_URL (and Redis for writes, as MemoryClient does; with
    HINDSIGHT_API_KEY everything goes through the API). `role`: the role of the turns puts write, unless a
    value names its own ("role": "user" | "assistant" | "tool" | "system")."""

    supports_ttl = False

    def __init__(
        self,
        client: MemoryClient | None = None,
        *,
        aclient: AsyncMemoryClient | None = None,
        role: str = "assistant",
    ) -> None:
        self.client = client or MemoryClient()
        self.aclient = aclient or AsyncMemoryClient.like(self.client)
        self.role = role
        # (agent_id, user_id, entity, key) -> this store's newest put not yet seen stored.
        self._pending: OrderedDict[tuple[str, str, str, str], _Pending] = OrderedDict()

    # -- BaseStore --------------------------------------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        return [run(self._op(op), self.client) for op in ops]

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return [await arun(self._op(op), self.aclient) for op in ops]

    def close(self) -> None:
        self.client.close()

    async def aclose(self) -> None:
        await self.aclient.aclose()

    # -- one op -----------------------------------------------------------------------------------------

    def _op(self, op: Op) -> Steps[Result]:
        validate_op_namespace(op)
        if isinstance(op, GetOp | PutOp):
            keys.check_key(op.key)
        if isinstance(op, SearchOp) and op.query is not None:
            keys.utf8(op.query, "query")
        if isinstance(op, GetOp):
            return self._get(op)
        if isinstance(op, SearchOp):
            return self._search(op)
        if isinstance(op, PutOp):
            if op.ttl is not None:
                raise NotImplementedError(TTL_REFUSED)
            return self._delete(op) if op.value is None else self._put(op)
        if isinstance(op, ListNamespacesOp):
            return self._list_namespaces(op)
        raise TypeError(f"HindsightStore: unknown operation {type(op).__name__}")

    def _put(self, op: PutOp) -> Steps[None]:
        assert op.value is not None
        turn = _put_turn(op.namespace, op.key, op.value, index=op.index, role=self.role)
        yield Call(
            "write_memory",
            (turn.scope.agent_id, turn.scope.user_id, turn.session_id, turn.role, turn.content),
            {"turn_id": turn.turn_id, "ts": turn.ts.isoformat(), "metadata": turn.metadata},
        )
        slot = (turn.scope.agent_id, turn.scope.user_id, turn.metadata["entity"], op.key)
        self._pending[slot] = _Pending(turn.turn_id, dict(op.value), turn.ts)
        self._pending.move_to_end(slot)
        while len(self._pending) > MAX_PENDING:
            self._pending.popitem(last=False)
        return None

    def _latest_row(
        self, scope: keys.Scope, entity: str, key: str, *, held: str = SERVED
    ) -> Steps[dict[str, Any] | None]:
        page = yield Call(
            "latest_turns",
            kwargs={
                "agent_id": scope.agent_id,
                "user_id": scope.user_id,
                "entity": entity,
                "attribute": key,
                "limit": 1,
                "held": held,
            },
        )
        rows: list[dict[str, Any]] = page["turns"]
        return rows[0] if rows else None

    def _get(self, op: GetOp) -> Steps[Item | None]:
        scope, path = _split(op.namespace)
        entity = keys.entity_of(path)
        row = yield from self._latest_row(scope, entity, op.key)
        pending = self._seen((scope.agent_id, scope.user_id, entity, op.key), row)
        if pending is not None:
            created = datetime.fromisoformat(row["first_ts"]) if row else pending.ts
            return Item(
                value=pending.value,
                key=op.key,
                namespace=tuple(op.namespace),
                created_at=created,
                updated_at=pending.ts,
            )
        fields = keys.item_fields(row, scope) if row else None
        return Item(**fields) if fields else None

    def _seen(self, slot: tuple[str, str, str, str], row: dict[str, Any] | None) -> _Pending | None:
        """This store's put of `slot` when the stored rows do not show it yet; forgets it once they do."""
        pending = self._pending.get(slot)
        if pending is None:
            return None
        if row is not None and datetime.fromisoformat(row["ts"]) >= pending.ts:
            self._pending.pop(slot, None)
            return None
        return pending

    def _delete(self, op: PutOp) -> Steps[None]:
        scope, path = _split(op.namespace)
        entity = keys.entity_of(path)
        slot = (scope.agent_id, scope.user_id, entity, op.key)
        # Every version, held ones too: a version the screen held would otherwise outlive the delete.
        row = yield from self._latest_row(scope, entity, op.key, held="all")
        waited = 0.0
        # A put of ours still on its way would come back after the forget: wait until it is stored.
        while self._seen(slot, row) is not None and waited < DELETE_WAIT_S:
            yield Call("sleep", kwargs={"s": 0.1})
            waited += 0.1
            row = yield from self._latest_row(scope, entity, op.key, held="all")
        self._pending.pop(slot, None)
        for memory_id in row["versions"] if row else ():
            yield Call(
                "forget",
                (memory_id,),
                {
                    "agent_id": scope.agent_id,
                    "user_id": scope.user_id,
                    "reason": f"LangGraph store delete of {op.key!r}",
                    "actor": "langgraph-store",
                },
            )
        return None

    def _search(self, op: SearchOp) -> Steps[list[SearchItem]]:
        scope, path = _split(op.namespace_prefix, what="search's namespace_prefix")
        prefix = keys.entity_of(path)
        want = op.offset + op.limit
        if op.query:
            found = yield from self._recall_items(scope, prefix, op.query, op.filter, want)
        else:
            found = yield from self._listed_items(scope, prefix, op.filter, want)
        return found[op.offset : want]

    def _recall_items(
        self, scope: keys.Scope, prefix: str, query: str, where: dict[str, Any] | None, want: int
    ) -> Steps[list[SearchItem]]:
        # Hits of other paths, of turns that are no store items, and of older versions of one item all
        # share the recall's k: ask for more than the page when a filter or a sub-path narrows it.
        k = min(MAX_RECALL_K, want if not where and prefix == keys.ENTITY_PREFIX else max(want * 3, 20))
        answer = yield Call(
            "recall_keyed",
            (query,),
            {
                "agent_id": scope.agent_id,
                "user_id": scope.user_id,
                "k": k,
                "entity_prefix": prefix,
                "held": SERVED,
            },
        )
        hits, rows = answer["results"], answer["turns"]
        by_turn: dict[str, dict[str, Any]] = {}
        for row in rows:
            if keys.searchable(row):
                for t in row.get("version_turn_ids", ()):
                    by_turn[t] = row
        out: list[SearchItem] = []
        seen: set[str] = set()
        for hit in hits:
            for t in hit["source_turn_ids"]:
                row = by_turn.get(t)
                if row is None or row["turn_id"] in seen:
                    continue
                seen.add(row["turn_id"])
                fields = keys.item_fields(row, scope)
                if fields and (not where or keys.matches(fields["value"], where)):
                    out.append(SearchItem(score=float(hit["score"]), **fields))
        return out

    def _listed_items(
        self, scope: keys.Scope, prefix: str, where: dict[str, Any] | None, want: int
    ) -> Steps[list[SearchItem]]:
        out: list[SearchItem] = []
        offset: int | None = 0
        while offset is not None and len(out) < want:
            page = yield Call(
                "latest_turns",
                kwargs={
                    "agent_id": scope.agent_id,
                    "user_id": scope.user_id,
                    "entity_prefix": prefix,
                    # Pages of at most the API's largest: offset 495 + limit 10 is two pages, not a 422.
                    "limit": PAGE if where else min(PAGE, max(want, 1)),
                    "offset": offset,
                    "held": SERVED,
                },
            )
            for row in page["turns"]:
                fields = keys.item_fields(row, scope)
                if fields and (not where or keys.matches(fields["value"], where)):
                    out.append(SearchItem(**fields))
            offset = page["next_offset"]
        return out

    def _list_namespaces(self, op: ListNamespacesOp) -> Steps[list[tuple[str, ...]]]:
        scopes = yield Call("scopes")
        found: set[tuple[str, ...]] = set()
        for s in scopes:
            scope = keys.Scope(s["agent_id"], s["user_id"])
            if not _may_match(op, (scope.agent_id, scope.user_id)):
                continue
            offset: int | None = 0
            while offset is not None:
                page = yield Call(
                    "latest_turns",
                    kwargs={
                        "agent_id": scope.agent_id,
                        "user_id": scope.user_id,
                        "entity_prefix": keys.ENTITY_PREFIX,
                        "limit": PAGE,
                        "offset": offset,
                        "held": SERVED,
                    },
                )
                for row in page["turns"]:
                    fields = keys.item_fields(row, scope)
                    if fields:
                        found.add(fields["namespace"])
                offset = page["next_offset"]
        names = [
            ns
            for ns in found
            if all(keys.namespace_matches(ns, c.match_type, c.path) for c in op.match_conditions or ())
        ]
        if op.max_depth is not None:
            names = list({ns[: op.max_depth] for ns in names})
        return sorted(names)[op.offset : op.offset + op.limit]


def _split(namespace: Sequence[str], *, what: str = "namespace") -> tuple[keys.Scope, tuple[str, ...]]:
    try:
        return keys.split_namespace(namespace)
    except keys.NamespaceError as exc:
        raise InvalidNamespaceError(f"{what}: {exc}") from None


def _put_turn(namespace: Sequence[str], key: str, value: Any, *, index: Any, role: str) -> keys.PutTurn:
    try:
        return keys.put_turn(namespace, key, value, index=index, default_role=role, now=utcnow())
    except keys.NamespaceError as exc:
        raise InvalidNamespaceError(str(exc)) from None


def _may_match(op: ListNamespacesOp, scope: tuple[str, str]) -> bool:
    """Whether a scope's namespaces can match the op's prefix conditions (skips reading other scopes)."""
    for c in op.match_conditions or ():
        if c.match_type == "prefix" and not keys.namespace_matches(scope, "prefix", tuple(c.path)[:2]):
            return False
    return True
