"""An OpenAI-compatible chat endpoint, asked for JSON only, behind a daily budget.

The LLM is optional: nothing in the pipeline depends on it being configured or reachable. This adapter
only turns "ask for a JSON object of this shape" into one HTTP call with retries, and vendor failures
into the package's error tree: LLMUnavailable (retry later), LLMBadAnswer (the answer is unusable),
LLMRejected (the endpoint refuses the request: wrong key, model or URL) and LLMBudgetExceeded.

The API key lives in a SecretStr and in the HTTP client's default headers only; it is never logged and
never put in an exception message.
"""

from __future__ import annotations

import email.utils
import math
import random
import re
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, date, datetime
from types import TracebackType
from typing import Any, Protocol, TypeVar

import httpx
import redis
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from pipeline.adapters.redis_stream import translate_errors
from pipeline.core.config import LLMSettings
from pipeline.core.errors import ConfigError, HindsightError, PermanentError, RetryableError
from pipeline.core.logging import get_logger

log = get_logger(__name__)

T = TypeVar("T", bound=BaseModel)
Clock = Callable[[], datetime]

# Backoff between attempts: BASE * 2**attempt, half of it jittered so workers rate limited together
# do not come back together. A Retry-After header replaces the computed delay; both are capped so a
# misbehaving endpoint cannot park a review worker for minutes.
BACKOFF_BASE_S = 0.5
MAX_SLEEP_S = 20.0
# Rate limits, overload and gateway errors are worth another try; other 4xx are our fault or config.
RETRY_STATUSES = frozenset({408, 409, 425, 429})
# With max_tokens in the hundreds a real answer is a few KB; anything this big is broken or hostile,
# and is cut off while streaming rather than read into memory whole.
MAX_RESPONSE_BYTES = 2 * 1024 * 1024
BUDGET_TTL_S = 2 * 24 * 3600  # a day's counters outlive the day so late workers still see them

_FENCE = re.compile(r"^\s*```[a-zA-Z0-9_-]*[ \t]*\n?(?P<body>.*?)\n?[ \t]*```\s*$", re.DOTALL)


# -- errors ------------------------------------------------------------------------------------------


class LLMError(HindsightError):
    """Base of the LLM adapter's errors, so callers that fall back to rules can catch one class."""


class LLMUnavailable(LLMError, RetryableError):
    """The endpoint could not be reached, timed out or stayed rate limited / failing after retries."""


class LLMBudgetExceeded(LLMError, RetryableError):
    """Today's call or token budget is spent; tomorrow (UTC) it is not."""


class LLMBadAnswer(LLMError, PermanentError):
    """The endpoint answered, but not with JSON of the asked shape. Asking again the same way won't help."""


class LLMRejected(LLMError, PermanentError):
    """The endpoint refused the request (HTTP 4xx other than rate limiting): key, model or URL is wrong."""


# -- budget ------------------------------------------------------------------------------------------


class Budget(Protocol):
    """A daily allowance of calls and tokens. `try_acquire` before a call, `record` after it."""

    def try_acquire(self) -> bool:
        """Take one call from today's allowance; False (and nothing taken) when calls or tokens are spent."""
        ...

    def record(self, tokens: int) -> None:
        """Charge the tokens a finished call used."""
        ...

    def remaining(self) -> dict[str, int]:
        """{"calls": ..., "tokens": ...} left today, never negative."""
        ...


def utc_now() -> datetime:
    return datetime.now(UTC)


def _utc_day(clock: Clock) -> date:
    now = clock()
    # A naive datetime is taken as UTC already: the budget day must not move with the host's zone.
    return (now.astimezone(UTC) if now.tzinfo else now).date()


