"""Rule-based extraction of facts a user states about themself, in English and Chinese.

The fallback beside the LLM extractor (`pipeline.review.llm_tasks.extract_facts`): pure, table-driven and cheap.
Each rule is one compiled pattern anchored on a first-person trigger ("I live in", "我住在") plus a
normaliser that turns the captured text into a canonical value or rejects it. Precision is favoured over
recall everywhere, because a wrong fact closes or retracts a true one downstream:

* only `user` turns are read (an assistant saying "I live in the cloud" is not about the user);
* questions, negations, hypotheticals and other people's facts are skipped, and so are quotations, examples
  and reported speech (`He said: "I live in Paris now."`): words the speaker repeats state no fact of theirs;
* values stop at the first clause boundary and must look like a value (1-6 words or 1-12 CJK characters,
  not a pronoun or filler).

Explicit metadata (`entity`, `attribute`, `value`) is taken as given and always wins its (entity, attribute).
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_left
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Literal

from pipeline.core.models import CorrectionHint, FactCandidate
from pipeline.review.conflicts import normalise
from pipeline.review.fact_rules import RULE_GATES, RULES, _p, _Rule
from pipeline.review.fact_values import CJK_CHAR, HINT_STOP, _collapse, _finish, _topic

__all__ = ["Extraction", "extract"]

USER_ROLE = "user"
USER_ENTITY = "user"
METADATA_CONFIDENCE = 1.0  # the caller said so explicitly
HINT_CONFIDENCE = 0.8
MAX_HINT_CHARS = 200  # "actually X, not Y" is short; a long sentence after a cue is not a bare correction


@dataclass(frozen=True, slots=True)
class Extraction:
    facts: tuple[FactCandidate, ...]
    corrections: tuple[CorrectionHint, ...]


@dataclass(frozen=True, slots=True)
class _Found:
    position: tuple[int, int]  # (sentence index, offset): later statements in a turn win
    attribute: str
    value: str
    confidence: float
    correction: bool


# A sentence ends at . ! ? 。 ; or a newline. A "." ends one only before whitespace or the end, so e-mail
# addresses and decimals stay whole, and a few title abbreviations ("St. Louis") do not end one either.
_SENTENCE = re.compile(
    r"(?P<body>(?:\b(?:St|Mt|Mr|Mrs|Ms|Dr|Ft|Jr|Sr)\.|[^.!?。;\n]|\.(?!\s|$))+)(?P<end>[.!?。;]*)"
)


# == sentence guards =====================================================================================

# A question about the match: the clause holding it ends the sentence with "?" or 吗/么 ("Do I live in Paris?",
# "你知道我住在北京吗"). "I live in Paris, do you?" still states a fact: the question is another clause.
_ZH_QUESTION_END = re.compile(r"(?:吗|么)\s*$")
_QUESTION_START = re.compile(
    r"^\s*(?:do|does|did|am|are|have|has|can|could|would|will|should|is)\s+(?:i|you)\b", re.I
)
# "I live in Paris, right?" asks the assistant to confirm a memory: the tag makes the whole sentence a question.
_TAG_QUESTION = re.compile(
    r"\s*(?:right|correct|true|yes|no|ok(?:ay)?|isn'?t\s+it|don'?t\s+i|didn'?t\s+i|aren'?t\s+i|am\s+i\s+right"
    r"|is\s+that\s+(?:right|correct)|对吧|对吗|是吧|是吗|是不是|没错吧|对不对)\s*$",
    re.IGNORECASE,
)
# A hypothetical anywhere before the match in its sentence, up to a contrast ("If I moved to Berlin ...",
# "如果我搬到上海"); "的话" closes a Chinese conditional after it ("我搬到上海的话").
_HYPOTHETICAL = re.compile(
    r"\b(?:if|unless|whether|suppose|supposing|imagine|imagining|hypothetically|pretend|wish|maybe|perhaps"
    r"|might|in\s+case|assuming|let'?s\s+say|say\s+that)\b"
    r"|如果|假如|要是|假设|万一|倘若|假使|若是|即使|就算|也许|或许|可能|想象",
    re.IGNORECASE,
)
_CONTRAST = re.compile(r"\b(?:but|however|though|anyway)\b|但|不过|可是|然而|;", re.IGNORECASE)
_ZH_CONDITIONAL_END = re.compile(r"^[^,;]*的话")
# A negation just before the match, within its clause: "don't email me", "不要用邮件通知我".
_NEGATED = re.compile(
    r"(?:\b(?:don'?t|do\s+not|doesn'?t|does\s+not|didn'?t|did\s+not|never|not|no\s+longer|won'?t|will\s+not"
    r"|stop|can'?t|cannot|nobody|no\s+one)\b(?:\s+\S+){0,3}\s*"
    r"|(?:不要|不用|不必|别|不|没有|没|勿|无需|不再|并非|不是)\s*\S{0,2})$",
    re.IGNORECASE,
)
# Reported speech: "You said I live in Paris", "他说我住在北京". Only the speaker's own "I said" is kept.
_REPORTED = re.compile(
    r"\b(?!I\b)\w+\s+(?:said|says|thinks?|thought|claims?|claimed|assumes?|assumed|believes?|believed|wrote"
    r"|mentioned|told\s+\w+)\s+(?:that\s+)?$"
    r"|(?:他|她|你|您|他们|她们|别人|有人|大家)(?:说|以为|觉得|认为|提到)$",
    re.IGNORECASE,
)
# Someone else as the subject of an unanchored trigger: "he emails me", "他的预算是", "my boss will call me".
# "has" is never the speaker's verb: "Project Alpha has a budget of $10,000" is Alpha's budget, and read as
# the user's it closed the user's chain when "Project Beta has a budget of $20,000" came later; the same
# went for "赤兔项目的预算是15万" and "织梦的预算是2万" (the echo of the first was then superseded too).
_OTHER_SUBJECT = re.compile(
    r"\b(?:he|she|they|we|it|his|her|their|our|its|them|him|someone|somebody|everyone|people|my\s+\w+"
    r"|has|hasn't)\b"
    # Someone's or something's, said with 的 right before the trigger and no 我 before it: "赤兔项目的预算是15万"
    # is the project's ("我这次旅行的预算" stays the speaker's).
    r"|^(?!.*我(?!们)).*的\s*$"
    r"|他|她|它|我们|你们|大家|别人|同事|老板|朋友|妻子|老婆|老公|丈夫|公司|爸|妈",
    re.IGNORECASE,
)
_CLAUSE_START = re.compile(
    r".*(?:[,;:]|\b(?:and|but|so|because)\b|但|因为|所以|而且)", re.IGNORECASE | re.DOTALL
)
# Words the speaker repeats rather than states (issue 44): a quotation, an example, someone else's reported
# words anywhere before the match in its sentence: `He said: "I live in Paris now."`, "Quote from the book:
# I work at Microsoft", "Dosage example: I take 40mg", "The doctor said I should ...".
_FRAME = re.compile(
    r"\b(?:quote[sd]?|quoting|quotation|excerpt|citation|transcript|verbatim|lyrics?|examples?|e\.g\.?"
    r"|for\s+instance|sample|template|placeholder|role-?play|according\s+to)\b"
    r"|\b(?!I\b)\w+(?:'s)?\s+(?:(?:just|always|once|also|then|had|has)\s+)?(?:said|says|wrote|writes|asked"
    r"|replied|claims?|claimed|insists?|insisted|tweeted|posted|texted|told\s+\w+|tells\s+\w+)\b"
    r"|(?:他|她|别人|有人|医生|老师|书上|书里)(?:说|写|告诉)|引用|摘自|例如|比如|举例|示例",
    re.IGNORECASE,
)
_QUOTE_MARKS = re.compile(r'["«»「」『』]')
_GUARD_WINDOW = 80  # characters of the clause looked at before a match
_HYPOTHETICAL_WINDOW = 200  # characters of the sentence looked at before a match


def _clause_before(body: str, start: int) -> str:
    """The text of the match's clause before it."""
    prefix = body[max(0, start - _GUARD_WINDOW) : start]
    head = _CLAUSE_START.match(prefix)
    return prefix[head.end() :] if head else prefix


