"""Skip a regular expression on text that cannot match it: a cheap literal pre-check. Pure.

The review's rule tables (injection screening, fact extraction, quality) run about 150 patterns over
every turn, and most of them fail on most turns: an ordinary LoCoMo turn contains none of "ignore",
"disregard", "system prompt"… CPython's `re` has no literal pre-filter for a pattern that starts with
an alternation or a class, so each of them is tried at every position of the text. Yet nearly every
pattern needs one of a few literal strings to be present: `\\b(?:ignore|disregard)\\b.{0,40}\\brules\\b`
cannot match a text without "rules". `required_literals` reads that set off the parsed pattern, and
`Gate.admits` checks it with `str.__contains__` (C speed) before the regex runs at all.

The set is derived from the pattern itself, so it is sound by construction: a text the gate refuses
cannot match. Where it cannot tell (no literal every match must contain, inline case flags, a
parser this Python does not have) the gate admits everything and the pattern runs as before.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


def _private(name: str) -> Any:
    try:  # CPython's own regex parser: private, so a Python without it only loses the speed-up.
        return importlib.import_module(name)
    except ImportError:  # pragma: no cover - CPython 3.11-3.13 have both
        return None


_sre_parse = _private("re._parser")
_c = _private("re._constants")

_REPEATS = (
    frozenset(
        x for x in (getattr(_c, n, None) for n in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT")) if x
    )
    if _c is not None
    else frozenset()
)
_ATOMIC = getattr(_c, "ATOMIC_GROUP", object()) if _c is not None else object()

Literals = frozenset[str]

# Characters outside ASCII that `re.IGNORECASE` equates with an ASCII letter, while `str.lower()`
# does not turn them into it: İ (its full lower case is two characters), dotless ı, long ſ and the
# Kelvin sign. A text holding one is not pre-checked against case-insensitive patterns.
_FOLDS_TO_ASCII = frozenset("\u0130\u0131\u017f\u212a")


def required_literals(pattern: re.Pattern[str]) -> Literals | None:
    """Strings of which every match of `pattern` contains at least one, or None when there is no
    such set (or it cannot be read). For an IGNORECASE pattern the strings are lower-cased."""
    if _sre_parse is None or _c is None:
        return None
    ignorecase = bool(pattern.flags & re.IGNORECASE)
    try:
        found = _needed(_sre_parse.parse(pattern.pattern, pattern.flags))
    except (_InlineCaseFlag, re.error, TypeError, ValueError, AttributeError):
        return None
    if not found or any(not s for s in found):
        return None
    if ignorecase:
        # Only caseless or ASCII characters: their IGNORECASE equivalents are what str.lower() gives,
        # bar the handful in _FOLDS_TO_ASCII.
        if any(not ch.isascii() and ch.lower() != ch.upper() for s in found for ch in s):
            return None
        return frozenset(s.lower() for s in found)
    return found


@dataclass(frozen=True, slots=True)
class Gate:
    """One pattern's literal pre-check: `admits(text)` is False only when the pattern cannot match."""

    literals: Literals | None
    ignorecase: bool

    @classmethod
    def of(cls, pattern: re.Pattern[str]) -> Gate:
        return cls(required_literals(pattern), bool(pattern.flags & re.IGNORECASE))

    def admits(self, text: str) -> bool:
        if self.literals is None:
            return True
        if self.ignorecase:
            lowered = lower_for_gates(text)
            if lowered is None:
                return True
            text = lowered
        return any(map(text.__contains__, self.literals))


class GatedPattern:
    """A compiled pattern behind its gate, for the calls a rule table makes: on a text the gate
    refuses, `search` finds nothing and `sub`/`subn` replace nothing, without running the regex."""

    __slots__ = ("gate", "pattern")

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern = pattern
        self.gate = Gate.of(pattern)

    @classmethod
    def compile(cls, source: str, flags: int = 0) -> GatedPattern:
        return cls(re.compile(source, flags))

    def search(self, text: str) -> re.Match[str] | None:
        return self.pattern.search(text) if self.gate.admits(text) else None

    def sub(self, repl: str, text: str) -> str:
        return self.pattern.sub(repl, text) if self.gate.admits(text) else text

    def subn(self, repl: str, text: str) -> tuple[str, int]:
        return self.pattern.subn(repl, text) if self.gate.admits(text) else (text, 0)


class GateSet:
    """The gates of a table of patterns, checked together: each distinct literal is looked for once
    per text, however many patterns need it (fact rules share "my", "I'm", "我"...)."""

    def __init__(self, patterns: Sequence[re.Pattern[str] | None]) -> None:
        """None stands for a pattern this set does not check (never admitted by it)."""
        self._open: set[int] = set()  # no literal set: always run
        self._folded_all: set[int] = set()  # case-insensitive: run when the text cannot be lower-cased safely
        self._exact: dict[str, list[int]] = {}
        self._folded: dict[str, list[int]] = {}
        for i, pattern in enumerate(patterns):
            if pattern is None:
                continue
            gate = Gate.of(pattern)
            if gate.literals is None:
                self._open.add(i)
                continue
            pool = self._folded if gate.ignorecase else self._exact
            if gate.ignorecase:
                self._folded_all.add(i)
            for literal in gate.literals:
                pool.setdefault(literal, []).append(i)

    def admitted(self, text: str) -> set[int]:
        """Indices of the patterns that may match `text` (the others cannot)."""
        out = set(self._open)
        for literal in filter(text.__contains__, self._exact):
            out.update(self._exact[literal])
        lowered = lower_for_gates(text)
        if lowered is None:
            out |= self._folded_all
        else:
            for literal in filter(lowered.__contains__, self._folded):
                out.update(self._folded[literal])
        return out


def lower_for_gates(text: str) -> str | None:
    """`text` lower-cased for case-insensitive gates, or None if it holds a character that would make
    the lower-cased check unsound (see _FOLDS_TO_ASCII)."""
    if not text.isascii() and not _FOLDS_TO_ASCII.isdisjoint(text):
        return None
    return text.lower()


class _InlineCaseFlag(Exception):
    """A group that switches case sensitivity ((?i:…)): its literals would need their own folding."""


def _best(candidates: list[Literals | None]) -> Literals | None:
    """Of several sets each sufficient on its own, the most selective: longest shortest string."""
    usable = [c for c in candidates if c]
    if not usable:
        return None
    return max(usable, key=lambda s: (min(len(x) for x in s), -len(s)))


def _needed(items: Any) -> Literals | None:
    """The literal set for a sequence of parsed items (see required_literals)."""
    candidates: list[Literals | None] = []
    run: list[str] = []

    def flush() -> None:
        if run:
            candidates.append(frozenset(["".join(run)]))
            run.clear()

    for op, arg in items:
        if op is _c.LITERAL:
            run.append(chr(arg))
            continue
        flush()
        if op is _c.SUBPATTERN:
            _group, add_flags, del_flags, sub = arg
            if (add_flags | del_flags) & re.IGNORECASE:
                raise _InlineCaseFlag
            candidates.append(_needed(sub))
        elif op is _c.BRANCH:
            branches = [_needed(b) for b in arg[1]]
            candidates.append(None if any(b is None for b in branches) else frozenset().union(*branches))  # type: ignore[arg-type]
        elif op in _REPEATS and arg[0] >= 1:
            candidates.append(_needed(arg[2]))
        elif op is _ATOMIC:
            candidates.append(_needed(arg))
        # Anything else (classes, anchors, lookarounds, back-references) only ends the literal run.
    flush()
    return _best(candidates)
