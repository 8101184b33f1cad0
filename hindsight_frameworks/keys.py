"""How a LangGraph store item becomes a Hindsight turn and back. Pure: no I/O, `now` passed in.

A namespace is `(agent_id, user_id, *path)`: its first two labels are the Hindsight scope, the rest a path
inside it. An item `(namespace, key)` is a chain of turns of that scope, one per `put`, tied together by
their metadata as a fact chain: `entity` = "lg:/" + the path's labels, each followed by "/" (percent-
encoded), `attribute` = the key, `value` = the item's value as canonical JSON (a digest when long). Review
closes the older version when a newer one arrives, as for any fact; the item itself rides along in
`metadata.store` ({"namespace", "key", "value", "index"}) and is what `get` and `search` return.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import quote

from pipeline.core.models import MAX_ID_CHARS, ROLES

ENTITY_PREFIX = "lg:/"
STORE_META = "store"
# metadata is at most 16 KiB as JSON (DESIGN §3): the item's value, its key and the fact keys share it.
MAX_VALUE_BYTES = 12 * 1024
MAX_FACT_VALUE_CHARS = 500
# The longest metadata.entity (a path, percent-encoded) and metadata.attribute (a key) the keyed reads take
# (GET /v1/turns/latest, /v1/turns/recall): an item the store could not read back, it does not write.
MAX_KEY_CHARS = 2000
TEXT_FIELDS = ("text", "content", "memory", "data")


class NamespaceError(ValueError):
    """A namespace that names no Hindsight scope (raised as LangGraph's InvalidNamespaceError by the store)."""


@dataclass(frozen=True, slots=True)
class Scope:
    agent_id: str
    user_id: str


def utf8(text: str, what: str) -> str:
    """`text` when it can be sent (UTF-8); a lone surrogate is the caller's error, said as such (else
    hashing, percent-encoding or httpx raised a bare UnicodeEncodeError)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(f"{what}: not valid UTF-8 (contains a lone surrogate)") from None
    return text


def check_key(key: str) -> str:
    """A store item's key, refused unless the store can write it and read it back."""
    if not isinstance(key, str):
        raise ValueError(f"key: must be a string, got {type(key).__name__}")
    utf8(key, "key")
    if len(key) > MAX_KEY_CHARS:
        raise ValueError(
            f"key: {len(key)} characters, more than the {MAX_KEY_CHARS} a Hindsight store key may have"
        )
    return key


def _id_label(label: str, name: str, namespace: Sequence[str]) -> str:
    if len(label) > MAX_ID_CHARS or not label.isprintable() or label.split() != [label]:
        raise NamespaceError(
            f"namespace {tuple(namespace)!r}: label {name} ({label[:40]!r}) must be one word of printable "
            f"characters, at most {MAX_ID_CHARS} long: it is a Hindsight {name}"
        )
    return label


def split_namespace(namespace: Sequence[str]) -> tuple[Scope, tuple[str, ...]]:
    """(scope, path) of a namespace (agent_id, user_id, *path); NamespaceError when it names no scope."""
    if len(namespace) < 2:
        raise NamespaceError(
            f"namespace {tuple(namespace)!r}: a Hindsight store namespace starts with (agent_id, user_id), "
            "e.g. ('support-bot', 'u42', 'preferences')"
        )
    for label in namespace:
        try:
            utf8(label, "label")
        except ValueError:
            raise NamespaceError(
                f"namespace {tuple(namespace)!r}: a label is not valid UTF-8 (contains a lone surrogate)"
            ) from None
    agent_id = _id_label(namespace[0], "agent_id", namespace)
    user_id = _id_label(namespace[1], "user_id", namespace)
    path = tuple(namespace[2:])
    entity = entity_of(path)
    if len(entity) > MAX_KEY_CHARS:
        raise NamespaceError(
            f"namespace {tuple(namespace)!r}: its path is {len(entity)} characters percent-encoded, more than "
            f"the {MAX_KEY_CHARS} a Hindsight store path may have"
        )
    return Scope(agent_id, user_id), path


def entity_of(path: Sequence[str]) -> str:
    """The fact-chain entity of a path: every label followed by "/", so a prefix of labels is a prefix of
    the entity and ("a",) never matches ("ab",)."""
    return ENTITY_PREFIX + "".join(quote(label, safe="") + "/" for label in path)


def session_of(entity: str) -> str:
    """The Hindsight session a path's puts go to (a valid id whatever the labels)."""
    if len(entity) <= 120:
        return entity
    return ENTITY_PREFIX + hashlib.sha256(entity.encode()).hexdigest()[:32]


def new_turn_id(entity: str, key: str, now: datetime) -> str:
    """A fresh version id for one put of (entity, key): time-ordered, made once per put so that resending
    the same put never doubles it (the turn id is the idempotency key of its scope)."""
    digest = hashlib.sha256(f"{entity}\0{key}".encode()).hexdigest()[:24]
    return f"lg:{digest}@{int(now.timestamp() * 1_000_000):x}{secrets.token_hex(3)}"


def canonical(value: Mapping[str, Any]) -> str:
    try:
        return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"value: a store item's value must be a JSON object ({exc})") from None


def fact_value(encoded: str) -> str:
    if len(encoded) <= MAX_FACT_VALUE_CHARS:
        return encoded
    return "sha256:" + hashlib.sha256(encoded.encode()).hexdigest()


