"""Restated requests (issue 40, pipeline/review/restatements.py): rule tables as unit tests, and the list rule
that puts review's memory first for a question about its subject (pipeline/recall/hits.subject_first)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from pipeline.core.models import Hit
from pipeline.recall import hits as recall_hits
from pipeline.review import restatements as r

T0 = datetime(2026, 9, 1, 9, 0, tzinfo=UTC)


def said(
    session: int, text: str, role: str = "user", *, facts: frozenset[str] = frozenset(), old: bool = False
) -> r.Said:
    return r.Said(role, f"s{session}", T0 + timedelta(days=session, minutes=len(text)), text, facts, old)


@pytest.mark.parametrize(
    ("text", "subject"),
    [
        ("too wordy", "answer_length"),
        ("can you be shorter", "answer_length"),
        ("just the gist, please", "answer_length"),
        ("回答请简短一点", "answer_length"),
        ("太啰嗦了，说重点", "answer_length"),
        ("Please use metric units", "units"),
        ("以后都用中文回复吧", "reply_language"),
        ("Bullet points please, I skim everything.", "answer_format"),
        ("Text me instead of email", "contact_channel"),
        ("I'm allergic to peanuts.", "allergy"),
    ],
)
def test_the_words_of_a_request_name_its_subject_in_either_language(text: str, subject: str) -> None:
    assert subject in r.subjects(text)


@pytest.mark.parametrize(
    ("role", "text", "standing"),
    [
        ("user", "too wordy", True),
        ("user", "can you be shorter", True),
        ("user", "I don't like long answers", True),
        ("user", "请用中文回答我", True),
        ("user", "sms is better for reminders", True),
        ("user", "less casual please, this is for work", True),
        # a one-off task on something at hand, not a standing wish
        ("user", "Summarise this article for me, it's way too wordy.", False),
        ("user", "这篇文章写得太啰嗦了，帮我总结一下", False),
        # a question about the world
        ("user", "Is a mile longer than a kilometre?", False),
        ("user", "中文和日语哪个更难学？", False),
        # not the user's
        ("assistant", "Sure, I'll keep it short.", False),
    ],
)
def test_standing_requests_are_told_from_tasks_questions_and_the_assistant(
    role: str, text: str, standing: bool
) -> None:
    assert r.is_request(role, text) is standing


def test_acknowledgements_are_the_assistants_short_confirmations() -> None:
    assert r.is_ack("assistant", "Got it, I'll keep it short.")
    assert r.is_ack("assistant", "好的，以后用中文。")
    assert not r.is_ack("user", "Got it, thanks")
    assert not r.is_ack("assistant", "A garlic and chili spaghetti takes 15 minutes.")


BRIEF = [
    said(0, "too wordy"),
    said(0, "What's a quick pasta I can make tonight?"),
    said(1, "can you be shorter"),
    said(1, "Sure, I'll keep it shorter.", "assistant"),
    said(2, "My coworker writes really long emails, it's exhausting."),
    said(2, "Summarise this article for me, it's way too wordy."),
    said(3, "just the gist, please"),
]


def test_a_request_restated_across_sessions_is_one_group_with_its_acknowledgement_and_no_near_miss() -> None:
    groups = r.group(BRIEF)
    assert [(g.subject, g.requests, g.acks) for g in groups] == [("answer_length", (0, 2, 6), (3,))]
    assert groups[0].linked_by == {"subject", "ack"}


def test_requests_said_in_one_session_only_are_no_memory() -> None:
    once = [said(0, "too wordy"), said(0, "can you be shorter"), said(0, "just the gist, please")]
    assert r.group(once) == []
    assert r.group(once, min_sessions=1)  # the bound is the session count, not the words


def test_the_acknowledgement_names_the_subject_when_the_request_does_not() -> None:
    turns = [
        said(0, "less of that please"),
        said(0, "Got it, I'll keep it short from now on.", "assistant"),
        said(1, "too wordy"),
    ]
    assert [g.requests for g in r.group(turns)] == [(0, 2)]
    assert r.group(turns, signals=r.Signals(ack=False)) == []


def test_a_fact_the_rules_extracted_names_the_subject_too() -> None:
    turns = [said(0, "less of that please", facts=frozenset({"user/answer_style"})), said(1, "too wordy")]
    assert [g.requests for g in r.group(turns)] == [(0, 1)]
    assert r.group(turns, signals=r.Signals(fact=False)) == []


def test_cosine_lends_a_subject_only_when_switched_on_and_close_enough() -> None:
    turns = [said(0, "less of that please"), said(1, "too wordy")]
    vectors = np.array([[1.0, 0.0], [0.8, 0.6]], dtype=np.float32)
    assert r.group(turns, vectors) == []
    assert [g.requests for g in r.group(turns, vectors, signals=r.Signals(cosine=0.7))] == [(0, 1)]
    assert r.group(turns, vectors, signals=r.Signals(cosine=0.9)) == []


def test_a_turn_stating_a_fact_of_another_subject_never_joins() -> None:
    turns = [
        said(0, "too wordy"),
        said(1, "keep it short, I moved to Berlin", facts=frozenset({"user/location"})),
        said(2, "can you be shorter"),
    ]
    assert [g.requests for g in r.group(turns)] == [(0, 2)]


def test_the_latest_wording_leads_and_the_text_states_every_member_it_quotes() -> None:
    group = r.group(BRIEF)[0]
    s = r.statement(BRIEF, group)
    assert s.text == 'Just the gist, please. Earlier: "Can you be shorter" and "Too wordy".'
    assert s.stated == {0, 2, 3, 6}  # the acknowledgement's words are covered too


def test_a_superseded_wording_is_quoted_as_no_longer_holding() -> None:
    turns = [
        said(0, "keep it short please", old=True),
        said(2, "简短一点就行", old=True),
        said(4, "Actually I want more detailed explanations from now on."),
    ]
    s = r.statement(turns, r.Group("answer_length", (0, 1, 2)))
    assert s.text.startswith("Actually I want more detailed explanations from now on. (no longer: ")
    assert '"简短一点就行"' in s.text
    assert '"Keep it short please"' in s.text


def test_chinese_members_get_a_chinese_text() -> None:
    turns = [said(0, "回答请简短一点"), said(1, "太啰嗦了，说重点"), said(2, "别写那么长，一两句就行")]
    s = r.statement(turns, r.group(turns)[0])
    assert s.text == "别写那么长，一两句就行。此前也说过：“太啰嗦了，说重点”、“回答请简短一点”。"
    assert s.stated == {0, 1, 2}


def test_covers_is_words_or_every_term_never_a_guess() -> None:
    assert r.covers("Keep your answers short.", "too wordy")
    assert r.covers("I'm allergic to peanuts.", "I'm allergic to peanuts")
    assert not r.covers("I'm allergic to peanuts.", "peanut allergy here, so please check the sauces")
    assert not r.covers("Keep your answers short.", "reply in Chinese and keep it short")


def test_a_cosine_cluster_is_anchored_only_by_a_term_in_every_member() -> None:
    assert r.anchored(["My dog Biscuit is a beagle.", "Biscuit chewed my charger", "Biscuit has a vet visit"])
    assert not r.anchored(["I'm saving for a laptop.", "My budgeting app hit 50 users", "Ran 14 km today"])


@pytest.mark.parametrize(
    ("question", "subject"),
    [
        ("How long should my answers be?", "answer_length"),
        ("Which language should I reply to this user in?", "reply_language"),
        ("应该用什么语言回复这个用户？", "reply_language"),
        ("How should I send this user reminders?", "contact_channel"),
        ("Which units should I use with this user?", "units"),
    ],
)
def test_a_question_names_the_subject_it_asks_about(question: str, subject: str) -> None:
    assert subject in r.asked_subjects(question)


def test_a_question_about_something_else_names_no_subject() -> None:
    assert r.asked_subjects("What did Caroline do at the museum?") == frozenset()


def _hit(
    id_: str, score: float, turns: tuple[str, ...], kind: str = "episode", subject: str | None = None
) -> Hit:
    explain = {"answers_subject": subject} if subject else {}
    said_for = turns if kind == "semantic" else ()
    return Hit(id_, kind, id_, score, 1.0, None, None, turns, None, explain=explain, speaks_for=said_for)  # type: ignore[arg-type]


def test_review_s_memory_of_the_asked_subject_comes_first_and_nothing_leaves_the_list() -> None:
    hits = [
        _hit("near", 1.4, ("n",)),
        _hit("memory", 1.3, ("a", "b"), "semantic", "answer_length"),
        _hit("x", 0.5, ("x",)),
    ]
    out = recall_hits.subject_first(hits)
    assert [h.id for h in out] == ["memory", "near", "x"]
    unmarked = [_hit("near", 1.4, ("n",)), _hit("memory", 1.3, ("a", "b"), "semantic")]
    assert [h.id for h in recall_hits.subject_first(unmarked)] == ["near", "memory"]


def test_recall_returns_restated_and_fact_chain_memories_not_cosine_clusters_by_default() -> None:
    from pipeline.core.models import SEMANTIC
    from pipeline.core.recall_rows import SemanticRow
    from pipeline.recall.tuning import DEFAULT_TUNING

    def row(method: str) -> SemanticRow:
        return SemanticRow(1, "Just the gist.", 1.0, T0, None, ("a",), speaks_for=("a",), method=method)

    c = recall_hits.Candidate((SEMANTIC, 1), fused=1.0)
    for method, returned in (("restated", True), ("template", True), ("extractive", False)):
        hit = recall_hits.to_hit(c, {}, {1: row(method)}, None, DEFAULT_TUNING)
        assert (hit is not None) is returned, method


# Paraphrases written for these tests (not taken from any set): the subject words cover more ways of saying a
# wish, and a word that also names something else ("text", "call me", "a list of") names it only as the wish.
@pytest.mark.parametrize(
    ("text", "subject"),
    [
        ("that was way too long", "answer_length"),
        ("fewer words please", "answer_length"),
        ("no need to over-explain", "answer_length"),
        ("长话短说", "answer_length"),
        ("少说点废话", "answer_length"),
        ("answer me in cantonese", "reply_language"),
        ("用日文回复我", "reply_language"),
        ("请分成几点说", "answer_format"),
        ("请用Go写代码", "code_language"),
        ("be more professional", "tone"),
        ("别嘻嘻哈哈的", "tone"),
        ("温度用摄氏度，长度用厘米", "units"),
        ("时间请用美东时间", "time_zone"),
        ("I'm on Tokyo time", "time_zone"),
        ("ping me on slack", "contact_channel"),
        ("call me rather than email", "contact_channel"),
        ("no pork for me", "diet"),
    ],
)
def test_more_wordings_name_their_subject(text: str, subject: str) -> None:
    assert r.subjects(text) == {subject}


@pytest.mark.parametrize(
    ("text", "not_subject"),
    [
        ("less text please", "contact_channel"),
        ("Call me a taxi", "address"),
        ("I need a list of things to pack", "answer_format"),
        ("Book a table for two at 8", "answer_format"),
        ("Give me some examples of irony", "examples"),
        ("爸妈喜欢吃辣", "diet"),
    ],
)
def test_a_word_names_a_subject_only_as_the_wish(text: str, not_subject: str) -> None:
    assert not_subject not in r.subjects(text)


@pytest.mark.parametrize(
    "text",
    [
        "Write a short poem about autumn",
        "Can you write a formal letter to my landlord",
        "Make a table of the planets and their sizes",
        "用Python写一个爬虫",
        "写一封正式的请假信",
        "Is it rude to use emojis at work",
    ],
)
def test_a_thing_to_make_now_or_a_question_without_its_mark_is_no_standing_request(text: str) -> None:
    assert not r.is_request("user", text)


def test_an_acknowledgement_naming_the_subject_makes_a_request_of_a_turn_without_request_words() -> None:
    turns = [
        said(0, "分成几点说"),
        said(0, "好的，以后都分点列出。", "assistant"),
        said(1, "请用列表回答"),
    ]
    assert [(g.requests, g.acks) for g in r.group(turns)] == [((0, 2), (1,))]
    # a reply that names no subject confirms no wish: the turn stays out
    turns[1] = said(0, "Sure, here are three options.", "assistant")
    assert r.group(turns) == []


def test_shared_object_words_lend_a_subject_only_when_switched_on_and_unambiguous() -> None:
    turns = [said(0, "我对花生过敏"), said(1, "别放花生"), said(2, "记得我过敏")]
    assert [g.requests for g in r.group(turns)] == [(0, 2)]
    assert [g.requests for g in r.group(turns, signals=r.Signals(terms=True))] == [(0, 1, 2)]
    # words every request has ("以后", "一点") are no shared object
    vague = [said(0, "以后都用中文回复"), said(1, "想住得离地铁近一点，以后再说"), said(2, "请用中文")]
    assert [g.requests for g in r.group(vague, signals=r.Signals(terms=True))] == [(0, 2)]
