"""Recall ordered by what the question asks of a value (pipeline/recall/value_order.py, issue 46): the
newest statement first for a question about the present (plain tense included), the oldest for a previous
one, time order for a change; values said in passing inside long requests; no false currency (another
holder, another named thing, a plan, a hypothetical, a question that asks no value)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from pipeline.recall.value_order import CHANGE, CURRENT, PREVIOUS, Said, asks, order

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
FILLER = (
    "I'm putting together a weekly plan and I'd like your help structuring it around my work hours, my "
    "commute and the evenings I keep free for reading. Can you suggest a layout with time blocks? "
)


def _said(key: int, days_ago: int, text: str, role: str = "user") -> Said:
    return Said(key, NOW - timedelta(days=days_ago), role, text)


def test_the_kind_of_question() -> None:
    assert asks("How many plants do I have?").ordering == CURRENT  # type: ignore[union-attr]
    assert asks("What is the monthly limit of the API plan?").ordering == CURRENT  # type: ignore[union-attr]
    assert asks("What was my previous monthly limit?").ordering == PREVIOUS  # type: ignore[union-attr]
    assert asks("How many plants did I have originally?").ordering == PREVIOUS  # type: ignore[union-attr]
    assert asks("我以前养了几盆植物？").ordering == PREVIOUS  # type: ignore[union-attr]
    assert asks("我现在养了几盆植物？").ordering == CURRENT  # type: ignore[union-attr]
    assert asks("How has my page load time changed?").ordering == CHANGE  # type: ignore[union-attr]
    # "previous" in a noun phrase does not win over an explicit present.
    rachel = asks("Where does Rachel, a colleague from my previous company, currently work?")
    assert rachel is not None
    assert rachel.ordering == CURRENT
    # Questions that ask no value.
    assert asks("Why did I stop running?") is None
    assert asks("How do I set up a cron job?") is None
    assert asks("What did Caroline research?") is None


def test_a_value_said_in_passing_inside_a_long_request_is_ordered_newest_first() -> None:
    old = _said(
        0, 40, FILLER + "By the way, I now have 9 plants in total on the balcony, so mornings are busy."
    )
    other = _said(1, 20, FILLER + "Also, mornings are when I water everything before work.")
    new = _said(
        2, 3, FILLER + "Oh, and I repotted the ferns, so now I have 14 plants in total on the balcony."
    )
    positions, notes = order("How many plants do I have on the balcony?", [old, other, new])
    assert positions == [2, 1, 0]  # the two statements trade slots; the other hit keeps its own
    assert notes[0]["earlier_value"] is True
    assert "earlier_value" not in notes[2]
    assert notes[2]["value_order"] == CURRENT


def test_a_previous_question_gets_the_older_value_first() -> None:
    new = _said(0, 3, "The new monthly limit of the API plan is 5,000 requests.")
    old = _said(1, 50, "Our API plan has a monthly limit of 2,000 requests.")
    positions, notes = order("What was the previous monthly limit of the API plan?", [new, old])
    assert positions == [1, 0]
    assert notes[1]["value_order"] == PREVIOUS


def test_a_change_question_gets_time_order() -> None:
    hits = [
        _said(0, 1, "The page load is now 1.2 s after the CDN."),
        _said(1, 60, "The page load is 3.4 s on mobile."),
        _said(2, 30, "The page load dropped to 2.1 s with caching."),
    ]
    positions, _ = order("How has the page load changed?", hits)
    assert positions == [1, 2, 0]


def test_chinese_and_mixed() -> None:
    old = _said(0, 30, "帮我写一个浇水的提醒脚本吧，我阳台上一共有9盆植物，每天早上浇水。")
    new = _said(1, 2, "上周又买了几盆，现在阳台上一共有14盆植物了，提醒脚本要改一下。")
    positions, _ = order("我阳台上有几盆植物？", [old, new])
    assert positions == [1, 0]


def test_no_false_currency() -> None:
    q = "How many cats do I have?"
    # Another holder's count is not the speaker's.
    sister = _said(0, 30, "My sister has 3 cats now.")
    mine = _said(1, 60, "I have 2 cats.")
    assert order(q, [mine, sister]) == ([0, 1], {})
    # A plan or a hypothetical states no value.
    plan = _said(2, 1, "I'm planning to get 4 cats next year.")
    hypo = _said(3, 2, "If I had 5 cats I would need a bigger flat.")
    assert order(q, [mine, plan, hypo]) == ([0, 1, 2], {})
    # An intention, or a change that starts later, is a plan too (the fact holds until it is done).
    sleeps = _said(8, 60, "I sleep about 6 hours a night.")
    for said in (
        "I want to sleep 8 hours a night, starting next month.",
        "I'd like to get my sleep up to 8 hours a night.",
        "我准备下个月开始每晚睡8个小时。",
    ):
        assert order("How many hours a night do I sleep?", [sleeps, _said(9, 1, said)]) == ([0, 1], {}), said
    # Two projects' budgets: both hold.
    atlas = _said(4, 30, "The Atlas project budget is 50k.")
    borealis = _said(5, 2, "The Borealis project budget is 80k.")
    assert order("What is the project budget?", [atlas, borealis]) == ([0, 1], {})
    # A question that asks no value is left alone.
    assert order("Why do I have cats?", [mine, _said(6, 1, "I have 3 cats.")]) == ([0, 1], {})
    # The assistant's long answer proposes values; it is not a statement of the user's.
    answer = _said(7, 1, "You could have 3 cats " + "and plenty of toys " * 30, role="assistant")
    assert order(q, [mine, answer]) == ([0, 1], {})


def test_a_named_thing_must_be_the_one_asked_about() -> None:
    atlas = _said(0, 30, "The Atlas budget is 50k.")
    borealis = _said(1, 2, "The Borealis budget is 80k.")
    atlas_new = _said(2, 5, "We bumped the Atlas budget to 80k.")
    positions, _ = order("What is the Atlas budget?", [atlas, borealis, atlas_new])
    assert positions == [2, 1, 0]


def test_another_owners_value_stays_in_its_place() -> None:
    ours = _said(0, 40, "For context, our API plan has a monthly limit of 2,000 requests.")
    theirs = _said(1, 1, "Unrelated, but the Borealis account's API plan has a monthly limit of 12 requests.")
    ours_new = _said(2, 5, "Oh, and our API plan now has a monthly limit of 5,000 requests.")
    positions, notes = order("What is the monthly limit of our API plan?", [ours, theirs, ours_new])
    assert positions == [2, 1, 0]
    assert 1 not in notes
    zh = [
        _said(0, 40, "顺便说一下，我们的API套餐每个月的额度是2000次请求。"),
        _said(1, 1, "对了，Borealis那个账号的API套餐每个月额度是12次请求。"),
    ]
    assert order("我们API套餐每个月的额度是多少？", zh) == ([0, 1], {})


def test_the_assistants_proposal_is_no_newer_value_of_the_users() -> None:
    t0 = datetime(2024, 1, 1, tzinfo=UTC)
    reply = (
        "Deploying a landing page: Vercel, Netlify and Cloudflare Pages all deploy a static landing page from "
        "git. For a landing page with previews, Vercel deploys fastest; Netlify deploys forms too."
    )
    hits = [
        Said(2, t0 + timedelta(minutes=1), "assistant", reply),
        Said(1, t0, "user", "for the landing page I'd rather deploy on Netlify, it is what I know"),
    ]
    assert order("Where does the user want to deploy the landing page?", hits) == ([0, 1], {})
    # Its echo of the user's value is still a copy of it: a newer user value goes above both.
    echo = [
        Said(3, t0 + timedelta(days=2), "user", "we moved it: I deploy the landing page on Vercel now"),
        Said(2, t0 + timedelta(minutes=1), "assistant", "Noted: the landing page deploys on Netlify."),
        Said(1, t0, "user", "for the landing page I'd rather deploy on Netlify"),
    ]
    new_order, notes = order("Where do I deploy the landing page?", echo)
    assert new_order[0] == 0
    assert notes.get(0, {}).get("value_order") == CURRENT


def test_with_lead_the_wanted_statement_goes_first_of_all_and_the_others_keep_their_order() -> None:
    other = _said(0, 30, FILLER + "Mornings are when I water everything before work.")
    old = _said(1, 40, FILLER + "By the way, I now have 9 plants in total on the balcony.")
    unrelated = _said(2, 10, "Can you recommend a good book about habits?")
    new = _said(
        3, 3, FILLER + "Oh, and I repotted the ferns, so now I have 14 plants in total on the balcony."
    )
    question = "How many plants do I have on the balcony?"
    assert order(question, [other, old, unrelated, new])[0] == [0, 3, 2, 1]  # among their own slots
    assert order(question, [other, old, unrelated, new], lead=True)[0] == [3, 0, 2, 1]
    # The oldest first for a previous value, and nothing moves for a question that asks no value.
    assert order("How many plants did I have originally?", [other, new, unrelated, old], lead=True)[0] == [
        3,
        0,
        2,
        1,
    ]
    assert order("Why do I water in the mornings?", [other, old, unrelated, new], lead=True)[0] == [
        0,
        1,
        2,
        3,
    ]


def test_history_and_conditions_state_no_current_value() -> None:
    q = "When is standup now?"
    standup = _said(0, 60, "Standup is at 10am every day.")
    # Told later, but as history: the value then, not now.
    for said in (
        "When I first joined, standup was at 9am.",
        "I used to have standup at 9am, which I liked.",
        "我刚来的时候standup是每天上午9点。",
    ):
        assert order(q, [standup, _said(1, 1, said)], lead=True) == ([0, 1], {}), said
    # A condition governs the clauses after it, which carry no marker of their own.
    for said in ("If it were up to me, standup would be at 9am.", "要是我说了算，standup就放每天上午9点。"):
        assert order(q, [standup, _said(1, 1, said)], lead=True) == ([0, 1], {}), said
    # A recent period or a reference back is no history: "in the past few weeks", "as I previously mentioned".
    q2 = "How many videos have I watched in the past few weeks?"
    ten = _said(0, 60, "I've finished 10 videos in the past few weeks!")
    fifteen = _said(1, 1, "As I previously mentioned, I'm on a streak: 15 videos in the past few weeks.")
    assert order(q2, [ten, fifteen], lead=True)[0] == [1, 0]
    # A history beside what holds now still states the present value.
    both = _said(1, 1, "Standup used to be at 10am, but now it is at 9am.")
    assert order(q, [standup, both], lead=True)[0] == [1, 0]
