"""The traffic of `hindsight bench month`: one agent's days of turns, seeded, built in memory. Pure.

One agent serves the ten LoCoMo speakers' pairs as ten users (a scope per LoCoMo conversation, as
`bench locomo` does, so each question is asked of the scope that heard its evidence). Every day
`turns_per_day` turns arrive between 08:00 and 22:00 of that simulated day:

- LoCoMo turns (LOCOMO_SHARE of the traffic, all 5,882 in a 30 x 1,000 month), every conversation in
  its own order, the conversations interleaved, with their `conv-26:D1:3` ids (the evidence ids);
- filler sessions, each a short exchange of one user with the agent: greetings and goodbyes,
  thanks/acks, small talk, tool calls and the agent's replies, repeats of what the user said before
  (verbatim or with "like I said"), and preference statements that change later in the month
  ("I prefer short answers" ... "now I want detailed answers").

A templated vocabulary keeps it cheap: the filler repeats itself a lot, as real filler does, so only a
few thousand distinct texts need embedding.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from bench.locomo_data import LocomoTurn

T0 = datetime(2026, 1, 5, tzinfo=UTC)  # day 0 of the simulated month (a Monday)
DAY_START = timedelta(hours=8)
DAY_SPAN_S = 14 * 3600  # turns spread over 08:00-22:00
LOCOMO_SHARE = 0.2  # of each day's turns; 30 x 1,000 x 0.2 = 6,000 >= LoCoMo's 5,882
KINDS = ("locomo", "greeting", "ack", "smalltalk", "repeat", "preference", "tool", "agent")

GREETINGS = (
    "Hi!",
    "Hello",
    "Hey there",
    "Good morning",
    "Good evening!",
    "Hi, it's me again",
    "Hello again",
    "Hey, quick question",
)
GREETING_REPLIES = (
    "Hello! How can I help you today?",
    "Hi! What can I do for you?",
    "Good to see you again. What do you need?",
    "Hey! How can I help?",
)
ACKS = ("Thanks!", "Thank you", "ok", "Okay, got it", "Great, thanks", "Cool", "Perfect", "Sounds good")
ACK_REPLIES = ("You're welcome!", "Happy to help.", "Anytime!", "Glad that helped.")
GOODBYES = ("Bye!", "See you tomorrow", "That's all for now, thanks", "Talk later")
GOODBYE_REPLIES = ("Goodbye! Have a nice day.", "See you soon!", "Take care!")
SMALLTALK = (
    "How's it going?",
    "It's raining again here today",
    "I'm a bit tired right now",
    "What a busy day",
    "The weather is nice this afternoon",
    "I just had lunch",
    "Traffic was terrible this morning",
    "I'm having a coffee right now",
    "Long day at work today",
    "Finally Friday, well almost",
)
SMALLTALK_REPLIES = (
    "That sounds like quite a day.",
    "I hope the rest of the day goes well.",
    "Enjoy it!",
    "Sorry to hear that, hang in there.",
)
# What the user asks the agent to do: the topic slot makes these vary a little, as real requests do.
REQUESTS = (
    "Can you check the weather for {place} tomorrow?",
    "What's on my calendar for {day}?",
    "Remind me to call {person} at {hour}",
    "Find a recipe for {dish}",
    "How long does it take to drive to {place}?",
    "Set a timer for {minutes} minutes",
)
TOOL_RESULTS = (
    "weather_lookup({place}): 14°C, light rain, wind 12 km/h",
    "calendar_list({day}): 2 events, standup 09:30, dentist 16:00",
    "reminder_create: call {person} at {hour}",
    "recipe_search({dish}): 5 results, top rated 4.7",
    "route_estimate({place}): 42 min by car",
    "timer_start: {minutes} min",
)
AGENT_REPLIES = (
    "Here is what I found for {place}: light rain and about 14 degrees.",
    "You have two events on {day}: standup at 09:30 and the dentist at 16:00.",
    "Done, I'll remind you to call {person} at {hour}.",
    "I found a highly rated recipe for {dish}; want the ingredients?",
    "It takes about 42 minutes to drive to {place} right now.",
    "Timer set for {minutes} minutes.",
)
SLOTS = {
    "place": ("Lisbon", "the airport", "Porto", "the office", "Sintra", "downtown"),
    "day": ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "the weekend"),
    "person": ("mom", "the plumber", "Alex", "the bank", "my sister"),
    "hour": ("9am", "noon", "3pm", "6pm"),
    "dish": ("lasagna", "pad thai", "a vegan curry", "pancakes", "gazpacho"),
    "minutes": ("5", "10", "25", "45"),
}
# (before, after): every user states the first early in the month and changes to the second later.
PREFERENCES = (
    (
        "I prefer short answers, please keep replies brief.",
        "Actually, now I want detailed answers with examples.",
    ),
    ("Please use metric units for everything.", "Please switch to imperial units from now on."),
    ("Send me my daily summary in the morning.", "I'd rather get my daily summary in the evening now."),
    ("I like a formal tone in your replies.", "You can be casual with me from now on, no need to be formal."),
    ("I drink tea, never coffee.", "These days I drink coffee instead of tea."),
    ("My favourite cuisine is Italian.", "Lately my favourite cuisine is Japanese."),
)
PREFERENCE_RESTATED = "Just a reminder: {statement}"
REPEAT_PREFIXES = ("", "", "Like I said, ", "Again, ")  # half verbatim, half with a spoken prefix


@dataclass(frozen=True, slots=True)
class TrafficTurn:
    day: int
    ts: datetime
    turn_id: str
    user_id: str
    session_id: str
    role: str  # user | assistant | tool
    source: str  # user | agent | tool
    content: str
    kind: str  # one of KINDS
    speaker: str | None = None  # LoCoMo's speaker name
    ends_session: bool = False  # the last turn of its session: a session_end follows it


@dataclass(frozen=True)
class Traffic:
    days: int
    turns_per_day: int
    turns: tuple[TrafficTurn, ...]
    users: tuple[str, ...]
    preference_changes: tuple[tuple[str, str, str], ...]  # (user, old statement, new statement)

    def day(self, d: int) -> list[TrafficTurn]:
        return [t for t in self.turns if t.day == d]

    def kinds(self) -> dict[str, int]:
        out = dict.fromkeys(KINDS, 0)
        for t in self.turns:
            out[t.kind] += 1
        return out


# (role, source, content, kind, user, session, speaker, turn_id) of a turn before it gets its time
Row = tuple[str, str, str, str, str, str, str | None, str]


def _interleaved(locomo: Sequence[LocomoTurn]) -> list[LocomoTurn]:
    """Each conversation in its own order, the conversations taken in turn (one session block each)."""
    by_conv: dict[str, list[list[LocomoTurn]]] = {}
    for t in locomo:
        sessions = by_conv.setdefault(t.conversation, [])
        if not sessions or sessions[-1][0].session != t.session:
            sessions.append([])
        sessions[-1].append(t)
    out: list[LocomoTurn] = []
    for i in range(max((len(s) for s in by_conv.values()), default=0)):
        for sessions in by_conv.values():
            if i < len(sessions):
                out.extend(sessions[i])
    return out


class _Filler:
    """Filler sessions of one user; remembers what the user said, for repeats and preference changes."""

    def __init__(self, rng: random.Random, user: str, days: int) -> None:
        self.rng = rng
        self.user = user
        self.said: list[str] = []  # the user's earlier statements worth repeating
        picks = rng.sample(range(len(PREFERENCES)), 2)
        # Stated during the first third of the month, changed during the last 40%.
        self.preferences = [
            (
                PREFERENCES[p],
                rng.randrange(max(days // 3, 1)),
                max(days - 1 - rng.randrange(max(days * 2 // 5, 1)), 1),
            )
            for p in picks
        ]
        self.changes: list[tuple[str, str, str]] = []
        self.stated: set[str] = set()

    def session(self, day: int, length: int) -> list[tuple[str, str, str, str]]:
        """(role, source, content, kind) of one exchange of about `length` turns."""
        rng = self.rng
        out = [
            ("user", "user", rng.choice(GREETINGS), "greeting"),
            ("assistant", "agent", rng.choice(GREETING_REPLIES), "greeting"),
        ]
        while len(out) < length - 2:
            roll = rng.random()
            if roll < 0.25:
                i = rng.randrange(len(REQUESTS))
                slots = {k: rng.choice(v) for k, v in SLOTS.items()}
                out.append(("user", "user", REQUESTS[i].format(**slots), "smalltalk"))
                out.append(("tool", "tool", TOOL_RESULTS[i].format(**slots), "tool"))
                out.append(("assistant", "agent", AGENT_REPLIES[i].format(**slots), "agent"))
            elif roll < 0.45:
                out.append(("user", "user", rng.choice(SMALLTALK), "smalltalk"))
                out.append(("assistant", "agent", rng.choice(SMALLTALK_REPLIES), "smalltalk"))
            elif roll < 0.60:
                out.append(("user", "user", rng.choice(ACKS), "ack"))
                out.append(("assistant", "agent", rng.choice(ACK_REPLIES), "ack"))
            elif roll < 0.85 and self.said:
                earlier = rng.choice(self.said)
                out.append(("user", "user", rng.choice(REPEAT_PREFIXES) + earlier, "repeat"))
            else:
                statement = self._preference(day)
                if statement is not None:
                    out.append(("user", "user", statement, "preference"))
                    out.append(("assistant", "agent", "Noted, I'll remember that.", "ack"))
        out.append(("user", "user", rng.choice(GOODBYES), "greeting"))
        out.append(("assistant", "agent", rng.choice(GOODBYE_REPLIES), "greeting"))
        return out

    def _preference(self, day: int) -> str | None:
        """The user's current preference statement (sometimes restated), or None before any is due."""
        due = [(pair, start, change) for pair, start, change in self.preferences if day >= start]
        if not due:
            return None
        (before, after), _, change = self.rng.choice(due)
        if day >= change and before in self.stated:  # a change only of something the user had said
            if after not in self.stated:
                self.stated.add(after)
                self.changes.append((self.user, before, after))
                return after
            current = after
        else:
            current = before
        if current not in self.stated:
            self.stated.add(current)
            return current
        return PREFERENCE_RESTATED.format(statement=current[0].lower() + current[1:])

    def remember(self, content: str) -> None:
        self.said.append(content)
        if len(self.said) > 200:
            self.said.pop(0)


