"""One error tree. Adapters translate vendor exceptions into these at the edge."""

from __future__ import annotations


class HindsightError(Exception):
    """Base of every error this package raises on purpose."""


class ConfigError(HindsightError):
    """The configuration cannot work (missing URL, bad value)."""


class PermanentError(HindsightError):
    """Retrying will not help: the input or the state is wrong."""


class InvalidTurn(PermanentError):
    """A turn or stream entry failed validation. `reason` names what is wrong."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class TurnIdConflict(InvalidTurn):
    """One request or file holds two different turns under one turn id of one scope (HTTP 409)."""


class InvalidValue(PermanentError):
    """A value the store cannot hold (a NUL character in a text, an id beyond 64 bits): the caller's fault."""


class NotFound(PermanentError):
    """The thing asked for does not exist (or is not visible to the caller)."""


class Unauthenticated(PermanentError):
    """No API key, or one that is unknown, malformed or revoked (HTTP 401)."""


class Forbidden(PermanentError):
    """A valid API key that may not do this to that space (HTTP 403)."""


class RetryableError(HindsightError):
    """An upstream is down, slow or rate limited; the same call may succeed later."""


class StoreUnavailable(RetryableError):
    """PostgreSQL cannot be reached."""


class QueueUnavailable(RetryableError):
    """Redis cannot be reached."""


class IndexUnavailable(RetryableError):
    """The vector index cannot be reached."""