@dataclass(frozen=True, slots=True)
class _Sentence:
    index: int
    body: str  # without its terminator
    asks: bool  # ends with "?" or 吗/么
    interrogative: bool  # starts like a question: "Do I ...", "Are you ..."
    last_break: int  # offset of the last "," (-1 if none): a match before it is not in the asking clause
    quoted: bool = False  # starts inside quotation marks an earlier sentence opened
    marks: tuple[int, ...] = ()  # offsets of its quotation marks

    @classmethod
    def of(cls, index: int, body: str, end: str, quoted: bool = False) -> _Sentence:
        asks = "?" in end or bool(_ZH_QUESTION_END.search(body))
        last_break = body.rfind(",")
        tagged = asks and bool(_TAG_QUESTION.match(body, last_break + 1))
        marks = tuple(m.start() for m in _QUOTE_MARKS.finditer(body))
        interrogative = tagged or bool(_QUESTION_START.match(body))
        return cls(index, body, asks, interrogative, last_break, quoted, marks)


def _is_question(sentence: _Sentence, start: int) -> bool:
    return sentence.interrogative or (sentence.asks and start > sentence.last_break)


def _is_hypothetical(body: str, start: int) -> bool:
    prefix = body[max(0, start - _HYPOTHETICAL_WINDOW) : start]
    contrasts = list(_CONTRAST.finditer(prefix))
    if contrasts:
        prefix = prefix[contrasts[-1].end() :]
    return bool(_HYPOTHETICAL.search(prefix)) or bool(_ZH_CONDITIONAL_END.match(body, start, start + 60))