class InMemoryBudget:
    """One process's budget. For tests and single-process use; workers should share a RedisBudget."""

    def __init__(self, daily_calls: int, daily_tokens: int, clock: Clock = utc_now) -> None:
        self.daily_calls = daily_calls
        self.daily_tokens = daily_tokens
        self._clock = clock
        self._lock = threading.Lock()
        self._day = _utc_day(clock)
        self._calls = 0
        self._tokens = 0

    def _roll(self) -> None:
        today = _utc_day(self._clock)
        if today != self._day:
            self._day, self._calls, self._tokens = today, 0, 0

    def try_acquire(self) -> bool:
        with self._lock:
            self._roll()
            if self._calls >= self.daily_calls or self._tokens >= self.daily_tokens:
                return False
            self._calls += 1
            return True

    def record(self, tokens: int) -> None:
        with self._lock:
            self._roll()
            self._tokens += max(0, tokens)

    def remaining(self) -> dict[str, int]:
        with self._lock:
            self._roll()
            return {
                "calls": max(0, self.daily_calls - self._calls),
                "tokens": max(0, self.daily_tokens - self._tokens),
            }


class RedisBudget:
    """The budget shared by every worker: `{prefix}:{YYYY-MM-DD}:calls` and `:tokens`, expiring after 2 days.

    Redis errors surface as QueueUnavailable (the caller falls back to rules, like any LLM failure).
    """

    def __init__(
        self,
        redis_client: redis.Redis,
        daily_calls: int,
        daily_tokens: int,
        clock: Clock = utc_now,
        key_prefix: str = "hindsight:llm:budget",
    ) -> None:
        self._redis = redis_client
        self.daily_calls = daily_calls
        self.daily_tokens = daily_tokens
        self._clock = clock
        self.key_prefix = key_prefix

    def _keys(self) -> tuple[str, str]:
        day = _utc_day(self._clock).isoformat()
        return f"{self.key_prefix}:{day}:calls", f"{self.key_prefix}:{day}:tokens"

    def try_acquire(self) -> bool:
        calls_key, tokens_key = self._keys()
        with translate_errors():
            # INCR first and give the call back when over: check-and-take is then atomic per call
            # without a Lua script, at the price of a refusal or two right at the limit under contention.
            pipe = self._redis.pipeline(transaction=True)
            pipe.incr(calls_key)
            pipe.expire(calls_key, BUDGET_TTL_S)
            pipe.get(tokens_key)
            calls, _, tokens = pipe.execute()
            if int(calls) > self.daily_calls or _int(tokens) >= self.daily_tokens:
                self._redis.decr(calls_key)
                return False
        return True

    def record(self, tokens: int) -> None:
        if tokens <= 0:
            return
        _, tokens_key = self._keys()
        with translate_errors():
            pipe = self._redis.pipeline(transaction=True)
            pipe.incrby(tokens_key, tokens)
            pipe.expire(tokens_key, BUDGET_TTL_S)
            pipe.execute()

    def remaining(self) -> dict[str, int]:
        calls_key, tokens_key = self._keys()
        with translate_errors():
            calls, tokens = self._redis.mget([calls_key, tokens_key])
        return {
            "calls": max(0, self.daily_calls - _int(calls)),
            "tokens": max(0, self.daily_tokens - _int(tokens)),
        }


def _int(raw: Any) -> int:
    return int(raw) if raw is not None else 0


# -- the wire ----------------------------------------------------------------------------------------


class _Message(BaseModel):
    model_config = ConfigDict(extra="ignore")
    content: str | None = None


class _Choice(BaseModel):
    model_config = ConfigDict(extra="ignore")
    message: _Message


class _Envelope(BaseModel):
    """The part of a chat completion we read. `usage` stays loose: an odd usage block is no reason to fail."""

    model_config = ConfigDict(extra="ignore")
    choices: list[_Choice] = Field(min_length=1)
    usage: Any = None


def strip_fences(text: str) -> str:
    """Models asked for JSON still wrap it in ```json fences now and then."""
    match = _FENCE.match(text)
    return match.group("body") if match else text.strip()