def _at(value: Mapping[str, Any], path: str) -> Any:
    here: Any = value
    for part in path.split("."):
        if not isinstance(here, Mapping) or part not in here:
            return None
        here = here[part]
    return here


def _line(item: Any) -> str:
    return item if isinstance(item, str) else json.dumps(item, ensure_ascii=False, sort_keys=True)


def render(value: Mapping[str, Any], index: Sequence[str] | None) -> str:
    """The turn's text (what recall reads): the `index` fields when given; else the first of text /
    content / memory / data that is a string; else one "field: value" line per field."""
    if index:
        parts = [_line(v) for v in (_at(value, p) for p in index) if v not in (None, "")]
        if parts:
            return "\n".join(parts)
    for name in TEXT_FIELDS:
        if isinstance(value.get(name), str) and value[name].strip():
            return str(value[name])
    lines = [f"{k}: {_line(v)}" for k, v in value.items() if k != "role" and v not in (None, "")]
    return "\n".join(lines) or canonical(value)


@dataclass(frozen=True, slots=True)
class PutTurn:
    """The turn one put writes (MemoryClient.write_memory's arguments)."""

    scope: Scope
    session_id: str
    role: str
    content: str
    turn_id: str
    metadata: dict[str, Any]
    ts: datetime


def put_turn(
    namespace: Sequence[str],
    key: str,
    value: Mapping[str, Any],
    *,
    index: Sequence[str] | bool | None,
    default_role: str,
    now: datetime,
) -> PutTurn:
    """The turn for `put(namespace, key, value, index)`. A value's own "role" (user | assistant | tool |
    system) is the turn's role; otherwise `default_role`. `index=False` stores the item without letting
    search find it; a list of fields says what the turn's text is made of."""
    scope, path = split_namespace(namespace)
    check_key(key)
    if not isinstance(value, Mapping):
        raise ValueError(f"value: a store item's value must be a dict, got {type(value).__name__}")
    encoded = utf8(canonical(value), "value")
    if len(encoded.encode()) > MAX_VALUE_BYTES:
        raise ValueError(
            f"value: {len(encoded.encode())} bytes as JSON, more than the {MAX_VALUE_BYTES} a Hindsight store "
            "item may hold (it travels in the turn's metadata); store the large part as its own text item"
        )
    entity = entity_of(path)
    role = value.get("role") if value.get("role") in ROLES else default_role
    fields = list(index) if isinstance(index, list | tuple) else None
    meta = {
        "entity": entity,
        "attribute": key,
        "value": fact_value(encoded),
        STORE_META: {"namespace": list(path), "key": key, "value": dict(value), "index": index is not False},
    }
    return PutTurn(
        scope=scope,
        session_id=session_of(entity),
        role=str(role),
        content=render(value, fields),
        turn_id=new_turn_id(entity, key, now),
        metadata=meta,
        ts=now,
    )


def item_fields(row: Mapping[str, Any], scope: Scope) -> dict[str, Any] | None:
    """Item fields (namespace, key, value, created_at, updated_at) of a /v1/turns/latest row; None when the
    row is not a store item."""
    stored = (row.get("metadata") or {}).get(STORE_META)
    if not isinstance(stored, Mapping) or not isinstance(stored.get("value"), Mapping):
        return None
    return {
        "namespace": (scope.agent_id, scope.user_id, *stored.get("namespace", ())),
        "key": str(stored.get("key", row.get("attribute"))),
        "value": dict(stored["value"]),
        "created_at": datetime.fromisoformat(row["first_ts"]),
        "updated_at": datetime.fromisoformat(row["ts"]),
    }


def searchable(row: Mapping[str, Any]) -> bool:
    stored = (row.get("metadata") or {}).get(STORE_META) or {}
    return bool(stored.get("index", True))


def matches(value: Any, condition: Any) -> bool:
    """LangGraph's filter semantics: equality (nested objects and lists compared field by field) or an
    operator object ($eq, $ne, $gt, $gte, $lt, $lte)."""
    if isinstance(condition, Mapping):
        if any(str(k).startswith("$") for k in condition):
            return all(_operator(value, op, arg) for op, arg in condition.items())
        return isinstance(value, Mapping) and all(matches(value.get(k), v) for k, v in condition.items())
    if isinstance(condition, list | tuple):
        return (
            isinstance(value, list | tuple)
            and len(value) == len(condition)
            and all(matches(v, c) for v, c in zip(value, condition, strict=True))
        )
    return bool(value == condition)


def _operator(value: Any, op: str, arg: Any) -> bool:
    if op == "$eq":
        return bool(value == arg)
    if op == "$ne":
        return bool(value != arg)
    if op not in ("$gt", "$gte", "$lt", "$lte"):
        raise ValueError(f"filter: unsupported operator {op!r} (use $eq, $ne, $gt, $gte, $lt, $lte)")
    try:
        a, b = float(value), float(arg)
    except (TypeError, ValueError):
        return False
    return {"$gt": a > b, "$gte": a >= b, "$lt": a < b, "$lte": a <= b}[op]


def namespace_matches(namespace: tuple[str, ...], kind: str, path: Sequence[str]) -> bool:
    """A ListNamespacesOp match condition ("prefix" | "suffix"; "*" matches any label)."""
    if len(namespace) < len(path):
        return False
    labels = namespace[: len(path)] if kind == "prefix" else namespace[len(namespace) - len(path) :]
    return all(p in ("*", n) for n, p in zip(labels, path, strict=True))