def _quoted(sentence: _Sentence, start: int) -> bool:
    """Whether the match sits inside quotation marks (opened in this sentence or an earlier one)."""
    return sentence.quoted ^ (bisect_left(sentence.marks, start) % 2 == 1)


def _framed(sentence: _Sentence, start: int) -> bool:
    """A quotation, example or someone's reported words before the match, up to a contrast or the end of a
    quotation: "You said I live in Paris, but I live in Lyon" and `He said: "Paris." I live in Rome` state
    the speaker's own city."""
    before = bisect_left(sentence.marks, start)
    begin = max(start - _HYPOTHETICAL_WINDOW, sentence.marks[before - 1] + 1 if before else 0, 0)
    prefix = sentence.body[begin:start]
    contrasts = list(_CONTRAST.finditer(prefix))
    if contrasts:
        prefix = prefix[contrasts[-1].end() :]
    return bool(_FRAME.search(prefix))


def _blocked(rule: _Rule, sentence: _Sentence, start: int) -> bool:
    if _quoted(sentence, start) or _framed(sentence, start):
        return True
    clause = _clause_before(sentence.body, start)
    if _NEGATED.search(clause) or _REPORTED.search(clause):
        return True
    if _is_question(sentence, start) or _is_hypothetical(sentence.body, start):
        return True
    return rule.guarded and bool(_OTHER_SUBJECT.search(clause))


# == corrections ==============================================================================================

_FILLER = r"(?:(?:oh|oops|ah|hmm+|um+|uh|wait|sorry|well|哦|啊|嗯|呃|抱歉|不好意思|对不起|等等)[\s,!.~…]*)*"
# A strong cue says the speaker is correcting themself; a weak one only with a "not Y" beside it.
_STRONG_CUE = _p(
    r"^\s*" + _FILLER + r"(?:I\s+meant(?:\s+to\s+say)?|what\s+I\s+meant\s+(?:is|was)|correction\s*[:,\-]?"
    r"|let\s+me\s+correct\s+(?:that|myself)|I\s+misspoke|I\s+was\s+wrong|I\s+made\s+a\s+mistake"
    r"|不对|错了|我说错了|说错了|我搞错了|搞错了|我记错了|更正一下|更正|纠正一下|我是说|我的意思是)(?:\s*[,:!.~…])*\s*"
)
_WEAK_CUE = _p(
    r"^\s*"
    + _FILLER
    + r"(?:(?:actually|no|nope|not\s+quite|in\s+fact)\b|其实|实际上|不是的)(?:\s*[,:!.~…])*\s*"
)
_NOT_OLD = _p(r"\bnot\s+\S|不是\S|\brather\s+than\b|\binstead\s+of\b")
_SUBJECT_IT = r"(?:(?:it'?s|it\s+is|it\s+was|that'?s|that\s+is|it\s+should\s+be|should\s+be|i\s+meant)\s+)?"
_HINT_EN_OLD = _p(r"^" + _SUBJECT_IT + r"(?P<new>.+?)\s*,?\s*(?:and\s+|but\s+)?not\s+(?P<old>.+)$")
_HINT_EN = _p(r"^" + _SUBJECT_IT + r"(?P<new>.+)$")
_HINT_ZH_SWAP = _p(r"^不是(?P<old>.+?)\s*,\s*(?:而)?是(?P<new>.+)$")
_HINT_ZH_OLD = _p(r"^(?:应该|其实|实际上)?是?(?P<new>.+?)\s*,?\s*(?:而)?不是(?P<old>.+)$")
_HINT_ZH = _p(r"^(?:应该|其实|实际上)?是?(?P<new>.+)$")