def _usage_tokens(usage: Any) -> int | None:
    if isinstance(usage, dict):
        total = usage.get("total_tokens")
        if isinstance(total, int) and not isinstance(total, bool) and total >= 0:
            return total
    return None


def _estimate_tokens(*texts: str) -> int:
    # ~4 characters a token for English; good enough to keep a budget when the endpoint reports none.
    return max(1, math.ceil(sum(len(t) for t in texts) / 4))


def parse_retry_after(value: str | None, now: Clock = utc_now) -> float | None:
    """Seconds from a Retry-After header (delta-seconds or an HTTP date); None when absent or garbage."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - now()).total_seconds()
    return max(0.0, seconds) if math.isfinite(seconds) else None


def _retryable_status(status: int) -> bool:
    return status in RETRY_STATUSES or status >= 500


class _Attempt:
    """What one HTTP attempt came to: a body, or a reason to retry (with the server's wish, if any)."""

    __slots__ = ("body", "retry_after", "why")

    def __init__(self, body: bytes | None = None, why: str = "", retry_after: float | None = None) -> None:
        self.body = body
        self.why = why
        self.retry_after = retry_after


# -- the client --------------------------------------------------------------------------------------


class OpenAICompatibleClient:
    """POST {base_url}/chat/completions with response_format json_object, temperature 0.

    Thread-safe (one httpx.Client underneath); create one per process and `close()` it on shutdown.
    """

    def __init__(
        self,
        settings: LLMSettings,
        budget: Budget,
        *,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
    ) -> None:
        if not settings.base_url or not settings.base_url.startswith(("http://", "https://")):
            raise ConfigError("llm.base_url must be an http(s) URL such as https://api.openai.com/v1")
        self.settings = settings
        self.model = settings.model
        self.budget = budget
        self._sleep = sleep
        self._rng = rng or random.Random()  # jitter only: no need for a secure source
        headers = {"Accept": "application/json"}
        if settings.api_key is not None and settings.api_key.get_secret_value():
            headers["Authorization"] = f"Bearer {settings.api_key.get_secret_value()}"
        self._http = httpx.Client(
            base_url=settings.base_url.rstrip("/"),
            headers=headers,
            timeout=httpx.Timeout(settings.timeout_s),
            transport=transport,
            follow_redirects=False,  # a redirect would re-send the key somewhere we were not told about
        )

    def __repr__(self) -> str:
        return f"OpenAICompatibleClient(model={self.model!r})"

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> OpenAICompatibleClient:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def complete_json(self, system: str, user: str, schema: type[T], *, max_tokens: int = 400) -> T:
        """One JSON answer validated against `schema`.

        Raises LLMBudgetExceeded (no request made), LLMUnavailable, LLMRejected or LLMBadAnswer.
        """
        if not self.budget.try_acquire():
            log.info("llm_budget_exhausted", model=self.model)
            raise LLMBudgetExceeded("today's LLM budget is spent")
        payload = {
            "model": self.model,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
            "temperature": 0,
            "max_tokens": max_tokens,
            "response_format": {"type": "json_object"},
        }
        started = time.perf_counter()
        body = self._post_with_retries(payload)
        envelope = self._envelope(body)
        content = envelope.choices[0].message.content
        tokens = _usage_tokens(envelope.usage) or _estimate_tokens(system, user, content or "")
        self._record(tokens)
        log.debug(
            "llm_call",
            model=self.model,
            schema=schema.__name__,
            tokens=tokens,
            duration_ms=round((time.perf_counter() - started) * 1000, 1),
        )
        if content is None:
            raise LLMBadAnswer("the answer has no message content (refused?)")
        return _validate(strip_fences(content), schema)

    # -- one call, several attempts -------------------------------------------------------------------

    def _post_with_retries(self, payload: dict[str, Any]) -> bytes:
        attempts = self.settings.max_retries + 1
        for attempt in range(attempts):
            outcome = self._attempt(payload)
            if outcome.body is not None:
                return outcome.body
            if attempt + 1 < attempts:
                delay = self._delay(attempt, outcome.retry_after)
                log.warning(
                    "llm_retry",
                    model=self.model,
                    attempt=attempt + 1,
                    why=outcome.why,
                    sleep_s=round(delay, 3),
                )
                self._sleep(delay)
            else:
                log.warning("llm_unavailable", model=self.model, attempts=attempts, why=outcome.why)
                raise LLMUnavailable(f"LLM endpoint failed {attempts} time(s); last: {outcome.why}")
        raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises

    def _attempt(self, payload: dict[str, Any]) -> _Attempt:
        try:
            with self._http.stream("POST", "/chat/completions", json=payload) as response:
                status = response.status_code
                if 200 <= status < 300:
                    return _Attempt(body=_read_capped(response.iter_bytes(), MAX_RESPONSE_BYTES))
                if _retryable_status(status):
                    retry_after = parse_retry_after(response.headers.get("retry-after"))
                    return _Attempt(why=f"HTTP {status}", retry_after=retry_after)
                raise LLMRejected(f"LLM endpoint refused the request: HTTP {status} {response.reason_phrase}")
        except httpx.HTTPError as exc:
            # Timeouts, refused/reset connections, protocol errors. The message never holds the key.
            return _Attempt(why=f"{type(exc).__name__}: {exc}"[:300])

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(retry_after, MAX_SLEEP_S)
        base = min(BACKOFF_BASE_S * 2**attempt, MAX_SLEEP_S)
        return base / 2 + self._rng.uniform(0, base / 2)

    def _envelope(self, body: bytes) -> _Envelope:
        try:
            return _Envelope.model_validate_json(body)
        except ValidationError as exc:
            raise LLMBadAnswer(f"not a chat completion: {_first_error(exc)}") from None

    def _record(self, tokens: int) -> None:
        # The answer is already paid for: losing the count is better than losing the answer.
        try:
            self.budget.record(tokens)
        except RetryableError as exc:
            log.warning("llm_budget_record_failed", error=type(exc).__name__, tokens=tokens)


def _read_capped(chunks: Iterator[bytes], cap: int) -> bytes:
    parts: list[bytes] = []
    size = 0
    for chunk in chunks:
        size += len(chunk)
        if size > cap:
            raise LLMBadAnswer(f"answer larger than {cap} bytes")
        parts.append(chunk)
    return b"".join(parts)


def _validate(text: str, schema: type[T]) -> T:
    try:
        # pydantic's JSON parser bounds nesting depth, so a pathological answer fails here cleanly
        # instead of with a RecursionError.
        return schema.model_validate_json(text)
    except ValidationError as exc:
        log.info("llm_bad_answer", schema=schema.__name__, errors=exc.error_count(), chars=len(text))
        raise LLMBadAnswer(f"answer is not a valid {schema.__name__}: {_first_error(exc)}") from None


def _first_error(exc: ValidationError) -> str:
    # Location and type only: the offending input may be large or hold user data.
    err = exc.errors(include_url=False, include_input=False)[0]
    where = ".".join(str(p) for p in err["loc"]) or "<root>"
    return f"{exc.error_count()} error(s), first at {where}: {err['type']}"


def make_client(
    settings: LLMSettings, *, redis_client: redis.Redis | None = None, clock: Clock = utc_now
) -> OpenAICompatibleClient | None:
    """The process's client, or None when no LLM is configured (the pipeline then runs on rules only).

    With `redis_client` the daily budget is shared by every worker; without it each process counts alone.
    """
    if not settings.enabled:
        return None
    budget: Budget = (
        RedisBudget(redis_client, settings.daily_calls, settings.daily_tokens, clock)
        if redis_client is not None
        else InMemoryBudget(settings.daily_calls, settings.daily_tokens, clock)
    )
    return OpenAICompatibleClient(settings, budget)