def generate(
    locomo: Sequence[LocomoTurn], *, days: int, turns_per_day: int, seed: int = 7, agent_id: str = "month"
) -> Traffic:
    """The month's turns, day by day, deterministic for a seed. `locomo` in dataset order."""
    if days < 1 or turns_per_day < 10:
        raise ValueError(f"need days >= 1 and turns_per_day >= 10, got {days} and {turns_per_day}")
    rng = random.Random(seed)
    ordered = _interleaved(locomo)
    total = min(len(ordered), int(days * turns_per_day * LOCOMO_SHARE))
    ordered = ordered[:total]
    users = tuple(dict.fromkeys(t.conversation for t in locomo))
    fillers = {u: _Filler(random.Random(f"{seed}:{u}"), u, days) for u in users}
    next_locomo = 0
    turns: list[TrafficTurn] = []
    for day in range(days):
        quota = (total * (day + 1)) // days - (total * day) // days
        todays_locomo = ordered[next_locomo : next_locomo + quota]
        next_locomo += quota
        # Blocks: the day's LoCoMo turns per conversation (in order), and filler sessions, shuffled.
        blocks: list[list[Row]] = []
        for conv in dict.fromkeys(t.conversation for t in todays_locomo):
            blocks.append(
                [
                    ("user", "user", t.content, "locomo", conv, t.session_id, t.speaker, t.turn_id)
                    for t in todays_locomo
                    if t.conversation == conv
                ]
            )
        filler_n = turns_per_day - len(todays_locomo)
        s = 0
        while filler_n > 0:
            user = rng.choice(users)
            length = min(rng.randint(8, 20), filler_n)
            session = f"{user}:month:d{day}:s{s}"
            exchange = fillers[user].session(day, length)[:filler_n]
            block: list[Row] = []
            for i, (role, source, content, kind) in enumerate(exchange):
                block.append((role, source, content, kind, user, session, None, f"month:{session}:{i}"))
            blocks.append(block)
            filler_n -= len(block)
            s += 1
        rng.shuffle(blocks)
        flat = [row for block in blocks for row in block]
        # Which LoCoMo sessions end today: their last turn is in today's slice.
        last_of_session = {}
        for row in flat:
            last_of_session[row[5]] = row[7]
        more_locomo = {t.session_id for t in ordered[next_locomo:]}
        step = DAY_SPAN_S / max(len(flat), 1)
        for i, (role, source, content, kind, user, session, speaker, turn_id) in enumerate(flat):
            ts = T0 + timedelta(days=day) + DAY_START + timedelta(seconds=round(i * step))
            ends = last_of_session[session] == turn_id and session not in more_locomo
            turns.append(
                TrafficTurn(day, ts, turn_id, user, session, role, source, content, kind, speaker, ends)
            )
            if role == "user" and kind in ("locomo", "smalltalk", "preference"):
                fillers[user].remember(content)
    changes = tuple(c for f in fillers.values() for c in f.changes)
    return Traffic(days, turns_per_day, tuple(turns), users, changes)