@dataclass(frozen=True, slots=True)
class _Cue:
    strength: Literal["none", "weak", "strong"]
    rest: str  # the sentence after the cue


def _cue(body: str) -> _Cue:
    if strong := _STRONG_CUE.match(body):
        return _Cue("strong", body[strong.end() :])
    if weak := _WEAK_CUE.match(body):
        return _Cue("weak", body[weak.end() :])
    # "不是苏州，是杭州" corrects without a cue word.
    if _HINT_ZH_SWAP.match(body.strip()):
        return _Cue("strong", body.strip())
    return _Cue("none", body)


def _is_correction(cue: _Cue) -> bool:
    return cue.strength == "strong" or (cue.strength == "weak" and bool(_NOT_OLD.search(cue.rest)))


def _hint_value(raw: str | None) -> str | None:
    if raw is None:
        return None
    value = _finish(raw)
    return None if value is None or value in HINT_STOP else value


def _hint(cue: _Cue) -> tuple[str, str | None] | None:
    """(new, old) named by a correction sentence that matched no attribute rule."""
    rest = cue.rest.strip()
    if len(rest) > MAX_HINT_CHARS:
        return None
    patterns = (_HINT_ZH_SWAP, _HINT_EN_OLD, _HINT_ZH_OLD)
    found = next((m for m in (p.match(rest) for p in patterns) if m), None)
    if found is None and cue.strength == "strong":
        found = (_HINT_ZH if CJK_CHAR.match(rest) else _HINT_EN).match(rest)
    if found is None:
        return None
    groups = found.groupdict()
    new, old = _hint_value(groups.get("new")), _hint_value(groups.get("old"))
    if new is None or new == old or (old is None and groups.get("old") is not None):
        return None
    return new, old


# == extraction ===============================================================================================


def _prepare(content: str) -> str:
    # NFKC folds full-width forms ("，" "？" "：" "５") into ASCII, so one pattern serves both scripts.
    text = unicodedata.normalize("NFKC", content)
    return text.replace("’", "'").replace("‘", "'").replace("“", '"').replace("”", '"')


def _sentences(text: str) -> Iterator[_Sentence]:
    bodies = ((m["body"], m["end"]) for m in _SENTENCE.finditer(text) if m["body"].strip())
    quoted = False
    for index, (body, end) in enumerate(bodies):
        yield _Sentence.of(index, body, end, quoted)
        # A quotation runs on across sentences until its closing mark: `He said: "I moved. I live in Paris."`
        quoted ^= len(_QUOTE_MARKS.findall(body)) % 2 == 1


def _emit(rule: _Rule, found: re.Match[str]) -> tuple[tuple[str, str], ...]:
    if rule.kind == "fixed":
        return ((rule.attribute, rule.value),)
    raw = found.group("v")
    values = rule.normalise(raw) if raw else ()
    if rule.kind == "keyed":
        return tuple((f"{rule.attribute}:{v}", rule.value) for v in values)
    if rule.kind == "purposed":
        # The head of an English compound is its last word: "the team offsite budget" and "the offsite
        # budget" are one chain. A name before it is another thing's budget, not a modifier: "the Atlas
        # project budget" and "the Borealis project budget" are two chains (issue 39: one closed the other).
        words = found.group("k").split()
        names = [w for w in words[:-1] if w[:1].isupper()]
        purpose = _topic(" ".join([*names, words[-1]]).lower())
        return tuple((f"{rule.attribute}:{purpose}" if purpose else rule.attribute, v) for v in values)
    return tuple((rule.attribute, v) for v in values)


