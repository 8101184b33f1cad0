"""Rule-based quality score of one conversation turn (DESIGN §2). Pure: no I/O, no models.

Four dimensions, each in [0, 1], for English and Chinese text:

- density: content words (English words minus stopwords/filler; each CJK character counts as 0.6 of a
  word, minus particles), plus bonuses for numbers, dates, money, contacts, names, places and titles.
- timeliness: how long the statement stays true (identity, family, allergies, habits high; "today" low).
- uniqueness: 1 - max cosine with the scope's kept memories.
- actionability: preferences, constraints, instructions and corrections high; plain questions low.

rule_score = weighted mean x content gate x novelty gate x staleness gate. The gates exist because a
weighted sum alone lets one dimension carry a worthless turn: "ok" is perfectly novel, and a verbatim
repeat of a good fact is still dense and actionable. Both must land in cold storage, so thin content,
near-duplicates and "right now" statements scale the whole score down instead of just losing their share
of it. total = rule_score x source trust, so an agent/external turn (trust 0.7) is never kept on rules
alone: at best it reaches the judge band.
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass

from pipeline.core.models import QualityScore
from pipeline.review.quality_lexicon import (
    _CJK,
    ABOUT_USER,
    ACTION_KINDS,
    ACTION_VALUE,
    DATE_NUMERIC,
    DATE_PHRASE,
    DATE_WORDS,
    DURABLE,
    EMAIL,
    EN_FILLER,
    EN_STOPWORDS,
    EN_WORD,
    FIRST_PERSON,
    HAS_DIGIT,
    LATIN_WORD,
    MOMENTARY,
    MONEY,
    NOT_NAMES,
    NUMBER,
    PHONE,
    PLEASANTRIES,
    POLITE,
    QUESTION,
    REQUEST,
    SENTENCE,
    SENTENCE_WITH_END,
    TITLE,
    TRANSIENT,
    URL,
    WHOLE_FILLER,
    WORD,
    ZH_NAME,
    ZH_PLACE,
    ZH_STOPCHARS,
)


@dataclass(frozen=True)
class QualityWeights:
    """Weights of the four dimensions. The score divides by their sum, so they need not add up to 1."""

    density: float = 0.35
    timeliness: float = 0.15
    uniqueness: float = 0.2
    actionability: float = 0.3


SOURCE_TRUST: dict[str, float] = {"user": 1.0, "tool": 0.9, "agent": 0.7, "external": 0.7}
UNKNOWN_TRUST = 0.7  # an unknown source is trusted like something inferred

# Below this density the content gate scales the score down: gate = min(1, GATE_FLOOR + GATE_SLOPE * d).
# Two content words (density ~0.5) pass in full; "ok" keeps only GATE_FLOOR.
GATE_FLOOR = 0.25
GATE_SLOPE = 2.0
# Uniqueness below this knee scales the score down (0.1 = cosine 0.9). With MiniLM a cosine of 0.8-0.9 is
# "same topic", not "same fact" ("I won an international tournament yesterday!" beside an earlier turn
# about the tournament): at a knee of 0.2 those turns fell into the judge band and, with no LLM, went
# cold, ~2% of LoCoMo's evidence turns. Near-verbatim repeats (0.95+) still land cold. Corrections
# restate what they correct, so they sit close to it by nature and get a lower knee.
NOVELTY_KNEE = 0.1
CORRECTION_NOVELTY_KNEE = 0.05
# A pleasantry may carry one content word (or a two-character Chinese word) and still be one.
PLEASANTRY_MAX_CONTENT = 1.2
NO_CONTENT = "no_content"  # the reason a turn of nothing but pleasantries or filler carries
# A statement that is stale by tomorrow ("I'm tired right now") cannot be kept on its other merits alone:
# gate = min(1, STALENESS_FLOOR + timeliness), so only timeliness below 0.4 bites.
STALENESS_FLOOR = 0.6
DUPLICATE_LIKE_AT = 0.9
CJK_CHAR_WEIGHT = 0.6  # a Chinese word is one to two characters
# Content words the non-question sentences of a turn need for it to count as a statement, not a question.
STATEMENT_MIN_CONTENT = 4


def _has_date(text: str) -> bool:
    return (
        not DATE_WORDS.isdisjoint(WORD.findall(text.lower()))
        or bool(HAS_DIGIT.search(text) and DATE_NUMERIC.search(text))
        or bool(DATE_PHRASE.search(text))
    )


def _clamp(x: float) -> float:
    return 0.0 if math.isnan(x) else min(1.0, max(0.0, x))


def _normalise(content: str) -> str:
    # NFKC folds full-width letters/digits and compatibility forms; control characters become spaces.
    text = unicodedata.normalize("NFKC", content)
    if text.isprintable():  # no character of category "Other" (C*): skip the per-character pass
        return text.strip()
    return "".join(" " if unicodedata.category(ch).startswith("C") else ch for ch in text).strip()


def _strip_pleasantries(text: str) -> tuple[str, list[str]]:
    tags: list[str] = []
    for tag, pattern in PLEASANTRIES:
        text, n = pattern.subn(" ", text)
        if n:
            tags.append(tag)
    return text, tags


def _content_counts(text: str) -> tuple[float, float]:
    """(content tokens, all tokens) of `text`, CJK characters weighted, URLs and emails left out."""
    lowered = EMAIL.sub(" ", URL.sub(" ", text.lower()))
    words = EN_WORD.findall(lowered)
    numbers = len(NUMBER.findall(lowered))
    cjk = _CJK.findall(lowered)
    content = sum(1 for w in words if w not in EN_STOPWORDS and w not in EN_FILLER) + numbers
    content_cjk = sum(1 for ch in cjk if ch not in ZH_STOPCHARS)
    return content + CJK_CHAR_WEIGHT * content_cjk, len(words) + numbers + CJK_CHAR_WEIGHT * len(cjk)


def _has_name(text: str) -> bool:
    """A capitalised word that does not open a sentence and is not a stopword: a person, place or brand."""
    for sentence in SENTENCE.split(text):
        opening = len(sentence) - len(sentence.lstrip())
        for match in LATIN_WORD.finditer(sentence):
            word = match.group()
            # The first word of a sentence is capitalised anyway; "Mac" inside Chinese text is not.
            if (
                match.start() > opening
                and word[0].isupper()
                and len(word) > 1
                and word.lower() not in NOT_NAMES
            ):
                return True
    return False


def _entities(text: str) -> list[tuple[str, float]]:
    """Density bonuses: concrete details are what make a memory worth recalling."""
    found: list[tuple[str, float]] = []
    checks: tuple[tuple[str, float, bool], ...] = (
        ("has_contact", 0.3, bool(EMAIL.search(text) or URL.search(text) or PHONE.search(text))),
        ("has_money", 0.15, bool(MONEY.search(text))),
        ("has_date", 0.15, _has_date(text)),
        ("has_number", 0.1, bool(NUMBER.search(text))),
        ("has_name", 0.15, _has_name(text) or bool(ZH_NAME.search(text))),
        ("has_place", 0.15, bool(ZH_PLACE.search(text))),
        ("has_title", 0.15, bool(TITLE.search(text))),
    )
    for tag, bonus, hit in checks:
        if hit:
            found.append((tag, bonus))
    return found


def _density(remainder: str, entities: list[tuple[str, float]], reasons: list[str]) -> float:
    content, total = _content_counts(remainder)
    # Saturating in the number of content words (2 words ~0.6, 4 ~0.85), with a mild penalty for a low
    # share of content among all tokens ("information per token").
    base = (1.0 - math.exp(-content / 2.0)) * (0.7 + 0.3 * content / total) if total > 0 else 0.0
    bonus = 0.0
    for tag, value in entities:
        reasons.append(tag)
        bonus += value
    return _clamp(base + bonus)


def _timeliness(lowered: str, personal: bool, kinds: list[str], reasons: list[str]) -> float:
    durable, transient = bool(DURABLE.search(lowered)), bool(TRANSIENT.search(lowered))
    if durable:
        reasons.append("durable")
    if transient:
        reasons.append("transient")
    if durable:
        return 0.55 if transient else 0.9
    if transient:
        return 0.2 if MOMENTARY.search(lowered) or not personal else 0.4
    if "question" in reasons or "request" in reasons:
        return 0.2  # what is asked now matters now; the answer, if it lasts, is its own turn
    if {"instruction", "preference", "constraint", "contact"} & set(kinds):
        return 0.7  # a standing order ("don't use emojis") holds until it is revoked
    # A fact about the person, or a fix to one, tends to outlive small talk.
    return 0.6 if personal or "correction" in kinds else 0.5


def _action_kinds(lowered: str) -> list[str]:
    kinds = [kind for kind, _, pattern in ACTION_KINDS if pattern.search(lowered)]
    if "instruction" not in kinds and POLITE.search(lowered) and not _asks(lowered):
        kinds.insert(0, "instruction")
    return kinds


def _asks(lowered: str) -> str | None:
    """ "question" or "request" (a one-off task) if the turn asks for something, else None.

    A turn that tells something and then asks back ("I just joined an activist group last Tuesday. What's
    up with you?") is a statement: the question at its end is conversation, the statement is the memory.
    Counting it as a question sent 8% of LoCoMo's evidence turns to cold storage (rules-only review)."""
    if REQUEST.search(lowered):
        return "request"
    if not QUESTION.search(lowered):
        return None
    statement = " ".join(s for s in SENTENCE_WITH_END.findall(lowered) if not QUESTION.search(s.strip()))
    return None if _content_counts(statement)[0] >= STATEMENT_MIN_CONTENT else "question"


def _actionability(lowered: str, kinds: list[str], personal: bool, reasons: list[str]) -> float:
    if kinds:
        reasons.extend(kinds)
        # The strongest kind, plus a little for each further one ("never ... before 10am").
        return _clamp(max(ACTION_VALUE[k] for k in kinds) + 0.1 * (len(kinds) - 1))
    asks = _asks(lowered)
    if asks:
        reasons.append(asks)
        return 0.15
    if personal and not MOMENTARY.search(lowered):
        # A lasting fact about the user ("my sister lives in Berlin") is what personalisation acts on.
        return 0.6 if DURABLE.search(lowered) else 0.5
    return 0.3


def _pleasantry_only(lowered: str, remainder: str, tags: list[str], kinds: list[str]) -> list[str] | None:
    """The pleasantry tags if the turn is nothing but pleasantries, else None. `remainder` is the text
    with pleasantries removed, `tags` what was removed.

    A pleasantry may carry one content word ("Congratulations on the move!", "Thanks for the info"), but
    not a concrete detail or anything to act on ("Thanks! I'm vegan" is a constraint).
    """
    if re.sub(r"[\W_]+", "", lowered) in WHOLE_FILLER:
        return ["filler"]
    content = _content_counts(remainder)[0]
    if content == 0:
        return tags or ["empty"]
    if tags and content <= PLEASANTRY_MAX_CONTENT and not kinds:
        return tags
    return None


def score_turn(
    content: str,
    *,
    role: str,
    source: str,
    max_similarity: float,
    weights: QualityWeights = QualityWeights(),
) -> QualityScore:
    """Score one turn. `max_similarity` is its highest cosine with the scope's kept memories (0 if none)."""
    text = _normalise(content)
    lowered = text.lower()
    reasons: list[str] = []
    trust = SOURCE_TRUST.get(source, UNKNOWN_TRUST)
    similarity = 0.0 if math.isnan(max_similarity) else max(-1.0, min(1.0, max_similarity))
    uniqueness = _clamp(1.0 - max(similarity, 0.0))
    kinds = _action_kinds(lowered)
    remainder, tags = _strip_pleasantries(text)
    entities = _entities(text)

    pleasantries = None if entities else _pleasantry_only(lowered, remainder, tags, kinds)
    if pleasantries is not None:
        # No information, nothing to act on, stale by tomorrow.
        reasons.extend(pleasantries)
        reasons.append(NO_CONTENT)
        density, timeliness, actionability, kinds = 0.0, 0.1, 0.0, []
    else:
        # First person counts as a fact about the user only when the user says it.
        personal = bool(ABOUT_USER.search(lowered)) or (role == "user" and bool(FIRST_PERSON.search(lowered)))
        density = _density(remainder, entities, reasons)
        actionability = _actionability(lowered, kinds, personal, reasons)
        timeliness = _timeliness(lowered, personal, kinds, reasons)
        if personal:
            reasons.append("personal")
        if density < 0.2:
            reasons.append("low_content")

    w_sum = weights.density + weights.timeliness + weights.uniqueness + weights.actionability
    weighted = (
        (
            weights.density * density
            + weights.timeliness * timeliness
            + weights.uniqueness * uniqueness
            + weights.actionability * actionability
        )
        / w_sum
        if w_sum > 0
        else 0.0
    )
    content_gate = min(1.0, GATE_FLOOR + GATE_SLOPE * density)
    staleness_gate = min(1.0, STALENESS_FLOOR + timeliness)
    novelty_gate = min(1.0, uniqueness / (CORRECTION_NOVELTY_KNEE if "correction" in kinds else NOVELTY_KNEE))
    if similarity >= DUPLICATE_LIKE_AT:
        reasons.append("duplicate_like")
    rule_score = _clamp(weighted * content_gate * novelty_gate * staleness_gate)
    return QualityScore(
        density=density,
        timeliness=timeliness,
        uniqueness=uniqueness,
        actionability=actionability,
        rule_score=rule_score,
        trust=trust,
        total=_clamp(rule_score * trust),
        reasons=tuple(dict.fromkeys(reasons)),
    )


def carries_nothing(score: QualityScore) -> bool:
    """Nothing but pleasantries, acknowledgements or filler ("ok", "haha", "thanks!", "good night"): the
    one kind of turn review sends cold by quality."""
    return NO_CONTENT in score.reasons


def decide_keep(
    score: QualityScore,
    *,
    core: bool,
    cold_below: float = 0.3,
    keep_above: float = 0.7,
) -> tuple[str, str]:
    """("keep" | "cold" | "judge", why).

    Only a turn that carries nothing goes cold. The score of a turn that says something is not evidence
    that it is worthless: in rules-only review, sending the band below 0.5 cold lost 21-29% of the evidence
    turns of two conversation sets the rules were not written on (an SEO question that an answer later
    refers to, an assistant's reply with the command the user asks about weeks later), against 2% on
    LoCoMo. So "judge" (total in [cold_below, keep_above]) goes to the LLM when there is one and is kept
    when there is none, and a turn with content below the band is kept: the LLM is asked where a second
    opinion can tip the balance, not about every terse remark."""
    if core:
        return "keep", "core"
    if carries_nothing(score):
        return "cold", "carries_nothing"
    if score.total > keep_above:
        return "keep", f"total {score.total:.2f} > {keep_above}"
    if score.total < cold_below:
        return "keep", f"total {score.total:.2f} < {cold_below}, but it carries content"
    return "judge", f"total {score.total:.2f} in [{cold_below}, {keep_above}]"