def _sentence_facts(sentence: _Sentence, correction: bool, rules: Sequence[_Rule]) -> list[_Found]:
    out: list[_Found] = []
    for rule in rules:
        for found in rule.pattern.finditer(sentence.body):
            if _blocked(rule, sentence, found.start()):
                continue
            position = (sentence.index, found.start())
            for attribute, value in _emit(rule, found):
                out.append(_Found(position, attribute, value, rule.confidence, correction))
    return out


def _scan(text: str) -> tuple[list[_Found], list[tuple[str, str | None]]]:
    facts: list[_Found] = []
    hints: list[tuple[str, str | None]] = []
    carried = _Cue("none", "")
    # A rule whose literals the turn lacks cannot match any of its sentences: most rules, most turns.
    admitted = RULE_GATES.admitted(text)
    rules = [rule for i, rule in enumerate(RULES) if i in admitted]
    for sentence in _sentences(text):
        cue = _cue(sentence.body)
        if cue.strength == "none" and carried.strength != "none":
            cue = _Cue(carried.strength, sentence.body)
        # A sentence that is only a cue ("No." "不对。") lends it to the next one.
        carried = cue if not cue.rest.strip() else _Cue("none", "")
        correction = _is_correction(cue)
        found = _sentence_facts(sentence, correction, rules)
        facts.extend(found)
        # A hint only when no rule named the attribute: then the fact itself carries correction=True.
        if correction and not found and not sentence.asks and (hint := _hint(cue)):
            hints.append(hint)
    return facts, hints


def _latest(found: list[_Found]) -> list[_Found]:
    """One fact per attribute: the turn's last statement of it (the most confident on a tie of value).

    Two places in one sentence are one home at two scales, not a move between them: "I moved to Shanghai
    last week, I'm now living in Xuhui district" records "Shanghai (Xuhui district)"; keeping only the last
    lost the city (issue 27). Across sentences the last still wins ("I live in Paris. I moved to Rome.")."""
    best: dict[str, _Found] = {}
    for f in found:
        held = best.get(f.attribute)
        if held is not None and _refines(f, held):
            best[f.attribute] = replace(f, value=_within(held.value, f.value), position=held.position)
        elif held is None or _beats(f, held):
            best[f.attribute] = f
    return sorted(best.values(), key=lambda f: f.position)


def _refines(new: _Found, held: _Found) -> bool:
    return (
        new.attribute == "location"
        and new.position[0] == held.position[0]
        and not (new.correction or held.correction)
        and normalise(new.value) not in normalise(held.value)
    )


def _within(place: str, part: str) -> str:
    return f"{place}（{part}）" if CJK_CHAR.search(place + part) else f"{place} ({part})"


def _beats(new: _Found, held: _Found) -> bool:
    if new.value != held.value:
        return new.position > held.position
    return (new.confidence, new.correction) > (held.confidence, held.correction)


def _metadata_fact(
    metadata: Mapping[str, Any], *, source: str, ts: datetime, turn_id: str
) -> FactCandidate | None:
    fields = [metadata.get(k) for k in ("entity", "attribute", "value")]
    if not all(isinstance(f, str) and f.strip() for f in fields):
        return None
    entity, attribute, value = (_collapse(str(f)) for f in fields)
    return FactCandidate(entity, attribute, value, ts, source, METADATA_CONFIDENCE, (turn_id,))


def extract(
    content: str, *, role: str, source: str, ts: datetime, turn_id: str, metadata: Mapping[str, Any]
) -> Extraction:
    """Facts about the user that one turn states, and bare corrections to resolve against open facts.

    Never raises on any text. Rules read `user` turns only; a fact given in metadata is returned for any role
    and suppresses rule facts of the same (entity, attribute).
    """
    explicit = _metadata_fact(metadata, source=source, ts=ts, turn_id=turn_id)
    facts = [explicit] if explicit else []
    if role != USER_ROLE:
        return Extraction(tuple(facts), ())
    found, hints = _scan(_prepare(content))
    for f in _latest(found):
        if explicit and (explicit.entity, explicit.attribute) == (USER_ENTITY, f.attribute):
            continue
        facts.append(
            FactCandidate(
                USER_ENTITY, f.attribute, f.value, ts, source, f.confidence, (turn_id,), f.correction
            )
        )
    corrections = tuple(
        CorrectionHint(new, old, ts, source, HINT_CONFIDENCE, (turn_id,)) for new, old in dict.fromkeys(hints)
    )
    return Extraction(tuple(facts), corrections)
