"""User ↔ assistant help conversations over weeks: one person asks an AI assistant for help with their
software projects and daily life, across 8-14 sessions spread over 3-8 weeks.

Unlike LoCoMo (two friends chatting), one side is an assistant whose replies are long (code blocks, lists,
explanations; a few are 20-60 KB file listings, log analyses or runbooks), and the user's side is short and
informal, with facts dropped in passing, values corrected later, preferences stated and changed, and
decisions made. Questions ask what someone would later want recalled: a fact the user mentioned once, the
current value of something that changed, what the assistant recommended, a fact joined across two
sessions, what happened when, and how the user likes to be helped.

Question wording comes from its own phrase pools (paraphrase, third person), never copied from the turn
that holds the answer; distractor turns reuse the evidence's vocabulary about something else. Everything
is drawn from a seeded `random.Random`: no clock, no network, no ranking.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from bench.sets.common import Conversation

SEED = 7_340_211
N_CONVERSATIONS = 20
BOT = "Assistant"
CATEGORIES = ("single-hop", "update", "assistant", "multi-hop", "temporal", "preference")

Turn = tuple[str, str]  # (role, text)


@dataclass
class Ctx:
    """One conversation being planned: its user's profile, session dates, scripted blocks and questions."""

    rng: random.Random
    p: dict[str, str]
    dates: list[datetime]
    stack: Stack
    scripted: list[list[list[tuple[str, str, str]]]] = field(default_factory=list)
    pending: list[tuple[str, str, str, list[str]]] = field(default_factory=list)
    brief: list[bool] = field(default_factory=list)
    banned: list[Topic] = field(default_factory=list)
    keys: dict[str, str] = field(default_factory=dict)
    counter: int = 0

    @property
    def n(self) -> int:
        return len(self.dates)

    def put(self, session: int, turns: list[Turn]) -> list[str]:
        """Schedule a block of turns in a session; returns one key per turn (resolved to dia_ids later)."""
        keys = []
        block = []
        for role, text in turns:
            self.counter += 1
            key = f"k{self.counter}"
            keys.append(key)
            block.append((role, text, key))
        self.scripted[session].append(block)
        return keys

    def ask(self, category: str, question: str, answer: str, keys: list[str]) -> None:
        self.pending.append((category, question, answer, keys))

    def f(self, text: str, **extra: str) -> str:
        return fill(text, {**self.p, **extra})

    def pick(self, pool: tuple[str, ...] | list[str]) -> str:
        return self.rng.choice(pool)


_PLACEHOLDER = re.compile(r"\{(\w+)\}")


def fill(text: str, values: dict[str, str]) -> str:
    """str.format for known keys only, so braces in code and unknown names stay as they are."""
    return _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), text)


def day(d: datetime) -> str:
    return f"{d.day} {d:%B} {d.year}"


def month_day(d: datetime) -> str:
    return f"{d:%B} {d.day}"


# ---------------------------------------------------------------------------------------------------------
# Who the users are
# ---------------------------------------------------------------------------------------------------------

NAMES = (
    "Maya", "Tomás", "Priyanka", "Jonas", "Aiko", "Dmitri", "Chloé", "Kwame", "Lena", "Rafael",
    "Ingrid", "Omar", "Sofia", "Mateo", "Hannah", "Yusuf", "Freya", "Arjun", "Noor", "Elias",
    "Zoe", "Kenji", "Amara", "Felix", "Isabela", "Ravi", "Greta", "Luca", "Mei", "Samir",
)  # fmt: skip

# (city, time zone as the user would say it)
CITIES = (
    ("Lisbon", "Lisbon time, so WET/WEST"), ("Berlin", "CET"), ("Toronto", "Eastern time"),
    ("Austin", "US Central"), ("Melbourne", "AEST"), ("Bangalore", "IST (UTC+5:30)"),
    ("Nairobi", "EAT, UTC+3"), ("Seattle", "Pacific time"), ("Warsaw", "CET"),
    ("Buenos Aires", "UTC-3"), ("Dublin", "Irish time, basically GMT"), ("Singapore", "SGT (UTC+8)"),
    ("Denver", "Mountain time"), ("Osaka", "JST"), ("Cape Town", "SAST"), ("Edinburgh", "UK time"),
    ("Montreal", "Eastern time"), ("Mexico City", "CST (UTC-6)"), ("Helsinki", "EET"),
    ("Manchester", "UK time"), ("Porto Alegre", "BRT"), ("Auckland", "NZ time"),
)  # fmt: skip

# (answer, how the user says it)
JOBS = (
    ("backend engineer at a logistics startup",
     "I do backend at a small logistics startup — route planning, driver app APIs, that kind of thing"),
    ("data analyst at a hospital network",
     "my day job is analytics for a hospital network, lots of SQL and dashboards nobody reads"),
    ("frontend developer at an e-commerce agency",
     "I build storefronts at an agency, mostly Shopify-ish e-commerce clients"),
    ("solo founder of a SaaS for dental clinics",
     "it's just me running a tiny SaaS that does appointment reminders for dental clinics"),
    ("platform engineer at a fintech",
     "I'm on the platform team at a fintech, so k8s, terraform, and being paged"),
    ("PhD student in computational biology",
     "I'm doing a PhD in comp bio, so my 'production' is a cluster job that runs for 3 days"),
    ("QA engineer at a game studio",
     "I write test automation at a game studio, the pay is meh but the bugs are hilarious"),
    ("freelance web developer",
     "I freelance, mostly WordPress rescues and small React builds for local businesses"),
    ("site reliability engineer at a travel booking company",
     "I'm an SRE for a travel booking site, peak season is coming and I'm scared"),
    ("machine learning engineer at an insurance company",
     "I train and ship models at an insurer — claims triage mostly"),
    ("mobile developer at a fitness app company",
     "I'm on the iOS/Android team for a fitness app, React Native for our sins"),
    ("high-school computer science teacher",
     "I teach CS at a high school and code on the side, so evenings only"),
    ("technical support lead at a CRM vendor",
     "I lead the support team at a CRM vendor and I'm trying to automate half my job lol"),
    ("full-stack developer at a nonprofit",
     "I'm the only full-stack dev at a nonprofit that runs food bank logistics"),
    ("embedded engineer at an e-bike company",
     "my actual job is firmware for e-bike controllers, web stuff is new to me"),
    ("junior developer at a bank",
     "I'm a junior dev at a bank, 8 months in, everything is Java and approvals"),
    ("product designer learning to code",
     "I'm a product designer who's finally learning to code properly"),
    ("data engineer at a music streaming company",
     "I build data pipelines at a music streaming company, airflow all day"),
    ("security engineer at a healthcare startup",
     "I do appsec at a healthcare startup, HIPAA everything"),
    ("engineering manager at a marketplace startup",
     "I manage 6 engineers at a marketplace startup but still try to write some code"),
    ("bioinformatics research assistant",
     "I'm an RA in a genomics lab, mostly python scripts held together with tape"),
    ("indie game developer",
     "I make small indie games, this web stuff is for the game's website and leaderboard"),
)  # fmt: skip

# (name, species, breed, pronoun)
PETS = (
    ("Biscuit", "dog", "beagle", "he"), ("Miso", "cat", "tabby", "she"),
    ("Pepper", "dog", "border collie", "she"), ("Noodle", "dog", "dachshund", "he"),
    ("Juniper", "dog", "greyhound", "she"), ("Mochi", "dog", "shiba inu", "he"),
    ("Olive", "cat", "siamese", "she"), ("Waffles", "dog", "corgi", "he"),
    ("Tofu", "rabbit", "lop-eared rabbit", "he"), ("Kiwi", "bird", "cockatiel", "she"),
    ("Luna", "dog", "husky", "she"), ("Ziggy", "cat", "maine coon", "he"),
    ("Pickles", "dog", "pug", "he"), ("Nori", "cat", "black shorthair", "she"),
    ("Bruno", "dog", "boxer", "he"), ("Clementine", "cat", "ginger tabby", "she"),
    ("Sprout", "guinea pig", "guinea pig", "he"), ("Hazel", "dog", "labrador", "she"),
)  # fmt: skip

MACHINES = (
    "an M2 MacBook Air on macOS Sonoma", "a ThinkPad T14 running Fedora 40",
    "a Windows 11 desktop with WSL2 (Ubuntu 22.04)", "a Framework 13 running Arch",
    "an M3 Pro MacBook Pro", "a Dell XPS 15 with Ubuntu 24.04", "a Mac mini M2 on Sequoia",
    "a Windows 11 laptop, no WSL", "a Pop!_OS desktop with an AMD GPU", "an old Intel MacBook Pro from 2019",
)  # fmt: skip

EDITORS = (
    "Neovim with a LazyVim config", "VS Code", "PyCharm", "Zed", "Doom Emacs", "Helix",
    "Cursor", "WebStorm", "Sublime Text", "IntelliJ IDEA",
)  # fmt: skip

MANAGERS = (
    "Priya", "Tom", "Ulrike", "Desmond", "Keiko", "Martín", "Beatrice", "Graham", "Nadia", "Sunil",
    "Claire", "Femi", "Oskar", "Rachel", "Wojtek", "Yara", "Gustavo", "Helen",
)  # fmt: skip

COLLEAGUES = (
    "Marco", "Dana", "Wen", "Tobias", "Aisha", "Pieter", "Carmen", "Nikhil", "Sasha", "Bruno",
    "Leah", "Hiro", "Olu", "Farah", "Jakub", "Ines", "Grant", "Tamsin", "Vikram", "Rosa",
)  # fmt: skip

PARTNERS = ("Alex", "Sam", "Jordan", "Robin", "Kai", "Charlie", "Ana", "Ben", "Mira", "Theo", "Lou", "Nina")

PROJECTS = (
    "Atlas", "Harbor", "Lumen", "Orbit", "Parcel", "Beacon", "Cinder", "Quill", "Mosaic", "Relay",
    "Nimbus", "Fathom", "Keystone", "Meridian", "Pylon", "Tessera", "Vantage", "Waypoint", "Zephyr",
    "Compass", "Lantern", "Ridgeline",
)  # fmt: skip

# (name, what it is, short handle for questions)
SIDE_PROJECTS = (
    ("Tidepool", "a tide-chart app for surfers", "surf tide app"),
    ("Crumb", "a tracker for feeding my sourdough starter", "bread-starter tracker"),
    ("Gardenlog", "a watering reminder thing for houseplants", "plant-care reminder app"),
    ("Setlist", "a tool that turns concert setlists into Spotify playlists", "concert playlist tool"),
    ("Ledgerly", "a shared expenses tracker for me and my flatmates", "flatmate expense tracker"),
    ("Trailhead", "a hiking route planner on top of OpenStreetMap data", "hiking route planner"),
    ("Brewbook", "a homebrew beer recipe calculator", "home-brewing calculator"),
    ("Kanji Drill", "a spaced repetition app for kanji", "Japanese flashcard app"),
    ("Birdnote", "a bird sighting journal with photo uploads", "birdwatching diary"),
    ("Flatfinder", "a scraper that pings me when new apartment listings show up", "apartment-listing alert bot"),
    ("Chorewheel", "a Discord bot that rotates chores in our house", "household chore bot"),
    ("Pitchside", "a tracker for our five-a-side football league", "amateur football league site"),
    ("Shelfie", "a home library catalogue with barcode scanning", "book cataloguing app"),
    ("Runlog", "a running log that pulls my Strava data", "running diary"),
    ("Boardroom", "a scheduler for our board game nights", "board-game night planner"),
    ("Pantry", "an app that tracks what's in the fridge and what expires when", "fridge inventory app"),
)  # fmt: skip

HOSTS = (
    "Fly.io", "Render", "Railway", "Vercel", "Netlify", "Heroku", "DigitalOcean App Platform",
    "Google Cloud Run", "AWS Lightsail", "Cloudflare Pages",
)  # fmt: skip

SMALL_HOSTS = (
    "a Hetzner VPS", "a Raspberry Pi in the hall closet", "an Oracle Cloud free-tier VM", "a $6 DigitalOcean droplet",
    "an old ThinkPad under the desk", "a Linode nanode", "a free-tier EC2 t3.micro", "a Scaleway instance",
)  # fmt: skip

OTHER_CITIES = (
    "Rotterdam", "Valencia", "Chicago", "Leeds", "Hamburg", "Vancouver", "Pune", "Kyoto", "Accra", "Lyon",
    "Boston", "Brisbane", "Gdańsk", "Bologna", "Minneapolis", "Tallinn", "Cork", "Medellín",
)  # fmt: skip


@dataclass(frozen=True)
class Stack:
    """The user's main work stack, which decides what the assistant's stack-specific advice looks like."""

    lang: str
    framework: str
    orm: str
    fence: str
    runtime: str
    rt_old: str
    rt_new: str
    ratelimit: str
    ratelimit_code: str
    eager: str
    eager_code: str
    base_image: str


STACKS = (
    Stack("Python", "FastAPI", "SQLAlchemy", "python", "Python", "3.10", "3.12", "slowapi",
          'from slowapi import Limiter\nfrom slowapi.util import get_remote_address\n\n'
          'limiter = Limiter(key_func=get_remote_address)\napp.state.limiter = limiter\n\n\n'
          '@app.post("/auth/login")\n@limiter.limit("5/minute")\nasync def login(request: Request, body: LoginIn):\n'
          '    ...',
          "selectinload",
          "stmt = (\n    select(Order)\n    .options(selectinload(Order.items), selectinload(Order.customer))\n"
          "    .order_by(Order.created_at.desc())\n    .limit(50)\n)\norders = (await session.scalars(stmt)).all()",
          "python:3.12-slim"),
    Stack("Python", "Django", "the Django ORM", "python", "Python", "3.10", "3.12", "django-ratelimit",
          "from django_ratelimit.decorators import ratelimit\n\n\n"
          "@ratelimit(key='ip', rate='5/m', method='POST', block=True)\ndef login_view(request):\n    ...",
          "prefetch_related",
          "orders = (\n    Order.objects\n    .select_related('customer')\n    .prefetch_related('items__product')\n"
          "    .order_by('-created_at')[:50]\n)",
          "python:3.12-slim"),
    Stack("TypeScript", "Express", "Prisma", "ts", "Node", "18", "22", "express-rate-limit",
          "import rateLimit from 'express-rate-limit';\n\nconst loginLimiter = rateLimit({\n"
          "  windowMs: 60_000,\n  limit: 5,\n  standardHeaders: 'draft-7',\n  legacyHeaders: false,\n});\n\n"
          "app.post('/auth/login', loginLimiter, loginHandler);",
          "Prisma's include",
          "const orders = await prisma.order.findMany({\n  take: 50,\n  orderBy: { createdAt: 'desc' },\n"
          "  include: { items: { include: { product: true } }, customer: true },\n});",
          "node:22-alpine"),
    Stack("TypeScript", "NestJS", "TypeORM", "ts", "Node", "18", "20", "@nestjs/throttler",
          "@Module({\n  imports: [ThrottlerModule.forRoot([{ ttl: 60_000, limit: 5 }])],\n"
          "  providers: [{ provide: APP_GUARD, useClass: ThrottlerGuard }],\n})\nexport class AppModule {}",
          "leftJoinAndSelect",
          "const orders = await this.orders\n  .createQueryBuilder('o')\n  .leftJoinAndSelect('o.items', 'i')\n"
          "  .leftJoinAndSelect('o.customer', 'c')\n  .orderBy('o.createdAt', 'DESC')\n  .take(50)\n  .getMany();",
          "node:20-alpine"),
    Stack("Ruby", "Rails", "ActiveRecord", "ruby", "Ruby", "3.1", "3.3", "rack-attack",
          "# config/initializers/rack_attack.rb\nclass Rack::Attack\n"
          "  throttle('logins/ip', limit: 5, period: 60.seconds) do |req|\n"
          "    req.ip if req.path == '/login' && req.post?\n  end\nend",
          "includes",
          "@orders = Order.includes(:customer, items: :product)\n               .order(created_at: :desc)\n"
          "               .limit(50)",
          "ruby:3.3-slim"),
    Stack("Go", "chi", "sqlc", "go", "Go", "1.21", "1.23", "golang.org/x/time/rate",
          "limiters := sync.Map{}\n\nfunc limiterFor(ip string) *rate.Limiter {\n"
          "\tl, _ := limiters.LoadOrStore(ip, rate.NewLimiter(rate.Every(12*time.Second), 5))\n"
          "\treturn l.(*rate.Limiter)\n}\n\nfunc loginLimit(next http.Handler) http.Handler {\n"
          "\treturn http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {\n"
          "\t\tif !limiterFor(realIP(r)).Allow() {\n\t\t\thttp.Error(w, \"slow down\", http.StatusTooManyRequests)\n"
          "\t\t\treturn\n\t\t}\n\t\tnext.ServeHTTP(w, r)\n\t})\n}",
          "a single JOIN query",
          "-- name: ListOrdersWithItems :many\nSELECT o.id, o.created_at, c.name AS customer, i.sku, i.qty\n"
          "FROM orders o\nJOIN customers c ON c.id = o.customer_id\nLEFT JOIN order_items i ON i.order_id = o.id\n"
          "ORDER BY o.created_at DESC\nLIMIT 200;",
          "gcr.io/distroless/static"),
    Stack("Elixir", "Phoenix", "Ecto", "elixir", "Elixir", "1.15", "1.17", "Hammer",
          "defmodule MyAppWeb.Plugs.LoginLimit do\n  import Plug.Conn\n\n  def init(opts), do: opts\n\n"
          "  def call(conn, _opts) do\n    ip = conn.remote_ip |> :inet.ntoa() |> to_string()\n"
          "    case Hammer.check_rate(\"login:#{ip}\", 60_000, 5) do\n      {:allow, _} -> conn\n"
          "      {:deny, _} -> conn |> send_resp(429, \"slow down\") |> halt()\n    end\n  end\nend",
          "Repo.preload",
          "orders =\n  Order\n  |> order_by(desc: :inserted_at)\n  |> limit(50)\n  |> Repo.all()\n"
          "  |> Repo.preload([:customer, items: :product])",
          "hexpm/elixir slim image + a release"),
    Stack("PHP", "Laravel", "Eloquent", "php", "PHP", "8.1", "8.3", "Laravel's RateLimiter",
          "// app/Providers/AppServiceProvider.php\nRateLimiter::for('login', function (Request $request) {\n"
          "    return Limit::perMinute(5)->by($request->ip());\n});\n\n"
          "// routes/web.php\nRoute::post('/login', LoginController::class)->middleware('throttle:login');",
          "with()",
          "$orders = Order::with(['customer', 'items.product'])\n    ->latest()\n    ->take(50)\n    ->get();",
          "php:8.3-fpm-alpine"),
)  # fmt: skip


# ---------------------------------------------------------------------------------------------------------
# Pools the assistant's replies are built from
# ---------------------------------------------------------------------------------------------------------

OPENERS_DEV = (
    "Good question — this one trips a lot of people up.", "Sure, here's how I'd approach it.",
    "Yes, that's doable, and it doesn't need much code.", "Short version first, then the details.",
    "Happy to help with that.", "Okay, let's untangle this.", "That's a classic one.",
    "Right, there are a couple of ways to do this, and one is clearly simpler.",
    "Got it. Based on what you've described, here's what I'd do.", "Makes sense that you're hitting this.",
    "Let's go step by step.", "There's a clean way to do this.", "Nice, this is a fun one.",
    "I'd tackle it like this.", "Yep — and the fix is smaller than it looks.",
    "Thanks for the detail, that narrows it down a lot.", "This usually comes down to one of two things.",
    "Alright, here's a version you can drop in.", "Good instinct to ask before changing it everywhere.",
    "So, the slightly annoying answer is: it depends, but mostly on one thing.",
)  # fmt: skip

OPENERS_LIFE = (
    "Oh, nice — let's plan it.", "Sure! Here's a starting point you can tweak.", "Happy to help with that.",
    "Good call thinking about this early.", "Here's how I'd break it down.", "Love this, let's sort it out.",
    "Totally doable — here's a rough plan.", "Okay, a few ideas to get you going.",
    "That's a lot to juggle, so let's make it concrete.", "Let's keep it simple and realistic.",
)  # fmt: skip

LEADINS = (
    "A few things to watch out for:", "Things that usually bite people here:", "Quick checklist:",
    "Some practical tips:", "Worth keeping in mind:", "A couple of extra notes:", "Before you ship it:",
    "If you want to go a bit further:",
)  # fmt: skip

CAVEATS_DEV = (
    "One caveat: behaviour differs slightly between minor versions, so check the changelog for the exact "
    "version you're on.",
    "If this runs in CI, make sure the same environment variables are set there too — that's the most common "
    "reason something works locally and fails in the pipeline.",
    "I'd try this on a branch first rather than straight on main, just so you can compare before and after.",
    "Measure before and after; it's easy to fix the thing that looks slow instead of the thing that is slow.",
    "If you're on a shared machine or container, double-check file permissions — a surprising number of "
    "'it doesn't work' reports are really 'it can't write there'.",
    "Keep the change small and behind a flag if it touches anything user-facing.",
    "Write down what you changed and why in the PR description; future you will thank present you.",
    "It's worth adding a quick test that reproduces the original problem, so it can't quietly come back.",
    "Don't forget to restart the process after changing config — a lot of frameworks only read it at boot.",
    "If the error message changes after this, that's progress — paste the new one and we'll keep going.",
    "I'd avoid over-engineering here; the simple version will carry you a long way.",
    "Pin the dependency version once it works so an unrelated upgrade doesn't break it next month.",
    "Check the logs with timestamps side by side, because ordering problems are hard to see otherwise.",
    "This is also a good moment to add a health check so you notice the next failure before users do.",
    "Be careful copying this between environments: staging and production often differ in small ways.",
    "Defaults are usually sensible, so only override the settings you actually have a reason to change.",
    "If you're unsure, run it with verbose logging first and read what it actually does.",
    "Remember that caches can hide the effect of a fix, so clear them when you test.",
    "You can always roll back by reverting the commit; nothing here is destructive on its own.",
    "For anything involving money or personal data, get a second pair of eyes on it before merging.",
)  # fmt: skip

CAVEATS_LIFE = (
    "Treat this as a draft — you know your week better than I do, so move things around freely.",
    "Build in a buffer; plans like this almost always take longer than they look on paper.",
    "If something on the list feels like a chore, drop it — consistency beats ambition.",
    "Prices and opening hours change, so double-check anything time-sensitive before you go.",
    "It helps to put the first step in your calendar today, even if it's tiny.",
    "Don't worry about doing it perfectly; a rough version you actually follow is better.",
    "If you share this with someone else involved, ask what they'd change — you'll get a better plan.",
    "Keep a note of what worked and what didn't, and adjust next time.",
)  # fmt: skip

CLOSERS = (
    "Want me to adapt it to {proj}?", "Let me know if anything errors out and paste the message.",
    "If you share the exact error I can narrow it down further.", "Happy to go deeper on any of these.",
    "Shout if you want the full version.", "Does that match what you're seeing?",
    "Tell me how it goes.", "Want me to walk through the trade-offs in more detail?",
    "If you paste the relevant file I can point at the exact line.", "Let me know which option you pick.",
    "I can turn this into a checklist if that's easier.", "Any constraints I should know about?",
)  # fmt: skip

LEADINS_LIFE = ("A few ideas:", "Some practical tips:", "Worth keeping in mind:", "Small things that help:")
CLOSERS_LIFE = (
    "Want me to turn this into a checklist?", "Tell me how it goes!", "Happy to adjust it if anything doesn't fit.",
    "Any constraints I should know about?", "Want a more detailed version?",
)  # fmt: skip

THANKS = (
    "thanks!!", "ty, that worked", "perfect, thank you", "amazing, thanks", "ok that fixed it 🙌",
    "legend, thanks", "cool cool thanks", "that did it, thx", "oh nice that's way cleaner, thanks",
    "worked first try, wow", "thank you!! saved me an hour",
)  # fmt: skip

ACKS = (
    "ok cool", "makes sense", "hmm ok", "got it", "right", "ahh ok", "oh nice", "ok trying that now",
    "ok that's what I suspected", "interesting", "fair enough", "ok will do",
)  # fmt: skip

BRB = (
    "brb", "one sec, someone at the door", "brb coffee", "hold on, meeting in 5", "gimme a min",
    "sorry, call came in, 2 min",
)  # fmt: skip

BACK = ("back. ok so", "ok back", "sorry, back", "back — where were we", "ok I'm back")

NOISE = (
    "ugh, mondays", "the coffee machine at work died, morale is low", "it's weirdly sunny today",
    "long week, glad it's almost friday", "my laptop fan sounds like a jet engine rn",
    "just ate way too much pasta", "internet is being flaky today, sorry if I drop",
    "we have an all-hands at 3 so I have like an hour", "ok I have a bunch of random stuff today",
    "finally some quiet time, everyone's at lunch", "new keyboard arrived and I keep typoing lol",
    "sorry in advance, I'm running on 5 hours of sleep",
)  # fmt: skip

GREETINGS = (
    "hey", "morning!", "hi again", "hey, back at it", "evening", "ok new day new problems", "yo",
    "hi! quick session today", "hello again 👋", "ok let's go",
)  # fmt: skip

GREETING_LEADS = ("hey! ", "morning! ", "hi again, ", "ok new day: ", "hello! ", "back again — ", "evening! ")
BOT_GREETINGS = (
    "Hey {name}! What are we working on today?", "Morning! Where do you want to start?",
    "Welcome back. What's up?", "Hi {name} — ready when you are.", "Hey! What's on the list today?",
    "Good to see you again. Fire away.",
)  # fmt: skip

BOT_THANKS = (
    "You're welcome! Shout if anything else comes up.", "Glad that sorted it.", "Nice, happy it worked.",
    "Great — that one's a good thing to have in your back pocket.", "Anytime!",
    "Perfect. If it comes back, the logs from that moment will tell us a lot.",
)  # fmt: skip

BOT_WAIT = ("No worries, I'll be here.", "Take your time.", "Sure, go ahead.", "No rush.")

GENERIC_FOLLOWUPS = (
    ("does that work on windows too?",
     "Mostly, yes. The differences on Windows are path separators, line endings and how environment "
     "variables are set in the shell. If you're in WSL it behaves like Linux; in plain PowerShell, use "
     "`$env:NAME = \"value\"` instead of `export`, and watch for CRLF line endings in scripts — Git's "
     "`core.autocrlf` setting can silently rewrite them. Everything else above should carry over unchanged."),
    ("what's the downside of doing it that way?",
     "The main trade-off is an extra moving part: it's one more thing to configure, monitor and explain to "
     "the next person who touches the code. It also hides some behaviour behind defaults, which is great "
     "until you need to debug it. For a small team I still think it's worth it, but if you only need this "
     "in one place, the inline version is perfectly fine and easier to read."),
    ("is there a way to do this without adding another dependency?",
     "Yes. The standard library covers the core of it; you'd write maybe 20-30 lines yourself instead of "
     "importing a package. The cost is that you own the edge cases — retries, timeouts, odd inputs. If the "
     "dependency is small, well maintained and already in your lockfile's neighbourhood, I'd use it; "
     "otherwise the hand-rolled version is reasonable."),
    ("how would I test this?",
     "I'd write one test for the happy path and one for the failure you just hit, so it can't regress. "
     "Keep them at the boundary: call the function or endpoint with realistic input and assert on the "
     "output, not on internals. If it talks to the network or a database, use a fake or a throwaway "
     "container rather than mocking every call — tests that mock everything tend to pass while prod breaks."),
    ("will this slow things down?",
     "Not noticeably in most cases. The extra work is small compared to a network round trip or a database "
     "query. If it's on a very hot path, measure it: time a few thousand calls before and after. My guess is "
     "you'll see a difference in the microseconds, which won't matter next to everything else a request does."),
    ("hmm, which one works better for SEO and faster deployment times?",
     "For SEO the platform matters less than how pages are rendered: server-rendered or statically generated "
     "HTML, correct titles and meta descriptions, a sitemap, and fast first paint. Any of them can serve that "
     "well if there's a CDN in front. For deploy speed, the ones that build from Git with good caching (and "
     "don't rebuild a Docker image from scratch every time) are usually fastest — typically under two minutes "
     "for a small app. I'd weigh region placement near your users more heavily than either."),
    ("wait why does that work",
     "Because the problem wasn't the code itself but the order things happen in. Before, the value was read "
     "before it had been set, so you got the stale one; now the read happens after initialisation is "
     "finished. It's the same idea behind most 'works on the second try' bugs: timing, not logic."),
    ("is that still the recommended way these days?",
     "Yes, as far as I know it's still the standard approach; the docs still show it as the primary option. "
     "There are newer alternatives that are a bit more ergonomic, but they solve the same problem the same "
     "way underneath, so I wouldn't switch an existing codebase just for that."),
    ("can you make it shorter?",
     "Sure — the minimal version is just the core two or three lines; everything else in the snippet is "
     "error handling and logging. I'd keep the error handling at least, because that's what will tell you "
     "what happened when it fails at 2am."),
    ("and if I'm using docker compose?",
     "Same idea, you just set it in the service's `environment:` block (or an `env_file:`) instead of your "
     "shell, and refer to other services by their service name rather than `localhost`. Remember that "
     "`localhost` inside a container is the container itself, which is the number one compose gotcha."),
)  # fmt: skip


@dataclass(frozen=True)
class Topic:
    """A kind of everyday help request: how the user asks, and the material the assistant's answer draws on."""

    asks: tuple[str, ...]
    explain: tuple[str, ...]
    tips: tuple[str, ...]
    code: tuple[tuple[str, str], ...] = ()
    follow: tuple[tuple[str, str], ...] = ()
    life: bool = False


DEV_TOPICS = (
    Topic(
        asks=(
            "how do I make our docker image smaller? it's like 1.8GB right now",
            "the {proj} image takes forever to push, any way to slim it down?",
            "why is my docker build so slow every time, it reinstalls everything",
        ),
        explain=(
            "Most of the size usually comes from build tools and caches that end up in the final image.",
            "A multi-stage build lets you compile or install in one stage and copy only the result into a "
            "small runtime stage.",
            "Layer order matters for speed: copy the dependency manifest first, install, and only then copy "
            "the source, so code changes don't invalidate the install layer.",
            "A `.dockerignore` that excludes `.git`, `node_modules` and test data often shaves off hundreds "
            "of megabytes by itself.",
            "Slim or distroless base images cut size further, at the cost of having no shell to debug with.",
        ),
        code=(
            (
                "dockerfile",
                "FROM node:22-alpine AS build\nWORKDIR /app\nCOPY package.json pnpm-lock.yaml ./\n"
                "RUN corepack enable && pnpm install --frozen-lockfile\nCOPY . .\nRUN pnpm build\n\n"
                "FROM node:22-alpine\nWORKDIR /app\nENV NODE_ENV=production\n"
                "COPY --from=build /app/dist ./dist\nCOPY --from=build /app/node_modules ./node_modules\n"
                'USER node\nCMD ["node", "dist/server.js"]',
            ),
            (
                "dockerfile",
                "FROM python:3.12-slim AS build\nWORKDIR /app\nRUN pip install --no-cache-dir uv\n"
                "COPY pyproject.toml uv.lock ./\nRUN uv sync --frozen --no-dev\n\n"
                "FROM python:3.12-slim\nWORKDIR /app\nCOPY --from=build /app/.venv /app/.venv\nCOPY src ./src\n"
                'ENV PATH=/app/.venv/bin:$PATH\nUSER 1000\nCMD ["uvicorn", "src.main:app", "--host", "0.0.0.0"]',
            ),
        ),
        tips=(
            "Run `docker history <image>` to see which layer is the heavy one.",
            "Combine `apt-get update` and `apt-get install` in one RUN and clean the apt lists afterwards.",
            "Use BuildKit cache mounts for package manager caches instead of baking them into layers.",
            "Don't run as root in the final stage.",
            "Tag images with the git SHA, not just `latest`.",
        ),
        follow=(
            (
                "does alpine break anything with python wheels?",
                "It can. Alpine uses musl instead of glibc, so many binary wheels don't apply and pip falls back "
                "to compiling from source, which is slow and needs build tools. For Python I'd use the `-slim` "
                "Debian images instead; they're a bit bigger than Alpine but wheels just work.",
            ),
        ),
    ),
    Topic(
        asks=(
            "my useEffect runs in an infinite loop, what am I doing wrong",
            "react keeps re-rendering the dashboard component like crazy",
            "why does my fetch in useEffect fire twice in dev?",
        ),
        explain=(
            "An effect re-runs whenever something in its dependency array changes identity, not just value.",
            "Objects and functions created during render are new on every render, so putting them in the "
            "dependency array makes the effect run every time.",
            "If the effect also sets state, you get render → effect → setState → render, forever.",
            "In development, React's StrictMode intentionally mounts components twice to surface effects "
            "that don't clean up after themselves.",
            "Moving the object inside the effect, or memoising it with `useMemo`/`useCallback`, breaks the "
            "loop.",
        ),
        code=(
            (
                "tsx",
                "useEffect(() => {\n  const controller = new AbortController();\n"
                "  fetch(`/api/orders?status=${status}`, { signal: controller.signal })\n"
                "    .then((r) => r.json())\n    .then(setOrders)\n    .catch((e) => {\n"
                "      if (e.name !== 'AbortError') setError(e);\n    });\n"
                "  return () => controller.abort();\n}, [status]);",
            ),
        ),
        tips=(
            "Install the `react-hooks/exhaustive-deps` lint rule and actually read its warnings.",
            "Prefer deriving values during render over syncing them with effects.",
            "For data fetching, a library like TanStack Query removes most of this boilerplate.",
            "Always return a cleanup function when the effect subscribes to something.",
            "Log the dependency values to see which one changes between renders.",
        ),
        follow=(
            (
                "should I just turn off strict mode then?",
                "I wouldn't. The double mount only happens in development and it's pointing at a real issue: "
                "an effect without cleanup. Once the effect aborts its fetch or unsubscribes on cleanup, the "
                "double run becomes harmless and you keep the safety net.",
            ),
        ),
    ),
    Topic(
        asks=(
            "this postgres query is slow, like 4 seconds, how do I figure out why",
            "do I need an index for this? it filters on customer_id and created_at",
            "EXPLAIN output is confusing me, what am I looking for",
        ),
        explain=(
            "Start with `EXPLAIN (ANALYZE, BUFFERS)` so you see real timings and how much data was read.",
            "A `Seq Scan` on a big table with a selective filter is the usual sign that an index is missing.",
            "For a filter on one column plus a range or sort on another, a composite index with the "
            "equality column first usually works best.",
            "Compare estimated rows with actual rows; big mismatches mean stale statistics, so run "
            "`ANALYZE` on the table.",
            "Indexes aren't free: each one slows writes a little and takes disk, so add the ones your "
            "queries actually use.",
        ),
        code=(
            (
                "sql",
                "EXPLAIN (ANALYZE, BUFFERS)\nSELECT id, total, created_at\nFROM orders\n"
                "WHERE customer_id = 4821\n  AND created_at >= now() - interval '30 days'\n"
                "ORDER BY created_at DESC\nLIMIT 20;\n\n"
                "CREATE INDEX CONCURRENTLY idx_orders_customer_created\n"
                "    ON orders (customer_id, created_at DESC);",
            ),
        ),
        tips=(
            "Use `CREATE INDEX CONCURRENTLY` in production so you don't lock writes.",
            "`pg_stat_statements` shows which queries cost the most in total, not just the slowest one.",
            "Check `pg_stat_user_indexes` for indexes that are never used.",
            "A partial index can be much smaller if you only query a subset, like `WHERE deleted_at IS NULL`.",
            "Run the query twice; the first run may just be reading cold data from disk.",
        ),
        follow=(
            (
                "does column order in the index really matter?",
                "Yes. A B-tree index on (customer_id, created_at) can serve `WHERE customer_id = ?` alone and "
                "`WHERE customer_id = ? ORDER BY created_at`, but not `WHERE created_at > ?` alone efficiently. "
                "Put equality filters first, then the range or sort column.",
            ),
        ),
    ),
    Topic(
        asks=(
            "I committed to main by accident, how do I move it to a branch",
            "rebase or merge for feature branches? team is arguing about it",
            "git says my branch has diverged, what do I do",
        ),
        explain=(
            "If you haven't pushed yet, you can create a branch at the current commit and reset main back "
            "one commit — nothing is lost.",
            "Rebase rewrites your commits on top of the latest main, giving a linear history; merge keeps "
            "the real history with a merge commit.",
            "Diverged means both your local branch and the remote have commits the other doesn't; you need "
            "to pull (merge or rebase) before pushing.",
            "Never rebase commits that other people have already based work on.",
            "`git reflog` is the safety net: it records where HEAD has been, so almost any mistake is "
            "recoverable.",
        ),
        code=(
            (
                "bash",
                "# move the last commit from main to a new branch (not pushed yet)\ngit branch feature/fix-export\n"
                "git reset --hard HEAD~1\ngit switch feature/fix-export\n\n# update a feature branch onto main\n"
                "git fetch origin\ngit rebase origin/main\ngit push --force-with-lease",
            ),
        ),
        tips=(
            "Use `--force-with-lease`, never plain `--force`.",
            "Set `pull.rebase = true` if your team prefers linear history.",
            "Squash-merge PRs if individual commits are noisy.",
            "Protect main on the remote so accidental pushes are rejected.",
            "When in doubt, make a backup branch before rewriting anything.",
        ),
        follow=(
            (
                "what if I already pushed it?",
                "Then don't rewrite main. Revert the commit on main with `git revert <sha>`, which adds a new "
                "commit undoing it, and cherry-pick the original onto your branch. History stays honest and "
                "nobody else's clone breaks.",
            ),
        ),
    ),
    Topic(
        asks=(
            "mypy keeps yelling 'Item None of Optional has no attribute', how do I fix it properly",
            "how do I type a function that returns different types based on an argument?",
            "what's the deal with TypedDict vs dataclass",
        ),
        explain=(
            "Mypy is telling you the value might be `None` at that point, and it's right unless you "
            "narrow it.",
            "An `if x is None: raise ...` or an early return narrows the type for the rest of the function.",
            "`typing.overload` lets you describe different return types for different argument types or "
            "literal values.",
            "TypedDict describes the shape of a plain dict (great for JSON), while a dataclass is a real "
            "class with attributes and methods.",
            "Avoid `cast` and `# type: ignore` unless you really know better than the checker.",
        ),
        code=(
            (
                "python",
                "from typing import Literal, overload\n\n\n@overload\n"
                "def load(path: str, raw: Literal[True]) -> bytes: ...\n@overload\n"
                "def load(path: str, raw: Literal[False] = ...) -> str: ...\n\n\n"
                "def load(path: str, raw: bool = False) -> bytes | str:\n    data = Path(path).read_bytes()\n"
                "    return data if raw else data.decode()\n\n\nuser = repo.get(user_id)\nif user is None:\n"
                "    raise NotFound(user_id)\nprint(user.email)  # narrowed to User here",
            ),
        ),
        tips=(
            "Turn on `strict = true` gradually, module by module.",
            "Use `reveal_type(x)` to see what mypy thinks a value is.",
            "Prefer `X | None` syntax on Python 3.10+.",
            "Generic containers should be typed with the abstract types (`Sequence`, `Mapping`) in parameters.",
            "Run mypy in CI so types don't rot.",
        ),
    ),
    Topic(
        asks=(
            "getting a CORS error calling the api from the frontend, but curl works fine",
            "'No Access-Control-Allow-Origin header' — what does that mean exactly",
            "do I need CORS if frontend and backend are on the same domain?",
        ),
        explain=(
            "CORS is enforced by the browser, not the server, which is why curl works and the browser "
            "refuses.",
            "The server has to say which origins may read its responses via `Access-Control-Allow-Origin`.",
            "Requests with custom headers or JSON bodies trigger a preflight `OPTIONS` request that must also "
            "succeed.",
            "If you send cookies, you need `credentials: 'include'` on the client and an explicit origin "
            "(not `*`) on the server.",
            "Same scheme, host and port means same origin, so no CORS is involved at all.",
        ),
        code=(
            (
                "ts",
                "import cors from 'cors';\n\napp.use(\n  cors({\n"
                "    origin: ['https://app.example.com', 'http://localhost:5173'],\n    credentials: true,\n"
                "    methods: ['GET', 'POST', 'PATCH', 'DELETE'],\n  }),\n);",
            ),
            (
                "python",
                "from fastapi.middleware.cors import CORSMiddleware\n\napp.add_middleware(\n    CORSMiddleware,\n"
                '    allow_origins=["https://app.example.com", "http://localhost:5173"],\n'
                '    allow_credentials=True,\n    allow_methods=["*"],\n    allow_headers=["*"],\n)',
            ),
        ),
        tips=(
            "Check the preflight request in the network tab, not just the failing one.",
            "A proxy in the dev server (Vite's `server.proxy`) avoids CORS entirely during development.",
            "Don't use `*` with credentials — browsers reject it.",
            "Error responses need CORS headers too, or you'll see a CORS error instead of the real error.",
        ),
    ),
    Topic(
        asks=(
            "how should refresh tokens work with JWTs? I keep reading conflicting stuff",
            "where do I store the jwt on the frontend, localStorage ok?",
            "users get logged out randomly, jwt related maybe?",
        ),
        explain=(
            "Keep access tokens short-lived (minutes) and use a longer-lived refresh token to get new ones.",
            "Store the refresh token in an httpOnly, Secure, SameSite cookie so JavaScript can't read it.",
            "localStorage is readable by any script on the page, so an XSS bug leaks the token.",
            "Rotate refresh tokens on every use and revoke the whole family if an old one is replayed.",
            "Random logouts are often clock skew between servers or an access token expiring mid-request "
            "without a retry.",
        ),
        code=(
            (
                "ts",
                "async function api(path: string, init: RequestInit = {}) {\n"
                "  let res = await fetch(path, { ...init, credentials: 'include' });\n"
                "  if (res.status === 401) {\n"
                "    const refreshed = await fetch('/auth/refresh', { method: 'POST', credentials: 'include' });\n"
                "    if (!refreshed.ok) throw new Error('session expired');\n"
                "    res = await fetch(path, { ...init, credentials: 'include' });\n  }\n  return res;\n}",
            ),
        ),
        tips=(
            "Give tokens a small leeway (30-60s) for clock skew.",
            "Keep the signing key out of the repo and rotate it on a schedule.",
            "Don't put personal data in the JWT payload; it's only encoded, not encrypted.",
            "Log refresh failures; they tell you a lot about session bugs.",
        ),
    ),
    Topic(
        asks=(
            "what's the difference between liveness and readiness probes",
            "pods keep restarting during deploys, probe issue?",
            "how long should initialDelaySeconds be",
        ),
        explain=(
            "Readiness decides whether a pod receives traffic; liveness decides whether Kubernetes kills "
            "and restarts it.",
            "A liveness probe that checks the database will restart every pod when the database blips, "
            "which makes an outage worse.",
            "Readiness can check dependencies; liveness should only check that the process itself is alive.",
            "Slow-starting apps should use a `startupProbe` instead of a long initial delay.",
            "Restarts during deploys often mean the new pods fail readiness and the rollout times out.",
        ),
        code=(
            (
                "yaml",
                "startupProbe:\n  httpGet: { path: /healthz, port: 8080 }\n  failureThreshold: 30\n"
                "  periodSeconds: 2\nreadinessProbe:\n  httpGet: { path: /readyz, port: 8080 }\n"
                "  periodSeconds: 5\n  failureThreshold: 3\nlivenessProbe:\n  httpGet: { path: /healthz, port: 8080 }\n"
                "  periodSeconds: 10\n  failureThreshold: 6",
            ),
        ),
        tips=(
            "`kubectl describe pod` shows probe failures in the events section.",
            "Keep probe endpoints cheap; they run constantly.",
            "Set resource requests so probes don't fail just because the pod is CPU-starved.",
            "Use a PodDisruptionBudget so rollouts never take everything down at once.",
        ),
    ),
    Topic(
        asks=(
            "can you help me write an nginx config to proxy /api to my node app",
            "nginx returns 502 bad gateway, app is running though",
            "how do I serve the react build and the api from one nginx",
        ),
        explain=(
            "A 502 means nginx couldn't talk to the upstream: wrong port, app bound to 127.0.0.1 in another "
            "container, or the app crashed.",
            "`proxy_pass` with a trailing slash strips the location prefix; without it the full path is "
            "forwarded.",
            "Forward the original host and client IP headers so the app sees real values.",
            "For a single-page app, `try_files $uri /index.html` makes client-side routes work on refresh.",
            "WebSockets need the `Upgrade` and `Connection` headers passed through explicitly.",
        ),
        code=(
            (
                "nginx",
                "server {\n    listen 80;\n    server_name app.example.com;\n    root /var/www/app/dist;\n\n"
                "    location /api/ {\n        proxy_pass http://127.0.0.1:3000/;\n"
                "        proxy_set_header Host $host;\n        proxy_set_header X-Real-IP $remote_addr;\n"
                "        proxy_set_header X-Forwarded-Proto $scheme;\n    }\n\n    location / {\n"
                "        try_files $uri /index.html;\n    }\n}",
            ),
        ),
        tips=(
            "`nginx -t` validates the config before you reload.",
            "Check `/var/log/nginx/error.log` for the actual upstream error.",
            "Set `client_max_body_size` if uploads fail with 413.",
            "Add gzip or brotli for the static assets.",
        ),
    ),
    Topic(
        asks=(
            "how do I center a div vertically, for real this time",
            "css grid vs flexbox for a card layout?",
            "my layout breaks on mobile, sidebar overlaps everything",
        ),
        explain=(
            "Flexbox is one-dimensional (a row or a column); grid is two-dimensional (rows and columns "
            "together).",
            "For centering, `display: grid; place-items: center;` on the parent is the shortest reliable "
            "way.",
            "For a card layout that wraps, `grid-template-columns: repeat(auto-fill, minmax(16rem, 1fr))` "
            "does the responsive part for you.",
            "Overlaps on mobile usually come from fixed widths or absolute positioning that assume a wide "
            "screen.",
            "A mobile-first stylesheet with a single media query for wide screens is easier to reason about.",
        ),
        code=(
            (
                "css",
                ".page {\n  display: grid;\n  grid-template-columns: 1fr;\n  gap: 1rem;\n}\n\n"
                "@media (min-width: 900px) {\n  .page {\n    grid-template-columns: 16rem 1fr;\n  }\n}\n\n"
                ".cards {\n  display: grid;\n  grid-template-columns: repeat(auto-fill, minmax(16rem, 1fr));\n"
                "  gap: 1rem;\n}\n\n.center {\n  display: grid;\n  place-items: center;\n  min-height: 100dvh;\n}",
            ),
        ),
        tips=(
            "Use `min-width: 0` on flex children that contain long text.",
            "Prefer `rem` for spacing so it scales with user font settings.",
            "`100dvh` avoids the mobile browser toolbar jump that `100vh` has.",
            "Test with the device toolbar in devtools, but also on a real phone once.",
        ),
    ),
    Topic(
        asks=(
            "need a regex to pull order numbers like ORD-2024-000123 out of emails",
            "regex to validate a UK postcode? or is that a bad idea",
            "why is my regex matching way too much",
        ),
        explain=(
            'Greedy quantifiers like `.*` take as much as they can; `.*?` or a negated class like `[^"]*` '
            "stops at the first possible end.",
            "Anchors (`^`, `$`, `\\b`) are what stop a pattern from matching inside a longer string.",
            "For complex formats like postcodes or emails, a loose regex plus a real check is usually "
            "better than a perfect regex.",
            "Named groups make the match easier to use and the pattern easier to read.",
            "Test patterns against both examples that should match and ones that shouldn't.",
        ),
        code=(
            (
                "python",
                'import re\n\nORDER = re.compile(r"\\bORD-(?P<year>\\d{4})-(?P<num>\\d{6})\\b")\n\n'
                'for m in ORDER.finditer(body):\n    print(m.group("year"), int(m.group("num")))',
            ),
            (
                "js",
                "const ORDER = /\\bORD-(?<year>\\d{4})-(?<num>\\d{6})\\b/g;\n\n"
                "for (const m of body.matchAll(ORDER)) {\n  console.log(m.groups.year, Number(m.groups.num));\n}",
            ),
        ),
        tips=(
            "regex101.com explains each part of a pattern as you type.",
            "Compile patterns once, outside loops.",
            "Beware catastrophic backtracking with nested quantifiers on user input.",
            "Use verbose mode (`re.X`) for long patterns so you can comment them.",
        ),
    ),
    Topic(
        asks=(
            "bash script to loop over all the csv files in a folder and gzip them",
            "my bash script keeps going after a command fails, how do I stop that",
            "how do I handle filenames with spaces in a bash loop",
        ),
        explain=(
            "`set -euo pipefail` at the top makes the script stop on errors, unset variables and failures "
            "inside pipes.",
            "Looping with a glob (`for f in dir/*.csv`) handles spaces correctly as long as you quote "
            '`"$f"`.',
            "Parsing `ls` output breaks on spaces and newlines in names; globs or `find -print0` don't.",
            "`shopt -s nullglob` stops the loop body running once with the literal pattern when nothing "
            "matches.",
            "ShellCheck catches most quoting mistakes before they bite.",
        ),
        code=(
            (
                "bash",
                "#!/usr/bin/env bash\nset -euo pipefail\nshopt -s nullglob\n\nsrc=${1:-./exports}\n"
                'for f in "$src"/*.csv; do\n  echo "compressing $f"\n  gzip -9 -- "$f"\ndone\n\n'
                "# or, for nested folders\nfind \"$src\" -name '*.csv' -print0 | xargs -0 -n1 gzip -9",
            ),
        ),
        tips=(
            "Run `shellcheck script.sh` in CI.",
            "Use `trap 'echo failed at line $LINENO' ERR` for easier debugging.",
            "Prefer `$(...)` over backticks.",
            "Once a script passes ~100 lines, consider Python instead.",
        ),
    ),
    Topic(
        asks=(
            "pandas groupby then get the top 3 rows per group, how",
            "my pandas merge is creating way more rows than expected",
            "SettingWithCopyWarning again, what does it actually want",
        ),
        explain=(
            "`groupby(...).head(3)` after sorting gives the first rows per group without an apply.",
            "A merge multiplies rows when the join key isn't unique on one side; check with "
            "`df.key.is_unique`.",
            "`validate='one_to_many'` in `merge` makes pandas raise instead of silently duplicating.",
            "SettingWithCopyWarning means you might be modifying a temporary copy; use `.loc` on the "
            "original or call `.copy()` explicitly.",
            "Method chaining with `assign` keeps transformations readable and avoids the warning.",
        ),
        code=(
            (
                "python",
                'top = (\n    df.sort_values(["region", "revenue"], ascending=[True, False])\n'
                '      .groupby("region", as_index=False)\n      .head(3)\n)\n\n'
                'merged = orders.merge(customers, on="customer_id", how="left", validate="many_to_one")\n\n'
                'clean = df.loc[df.status == "paid"].copy()\nclean["net"] = clean.gross - clean.fees',
            ),
        ),
        tips=(
            "Check `len(df)` before and after every merge while debugging.",
            "Use categorical dtypes for repeated strings to save memory.",
            "Polars is worth a look if things get slow.",
            "`df.info(memory_usage='deep')` shows where memory goes.",
        ),
    ),
    Topic(
        asks=(
            "github actions takes 12 minutes, how do I cache dependencies",
            "how do I run the test job only when backend files change",
            "can I reuse a workflow across repos",
        ),
        explain=(
            "`actions/setup-node` and `actions/setup-python` have built-in dependency caching keyed on the "
            "lockfile.",
            "Splitting lint, test and build into parallel jobs often halves wall-clock time.",
            "`paths` filters on the trigger skip workflows when irrelevant files change.",
            "Reusable workflows (`workflow_call`) let several repos share one definition.",
            "Docker layer caching via `cache-from: type=gha` speeds up image builds a lot.",
        ),
        code=(
            (
                "yaml",
                "on:\n  pull_request:\n    paths: ['api/**', '.github/workflows/api.yml']\n\njobs:\n  test:\n"
                "    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n"
                "      - uses: actions/setup-python@v5\n        with:\n          python-version: '3.12'\n"
                "          cache: pip\n      - run: pip install -r requirements-dev.txt\n      - run: pytest -q",
            ),
        ),
        tips=(
            "Use `concurrency` to cancel superseded runs on the same branch.",
            "Pin third-party actions to a commit SHA.",
            "Upload test reports as artifacts so failures are readable.",
            "Use OIDC instead of long-lived cloud keys in secrets.",
        ),
    ),
    Topic(
        asks=(
            "terraform state lock error, someone's apply crashed I think",
            "how should we structure terraform for staging and prod",
            "is it ok to keep terraform state in git?",
        ),
        explain=(
            "A stale lock after a crashed apply can be released with `terraform force-unlock <id>`, once "
            "you're sure nobody is running.",
            "State belongs in a remote backend (S3 plus DynamoDB locking, GCS, or Terraform Cloud), never "
            "in git — it contains secrets.",
            "Separate state per environment so a mistake in staging can't touch prod.",
            "Modules hold the shared shape; each environment is a small root config that calls them with "
            "different variables.",
            "Always read the plan before applying, especially any line with `must be replaced`.",
        ),
        code=(
            (
                "hcl",
                'terraform {\n  backend "s3" {\n    bucket         = "acme-tf-state"\n'
                '    key            = "staging/app.tfstate"\n    region         = "eu-west-1"\n'
                '    dynamodb_table = "tf-locks"\n    encrypt        = true\n  }\n}\n\nmodule "app" {\n'
                '  source        = "../modules/app"\n  env           = "staging"\n  instance_size = "small"\n}',
            ),
        ),
        tips=(
            "Run `terraform plan` in CI on every PR and post the output.",
            "Use `prevent_destroy` on databases.",
            "Keep provider versions pinned.",
            "Import existing resources instead of recreating them.",
        ),
    ),
    Topic(
        asks=(
            "should I cache this endpoint in redis? it's hit a lot and rarely changes",
            "how do I invalidate redis cache when data changes",
            "cache stampede, is that a real problem or theoretical",
        ),
        explain=(
            "Cache-aside is the usual pattern: read from cache, fall back to the database, then write the "
            "result back with a TTL.",
            "A TTL is your safety net even if you also invalidate on writes.",
            "Invalidation on write works best when keys are derived from the entity, like `product:123`.",
            "A stampede happens when a hot key expires and hundreds of requests recompute it at once; a "
            "short lock or early refresh avoids it.",
            "Measure the hit rate; a cache with a 10% hit rate is mostly overhead.",
        ),
        code=(
            (
                "python",
                'async def get_product(pid: int) -> dict:\n    key = f"product:{pid}"\n'
                "    if (cached := await redis.get(key)) is not None:\n        return json.loads(cached)\n"
                "    product = await db.fetch_product(pid)\n"
                "    await redis.set(key, json.dumps(product), ex=300)\n    return product\n\n\n"
                "async def update_product(pid: int, data: dict) -> None:\n    await db.update_product(pid, data)\n"
                '    await redis.delete(f"product:{pid}")',
            ),
        ),
        tips=(
            "Add jitter to TTLs so keys don't all expire together.",
            "Set `maxmemory-policy allkeys-lru` if Redis is only a cache.",
            "Namespace keys with a version prefix so you can invalidate everything at once.",
            "Don't cache per-user data under shared keys.",
        ),
    ),
    Topic(
        asks=(
            "websocket keeps disconnecting on mobile, how do I reconnect properly",
            "socket.io or plain websockets?",
            "how do I scale websockets across multiple servers",
        ),
        explain=(
            "Mobile networks and sleeping tabs drop connections routinely, so reconnection has to be "
            "part of the design.",
            "Exponential backoff with jitter avoids every client reconnecting in the same second after a "
            "deploy.",
            "Application-level pings detect dead connections that TCP hasn't noticed yet.",
            "Across several servers you need a shared pub/sub, commonly Redis, so a message reaches clients "
            "on other nodes.",
            "Plain WebSockets are enough for most apps; Socket.IO adds rooms and fallbacks at the cost of "
            "its own protocol.",
        ),
        code=(
            (
                "ts",
                "function connect(attempt = 0) {\n  const ws = new WebSocket(URL);\n"
                "  ws.onopen = () => { attempt = 0; };\n  ws.onclose = () => {\n"
                "    const delay = Math.min(30_000, 500 * 2 ** attempt) * (0.5 + Math.random());\n"
                "    setTimeout(() => connect(attempt + 1), delay);\n  };\n  return ws;\n}",
            ),
        ),
        tips=(
            "Resend subscriptions after reconnecting.",
            "Include a last-seen message id so the server can replay missed events.",
            "Load balancers need sticky sessions only if you use long-polling fallbacks.",
            "Watch idle timeouts on proxies; 60s is a common default.",
        ),
    ),
    Topic(
        asks=(
            "how do pytest fixtures with yield work",
            "tests share state and fail when run together but pass alone",
            "how do I parametrize a test with ids that make sense",
        ),
        explain=(
            "Code before `yield` is setup, code after is teardown, and it runs even if the test fails.",
            "Tests passing alone but failing together almost always share mutable state: a module-level "
            "object, a database row, or an environment variable.",
            "Fixture scope controls how often setup runs; `function` is the safe default.",
            "`monkeypatch` and `tmp_path` undo themselves automatically, which avoids leaks between tests.",
            "`pytest.param(..., id='...')` gives readable names in the output.",
        ),
        code=(
            (
                "python",
                '@pytest.fixture\ndef db(tmp_path):\n    conn = sqlite3.connect(tmp_path / "test.db")\n'
                "    conn.executescript(SCHEMA)\n    yield conn\n    conn.close()\n\n\n"
                '@pytest.mark.parametrize(\n    ("raw", "expected"),\n    [\n'
                '        pytest.param("1,5", 1.5, id="comma-decimal"),\n'
                '        pytest.param("1.5", 1.5, id="dot-decimal"),\n    ],\n)\n'
                "def test_parse_amount(raw, expected):\n    assert parse_amount(raw) == expected",
            ),
        ),
        tips=(
            "Run with `-p randomly` to shake out order dependence.",
            "Use `--lf` to rerun only last failures.",
            "Keep fixtures in `conftest.py` close to the tests that use them.",
            "`-x --pdb` drops you into a debugger at the first failure.",
        ),
    ),
    Topic(
        asks=(
            "how do I mock a module in vitest",
            "jest mock isn't being applied, the real function still runs",
            "should I mock fetch or use msw",
        ),
        explain=(
            "Module mocks are hoisted, but they only apply to imports that resolve to exactly the same "
            "module path.",
            "If the code under test imports a function from its own module, mocking that export won't "
            "affect the internal call.",
            "MSW intercepts requests at the network level, so your code uses its real fetch and you test "
            "more of it.",
            "Reset mocks between tests so one test's setup doesn't leak into another.",
            "Prefer dependency injection for things you often swap, like clocks and HTTP clients.",
        ),
        code=(
            (
                "ts",
                "import { vi, test, expect } from 'vitest';\nimport { sendInvoice } from './invoices';\n\n"
                "vi.mock('./mailer', () => ({ send: vi.fn().mockResolvedValue({ id: 'm_1' }) }));\n\n"
                "test('sends the invoice email', async () => {\n  const { send } = await import('./mailer');\n"
                "  await sendInvoice(42);\n  expect(send).toHaveBeenCalledWith(expect.objectContaining({ to: 'a@b.c' }));\n});",
            ),
        ),
        tips=(
            "`vi.restoreAllMocks()` in `afterEach`.",
            "Use fake timers for debounce and retry logic.",
            "Snapshot tests are brittle; keep them small.",
            "Assert on behaviour, not on how many times an internal helper was called.",
        ),
    ),
    Topic(
        asks=(
            "how do I do SEO properly in next.js app router",
            "google isn't indexing half our pages, where do I start",
            "do I need a sitemap for a small site?",
        ),
        explain=(
            "In the App Router, export `metadata` or `generateMetadata` from each page to set titles, "
            "descriptions and Open Graph tags.",
            "Pages that render content only on the client can be indexed late or poorly; server-render or "
            "statically generate anything you want found.",
            "Search Console's URL inspection tells you exactly why a page isn't indexed.",
            "A sitemap helps discovery, especially for pages that aren't linked much internally.",
            "Canonical URLs prevent duplicate content when the same page is reachable under several paths.",
        ),
        code=(
            (
                "tsx",
                "export async function generateMetadata({ params }: Props): Promise<Metadata> {\n"
                "  const post = await getPost(params.slug);\n  return {\n    title: `${post.title} — Blog`,\n"
                "    description: post.excerpt,\n    alternates: { canonical: `/blog/${post.slug}` },\n"
                "    openGraph: { images: [post.cover] },\n  };\n}",
            ),
        ),
        tips=(
            "Add `app/sitemap.ts` and `app/robots.ts`.",
            "Check Core Web Vitals; slow pages rank worse.",
            "Use descriptive link text rather than 'click here'.",
            "Structured data (JSON-LD) helps rich results for articles and products.",
        ),
    ),
    Topic(
        asks=(
            "where should secrets live? we have a .env in the repo rn (gitignored at least)",
            "how do I load env vars in node without dotenv everywhere",
            "best way to share dev secrets with the team?",
        ),
        explain=(
            "A gitignored `.env` for local development is fine; production secrets should come from the "
            "platform's secret store.",
            "Validate required variables once at startup so the app fails fast with a clear message.",
            "Node 20+ can load a file natively with `node --env-file=.env`.",
            "A password manager or a tool like Doppler, 1Password CLI or SOPS works better for sharing than "
            "Slack messages.",
            "Commit a `.env.example` with the variable names and dummy values.",
        ),
        code=(
            (
                "ts",
                "import { z } from 'zod';\n\nconst Env = z.object({\n  DATABASE_URL: z.string().url(),\n"
                "  STRIPE_SECRET_KEY: z.string().startsWith('sk_'),\n"
                "  PORT: z.coerce.number().default(3000),\n});\n\nexport const env = Env.parse(process.env);",
            ),
            (
                "python",
                "from pydantic_settings import BaseSettings\n\n\nclass Settings(BaseSettings):\n"
                "    database_url: str\n    stripe_secret_key: str\n    port: int = 8000\n\n"
                '    model_config = {"env_file": ".env"}\n\n\nsettings = Settings()',
            ),
        ),
        tips=(
            "Scan the repo with gitleaks in CI.",
            "Rotate secrets when someone leaves the team.",
            "Use different keys per environment.",
            "Never log the full config object.",
        ),
    ),
    Topic(
        asks=(
            "how do I run my app as a systemd service so it restarts on crash",
            "systemd service starts but can't find env vars",
            "how do I see logs for a systemd unit",
        ),
        explain=(
            "A unit file with `Restart=on-failure` brings the process back after a crash.",
            "systemd doesn't read your shell profile, so variables need `Environment=` or "
            "`EnvironmentFile=` in the unit.",
            "`journalctl -u name -f` follows the unit's logs like `tail -f`.",
            "Run the service as a dedicated user, not root.",
            "After editing a unit, `systemctl daemon-reload` is needed before restart.",
        ),
        code=(
            (
                "ini",
                "[Unit]\nDescription={proj} API\nAfter=network-online.target\n\n[Service]\nUser=app\n"
                "WorkingDirectory=/srv/app\nEnvironmentFile=/etc/app/env\nExecStart=/srv/app/.venv/bin/gunicorn -w 4 app:app\n"
                "Restart=on-failure\nRestartSec=3\n\n[Install]\nWantedBy=multi-user.target",
            ),
        ),
        tips=(
            "`systemctl status` shows the last few log lines too.",
            "Use `ProtectSystem=strict` for basic sandboxing.",
            "Limit memory with `MemoryMax=`.",
            "A timer unit can replace cron for scheduled jobs.",
        ),
    ),
    Topic(
        asks=(
            "postgres table is huge but has few rows, bloat?",
            "autovacuum seems to never run on the events table",
            "should I run VACUUM FULL?",
        ),
        explain=(
            "Deleted and updated rows leave dead tuples behind until vacuum reclaims them, which is the "
            "bloat you're seeing.",
            "Autovacuum triggers on a fraction of the table, so on big tables it can wait far too long; "
            "lower the scale factor per table.",
            "`VACUUM FULL` rewrites the table and takes an exclusive lock, so it blocks everything; "
            "`pg_repack` does the same online.",
            "Long-running transactions prevent vacuum from cleaning anything newer than them.",
            "`pg_stat_user_tables` shows dead tuples and when autovacuum last ran.",
        ),
        code=(
            (
                "sql",
                "SELECT relname, n_live_tup, n_dead_tup, last_autovacuum\nFROM pg_stat_user_tables\n"
                "ORDER BY n_dead_tup DESC\nLIMIT 10;\n\nALTER TABLE events SET (\n"
                "    autovacuum_vacuum_scale_factor = 0.02,\n    autovacuum_vacuum_threshold = 1000\n);",
            ),
        ),
        tips=(
            "Look for `idle in transaction` sessions.",
            "Partition append-only tables by time and drop old partitions.",
            "Batch large deletes.",
            "Monitor transaction ID age to avoid wraparound.",
        ),
    ),
    Topic(
        asks=(
            "how do I write a migration that renames a column without downtime",
            "alembic autogenerate missed my index",
            "should migrations run on app startup?",
        ),
        explain=(
            "A zero-downtime rename is expand-and-contract: add the new column, write to both, backfill, "
            "switch reads, then drop the old one.",
            "Autogenerate compares models to the database and misses some things, like functional indexes "
            "and server defaults; always read the generated file.",
            "Running migrations on startup races when several instances boot at once; a separate release "
            "step is safer.",
            "Large backfills should run in batches outside the migration transaction.",
            "Every migration should have a working downgrade, or a note explaining why it can't.",
        ),
        code=(
            (
                "python",
                'def upgrade() -> None:\n    op.add_column("users", sa.Column("display_name", sa.Text(), nullable=True))\n'
                '    op.execute("UPDATE users SET display_name = username WHERE display_name IS NULL")\n\n\n'
                'def downgrade() -> None:\n    op.drop_column("users", "display_name")',
            ),
        ),
        tips=(
            "Set a lock timeout in migrations so they fail instead of queueing behind a long query.",
            "Test migrations against a copy of production data size.",
            "Never edit a migration that has already run somewhere.",
            "Keep schema and data migrations separate.",
        ),
    ),
    Topic(
        asks=(
            "typescript generics are melting my brain, how do I type a function that picks keys",
            "type 'string' is not assignable to type 'never', what",
            "how do I type an API response that can be success or error",
        ),
        explain=(
            "Generics let the caller's types flow through the function instead of collapsing to `any`.",
            "`K extends keyof T` restricts a parameter to the keys of an object type.",
            "`never` usually appears when TypeScript intersects incompatible types, often from indexing "
            "with a union of keys.",
            "A discriminated union with a literal `ok` or `status` field makes success and error cases easy "
            "to narrow.",
            "`satisfies` checks a value against a type without widening it.",
        ),
        code=(
            (
                "ts",
                "function pick<T, K extends keyof T>(obj: T, keys: readonly K[]): Pick<T, K> {\n"
                "  const out = {} as Pick<T, K>;\n  for (const k of keys) out[k] = obj[k];\n  return out;\n}\n\n"
                "type Result<T> = { ok: true; data: T } | { ok: false; error: string };\n\n"
                "function handle(r: Result<User>) {\n  if (r.ok) return r.data.email;\n  return r.error;\n}",
            ),
        ),
        tips=(
            "Hover in the editor to see inferred types.",
            "Turn on `noUncheckedIndexedAccess`.",
            "Prefer unions over enums for simple string sets.",
            "Zod can derive types from runtime schemas.",
        ),
    ),
    Topic(
        asks=(
            "how do I verify stripe webhook signatures in express",
            "stripe webhook says 'no signatures found matching the expected signature'",
            "webhooks arrive twice sometimes, is that normal",
        ),
        explain=(
            "Stripe signs the raw request body, so verification fails if a JSON body parser has already "
            "re-serialised it.",
            "Use the raw body only on the webhook route and keep JSON parsing for everything else.",
            "Deliveries are at-least-once, so duplicates are normal; store processed event ids and skip "
            "repeats.",
            "Respond with 2xx quickly and do the heavy work in a background job.",
            "Each endpoint has its own signing secret, and test mode uses a different one.",
        ),
        code=(
            (
                "ts",
                "app.post('/webhooks/stripe', express.raw({ type: 'application/json' }), async (req, res) => {\n"
                "  let event: Stripe.Event;\n  try {\n    event = stripe.webhooks.constructEvent(\n"
                "      req.body, req.header('stripe-signature')!, env.STRIPE_WEBHOOK_SECRET,\n    );\n"
                "  } catch {\n    return res.sendStatus(400);\n  }\n"
                "  if (await seen(event.id)) return res.sendStatus(200);\n  await queue.add('stripe', event);\n"
                "  res.sendStatus(200);\n});",
            ),
        ),
        tips=(
            "Use `stripe listen --forward-to` locally.",
            "Handle events out of order; fetch the latest object state if unsure.",
            "Log the event id on every line.",
            "Alert if the webhook error rate climbs.",
        ),
    ),
    Topic(
        asks=(
            "how do I let users upload files straight to S3 without going through my server",
            "presigned url upload gives 403",
            "what's a sane max file size and how do I enforce it",
        ),
        explain=(
            "A presigned URL lets the browser upload directly to the bucket with temporary permission "
            "you grant.",
            "A 403 usually means the content type or headers used in the upload differ from the ones that "
            "were signed, or the URL expired.",
            "Presigned POST (rather than PUT) supports a `content-length-range` condition to enforce a "
            "size limit.",
            "The bucket needs a CORS rule allowing your origin to PUT or POST.",
            "Keep the bucket private and serve files through signed GET URLs or a CDN.",
        ),
        code=(
            (
                "python",
                'url = s3.generate_presigned_post(\n    Bucket="uploads-prod",\n'
                '    Key=f"avatars/{user.id}/{uuid4()}.jpg",\n'
                '    Conditions=[["content-length-range", 0, 5 * 1024 * 1024], {"Content-Type": "image/jpeg"}],\n'
                '    Fields={"Content-Type": "image/jpeg"},\n    ExpiresIn=300,\n)',
            ),
        ),
        tips=(
            "Generate keys server-side; never trust client filenames.",
            "Scan or at least re-encode images after upload.",
            "Set a lifecycle rule to delete incomplete multipart uploads.",
            "Record the upload in your database only after it completes.",
        ),
    ),
    Topic(
        asks=(
            "how should I structure logs so they're actually searchable",
            "our logs are a mess of print statements, where do I start",
            "what log level should a failed payment be",
        ),
        explain=(
            "Structured logs (JSON lines with consistent keys) can be filtered by field instead of by regex.",
            "Attach a request id to every line so you can follow one request across services.",
            "Levels are for the reader: error means someone should look, warning means unusual but handled, "
            "info is the story of normal operation.",
            "A failed payment the user can retry is usually a warning; one your system caused is an error.",
            "Avoid logging secrets and full request bodies.",
        ),
        code=(
            (
                "python",
                "import structlog\n\nlog = structlog.get_logger()\n\n"
                'log.info("order.created", order_id=order.id, total=str(order.total), user_id=user.id)\n'
                'log.warning("payment.declined", order_id=order.id, reason=exc.code)',
            ),
            (
                "ts",
                "import pino from 'pino';\n\nconst log = pino({ level: process.env.LOG_LEVEL ?? 'info' });\n\n"
                "log.info({ orderId: order.id, total: order.total }, 'order created');\n"
                "log.warn({ orderId: order.id, reason: err.code }, 'payment declined');",
            ),
        ),
        tips=(
            "Use event-style messages like `order.created` that are easy to grep.",
            "Sample noisy debug logs in production.",
            "Ship logs to one place (Loki, Datadog, CloudWatch).",
            "Include the version or commit in every log line.",
        ),
    ),
    Topic(
        asks=(
            "offset pagination or cursor pagination for an infinite scroll feed",
            "page 500 of our list endpoint is super slow",
            "how do I return a 'next' cursor from the api",
        ),
        explain=(
            "Offset pagination gets slower as the offset grows because the database still walks past all "
            "skipped rows.",
            "Cursor (keyset) pagination filters on the last seen sort key, so every page costs the same.",
            "The cursor should encode every column in the sort, including a unique tiebreaker like the id.",
            "Encode it opaquely (base64) so clients don't depend on its shape.",
            "Offset is still fine for small admin tables where people jump to page numbers.",
        ),
        code=(
            (
                "sql",
                "SELECT id, created_at, title\nFROM posts\nWHERE (created_at, id) < ($1, $2)\n"
                "ORDER BY created_at DESC, id DESC\nLIMIT 20;",
            ),
        ),
        tips=(
            "Index the sort columns together.",
            "Return `next_cursor: null` on the last page.",
            "Cap the page size server-side.",
            "Document that cursors may expire.",
        ),
    ),
    Topic(
        asks=(
            "search box fires a request on every keystroke, how do I debounce it in react",
            "debounce vs throttle, which for a resize handler",
            "my debounced function uses stale state",
        ),
        explain=(
            "Debounce waits until input stops for a moment; throttle runs at most once per interval.",
            "Search-as-you-type wants debounce; scroll and resize handlers usually want throttle.",
            "Creating the debounced function inside render makes a new one each time, so it never "
            "actually waits.",
            "Stale state comes from a closure captured when the debounced function was created; debounce "
            "the value instead of the callback.",
            "Cancel in-flight requests when a new query starts so old results can't overwrite new ones.",
        ),
        code=(
            (
                "tsx",
                "function useDebounced<T>(value: T, ms = 300): T {\n  const [v, setV] = useState(value);\n"
                "  useEffect(() => {\n    const t = setTimeout(() => setV(value), ms);\n"
                "    return () => clearTimeout(t);\n  }, [value, ms]);\n  return v;\n}\n\n"
                "const debouncedQuery = useDebounced(query);\nconst { data } = useQuery({ queryKey: ['search', debouncedQuery], queryFn: () => search(debouncedQuery) });",
            ),
        ),
        tips=(
            "300ms is a good starting delay for search.",
            "Show a loading indicator only after ~150ms to avoid flicker.",
            "Don't search for queries shorter than two characters.",
            "Keep the input controlled but debounce the effect.",
        ),
    ),
    Topic(
        asks=(
            "how do I get https on my vps with certbot",
            "certbot renewal failed, cert expires in 5 days",
            "DNS record for a subdomain pointing at vercel, A or CNAME?",
        ),
        explain=(
            "Certbot with the nginx plugin can obtain a certificate and edit the config for you.",
            "Renewal runs from a systemd timer; `certbot renew --dry-run` tells you whether it will work.",
            "Renewals often fail because port 80 is blocked or redirected in a way the HTTP challenge can't "
            "follow.",
            "For a subdomain pointing at a platform, a CNAME to the hostname they give you is usually right; "
            "apex domains need A records or ALIAS/flattening.",
            "DNS changes can take a while to propagate, depending on the old record's TTL.",
        ),
        code=(
            (
                "bash",
                "sudo apt install certbot python3-certbot-nginx\nsudo certbot --nginx -d app.example.com\n"
                "sudo certbot renew --dry-run\nsystemctl list-timers | grep certbot\n"
                "dig +short app.example.com CNAME",
            ),
        ),
        tips=(
            "Lower the TTL a day before migrating DNS.",
            "Use the DNS challenge for wildcard certs.",
            "Monitor expiry with an uptime checker.",
            "Keep port 80 open for the challenge even if you redirect to HTTPS.",
        ),
    ),
    Topic(
        asks=(
            "how do I set up ssh so I don't type the server ip every time",
            "permission denied (publickey) but the key is on the server",
            "should I use ed25519 or rsa keys",
        ),
        explain=(
            "An entry in `~/.ssh/config` gives the server a short alias with user, port and key.",
            "Permission denied often comes from wrong permissions on `~/.ssh` or `authorized_keys` on the "
            "server; sshd refuses files that are too open.",
            "`ssh -v` shows which keys are offered and why they were rejected.",
            "Ed25519 keys are shorter, faster and the modern default; RSA is only needed for very old "
            "servers.",
            "Disable password login once key login works.",
        ),
        code=(
            (
                "bash",
                'ssh-keygen -t ed25519 -C "laptop-2025"\nssh-copy-id -i ~/.ssh/id_ed25519.pub deploy@203.0.113.10\n\n'
                "# ~/.ssh/config\nHost prod\n    HostName 203.0.113.10\n    User deploy\n"
                "    IdentityFile ~/.ssh/id_ed25519\n\nchmod 700 ~/.ssh && chmod 600 ~/.ssh/authorized_keys",
            ),
        ),
        tips=(
            "Use an ssh agent so you type the passphrase once.",
            "Add `IdentitiesOnly yes` if you have many keys.",
            "Fail2ban helps against brute force noise.",
            "Keep a second way in (console access) before hardening sshd.",
        ),
    ),
    Topic(
        asks=(
            "is a Makefile overkill for a small repo",
            "what should go in a justfile vs package.json scripts",
            "how do I make a 'make dev' that starts everything",
        ),
        explain=(
            "A task runner gives the team one memorable entry point per workflow, whatever the language.",
            "Make is everywhere but has quirks (tabs, `.PHONY`); `just` is friendlier for plain command "
            "running.",
            "package.json scripts are fine if the project is only JavaScript.",
            "Keep targets thin: they should call scripts or tools, not contain logic.",
            "A `help` target that lists commands makes onboarding easier.",
        ),
        code=(
            (
                "makefile",
                ".PHONY: dev test lint help\n\nhelp:  ## list targets\n"
                "\t@grep -E '^[a-z-]+:.*##' Makefile | sed 's/:.*##/ —/'\n\ndev:  ## run api + worker + web\n"
                '\tdocker compose up -d db redis\n\tnpx concurrently "make api" "make web"\n\n'
                "test:  ## run the test suite\n\tpytest -q\n\nlint:  ## static checks\n\truff check . && mypy .",
            ),
        ),
        tips=(
            "Document required tools in the README.",
            "Make CI call the same targets developers use.",
            "Avoid shell-specific syntax if people use different shells.",
            "Fail loudly when a required env var is missing.",
        ),
    ),
    Topic(
        asks=(
            "docker compose: api can't reach postgres, connection refused",
            "how do I make the app wait for the db to be ready in compose",
            "volumes vs bind mounts for local dev",
        ),
        explain=(
            "Inside compose, services reach each other by service name; `localhost` means the container "
            "itself.",
            "`depends_on` only waits for the container to start, not for Postgres to accept connections, "
            "unless you add a healthcheck condition.",
            "Bind mounts map a host folder (good for source code); named volumes are managed by Docker (good "
            "for database data).",
            "Published ports are for reaching containers from your host, not for container-to-container "
            "traffic.",
            "Compose profiles let you start optional services only when needed.",
        ),
        code=(
            (
                "yaml",
                "services:\n  db:\n    image: postgres:16\n    environment:\n      POSTGRES_PASSWORD: dev\n"
                '    healthcheck:\n      test: ["CMD-SHELL", "pg_isready -U postgres"]\n      interval: 2s\n'
                "      retries: 15\n    volumes:\n      - pgdata:/var/lib/postgresql/data\n  api:\n    build: .\n"
                "    environment:\n      DATABASE_URL: postgres://postgres:dev@db:5432/postgres\n    depends_on:\n"
                "      db:\n        condition: service_healthy\nvolumes:\n  pgdata: {}",
            ),
        ),
        tips=(
            "`docker compose logs -f api` while debugging.",
            "Don't publish database ports in production compose files.",
            "Use `.env` next to the compose file for variables.",
            "`docker compose down -v` wipes volumes — careful.",
        ),
    ),
    Topic(
        asks=(
            "how do people do feature flags without paying for launchdarkly",
            "how do I roll out a feature to 10% of users",
            "when do I delete old feature flags",
        ),
        explain=(
            "A flags table (or a config file) plus a small helper covers most needs for a small team.",
            "Percentage rollouts hash a stable user id into a bucket, so the same user always gets the same "
            "answer.",
            "Evaluate flags on the server where possible so the client can't flip them.",
            "Every flag should have an owner and an expected removal date.",
            "Open-source options like Unleash or GrowthBook add a UI when you outgrow the table.",
        ),
        code=(
            (
                "python",
                "def enabled(flag: str, user_id: int) -> bool:\n    rule = FLAGS.get(flag)\n    if rule is None:\n"
                "        return False\n    if user_id in rule.allow:\n        return True\n"
                '    bucket = int(hashlib.sha256(f"{flag}:{user_id}".encode()).hexdigest(), 16) % 100\n'
                "    return bucket < rule.percent",
            ),
        ),
        tips=(
            "Log flag evaluations for debugging.",
            "Test both sides of a flag.",
            "Kill switches are flags too — keep them.",
            "Review stale flags every sprint.",
        ),
    ),
    Topic(
        asks=(
            "dates are off by one day for some users, timezone stuff I assume",
            "should I store timestamps as UTC?",
            "how do I show 'today' correctly for users in different time zones",
        ),
        explain=(
            "Store instants in UTC (`timestamptz` in Postgres) and convert only when displaying.",
            "Off-by-one-day bugs usually come from parsing a date-only string as midnight UTC and then "
            "showing it in a negative-offset zone.",
            "A calendar date (like a birthday) is not an instant; store it as a plain `date`.",
            "'Today' depends on the user's zone, so compute day boundaries with their IANA zone name, not a "
            "fixed offset.",
            "Daylight saving changes make fixed offsets wrong twice a year.",
        ),
        code=(
            (
                "python",
                "from datetime import datetime\nfrom zoneinfo import ZoneInfo\n\n"
                'tz = ZoneInfo(user.timezone)  # e.g. "America/Toronto"\n'
                "start_local = datetime.now(tz).replace(hour=0, minute=0, second=0, microsecond=0)\n"
                'start_utc = start_local.astimezone(ZoneInfo("UTC"))',
            ),
        ),
        tips=(
            "Save the user's IANA zone in their profile.",
            "Use `Intl.DateTimeFormat` on the client.",
            "Test with a zone like Pacific/Kiritimati and America/St_Johns.",
            "Never do date math with raw epoch seconds for calendar days.",
        ),
    ),
    Topic(
        asks=(
            "how do I get a running total per customer in sql",
            "rank products by sales within each category",
            "window functions vs group by, when to use which",
        ),
        explain=(
            "GROUP BY collapses rows into one per group; window functions keep every row and add a "
            "computed column.",
            "`SUM(...) OVER (PARTITION BY ... ORDER BY ...)` gives a running total within each partition.",
            "`ROW_NUMBER`, `RANK` and `DENSE_RANK` differ only in how they treat ties.",
            "Filter on a window result in an outer query or CTE, because WHERE runs before windows are "
            "computed.",
            "Window functions are often faster than self-joins for the same result.",
        ),
        code=(
            (
                "sql",
                "WITH ranked AS (\n    SELECT category, product, revenue,\n"
                "           RANK() OVER (PARTITION BY category ORDER BY revenue DESC) AS r\n    FROM product_sales\n)\n"
                "SELECT * FROM ranked WHERE r <= 3;\n\nSELECT customer_id, ordered_at, total,\n"
                "       SUM(total) OVER (PARTITION BY customer_id ORDER BY ordered_at) AS running_total\nFROM orders;",
            ),
        ),
        tips=(
            "Name windows with `WINDOW w AS (...)` when reused.",
            "Watch the default frame with ORDER BY (RANGE, not ROWS).",
            "Index the partition and order columns.",
            "Use `FILTER (WHERE ...)` for conditional aggregates.",
        ),
    ),
)


LIFE_TOPICS = (
    Topic(
        asks=(
            "having people over saturday, 6 of us, one vegetarian — what should I cook",
            "ideas for a dinner that impresses but isn't stressful?",
            "what can I make with leftover rice and some sad vegetables",
        ),
        explain=(
            "Pick one dish that can be made ahead and one that's quick at the end, so you're not stuck "
            "in the kitchen.",
            "A big tray bake or a curry scales easily and keeps warm while people arrive.",
            "Make the vegetarian option the main rather than a side, and everyone will happily share it.",
            "Fried rice is the classic answer for leftover rice — day-old rice actually works better.",
            "Buy dessert if you're short on time; nobody minds.",
        ),
        tips=(
            "Prep vegetables the night before.",
            "Write a timeline working back from when you want to eat.",
            "Set the table before guests arrive.",
            "Have one non-alcoholic drink that isn't just water.",
            "Ask about allergies when you invite people.",
        ),
        life=True,
    ),
    Topic(
        asks=(
            "planning 4 days in {other_city}, what would you prioritise",
            "help me plan a weekend trip, I hate rushing",
            "what should I pack for a week somewhere rainy",
        ),
        explain=(
            "Anchor each day around one main thing and leave the rest loose; that avoids the rushed feeling.",
            "Group sights by neighbourhood so you're not crossing the city twice a day.",
            "Book the one or two things that sell out first, then improvise around them.",
            "The first and last day are usually half days once you count travel.",
            "For rain, layers and one good waterproof beat a heavy coat.",
        ),
        tips=(
            "Download offline maps.",
            "Check which museums close on Mondays.",
            "Keep a copy of bookings offline.",
            "Leave an evening unplanned.",
            "Use a transit day pass if you'll ride more than twice a day.",
        ),
        life=True,
    ),
    Topic(
        asks=(
            "can you help me set up a simple monthly budget spreadsheet",
            "how much should I be saving per month, rough rule of thumb",
            "I keep overspending on takeaway, how do I track it without going insane",
        ),
        explain=(
            "Start with three buckets: fixed costs, flexible spending and savings, and only split further "
            "if you need to.",
            "A common rule of thumb is 50/30/20 for needs, wants and savings, but treat it as a starting "
            "point.",
            "Automating the savings transfer on payday removes the willpower part.",
            "For a category like takeaway, a weekly cap is easier to stick to than a monthly one.",
            "Review once a month, not daily; daily tracking burns people out.",
        ),
        code=(
            (
                "text",
                "| Category        | Budget | Actual | Diff |\n|-----------------|-------:|-------:|-----:|\n"
                "| Rent            |   1200 |   1200 |    0 |\n| Groceries       |    350 |    382 |  -32 |\n"
                "| Takeaway        |    120 |    164 |  -44 |\n| Transport       |     90 |     71 |   19 |\n"
                "| Savings (auto)  |    500 |    500 |    0 |\n| =SUM(B2:B6)     |        |        |      |",
            ),
        ),
        tips=(
            "Use your bank's export instead of manual entry.",
            "Keep a small 'fun money' line so it's sustainable.",
            "Build a 3-month emergency fund before investing.",
            "Cancel one subscription you forgot about.",
        ),
        life=True,
    ),
    Topic(
        asks=(
            "can you give me a 3 day a week gym routine, beginner-ish",
            "how do I stay consistent with working out when work gets busy",
            "my lower back hurts after deadlifts, form issue?",
        ),
        explain=(
            "Three full-body sessions a week is plenty for a beginner and easy to fit around work.",
            "Focus on a handful of compound movements and add a little weight or a rep each week.",
            "Consistency comes from making the minimum session small enough that you'll do it on bad days.",
            "Lower-back pain on deadlifts is usually a rounded back or the bar drifting away from the legs.",
            "Sleep and protein matter more than the exact program.",
        ),
        code=(
            (
                "text",
                "Day A: squat 3x8, bench press 3x8, row 3x10, plank 3x30s\n"
                "Day B: deadlift 3x5, overhead press 3x8, lat pulldown 3x10, lunges 2x10/leg\n"
                "Day C: goblet squat 3x10, incline dumbbell press 3x10, cable row 3x12, farmer carry 3x40m",
            ),
        ),
        tips=(
            "Film a set from the side to check form.",
            "Warm up with lighter sets of the first exercise.",
            "Log your lifts in a notes app.",
            "Take a deload week every 6-8 weeks.",
            "See a physio if pain persists.",
        ),
        life=True,
    ),
    Topic(
        asks=(
            "moving apartments in 3 weeks, help me make a checklist",
            "what do people forget when they move",
            "how do I pack a kitchen without breaking everything",
        ),
        explain=(
            "Work backwards from moving day and put each task in a specific week.",
            "Address changes are the most forgotten part: bank, employer, doctor, subscriptions.",
            "Book movers or a van early; weekends at the end of the month go fast.",
            "Pack a first-night box with chargers, toiletries, sheets, a kettle and snacks.",
            "Wrap plates vertically with paper between them; they survive better than stacked flat.",
        ),
        tips=(
            "Photograph the old place for the deposit.",
            "Label boxes by room and content.",
            "Take meter readings on both ends.",
            "Measure doorways for big furniture.",
            "Cancel or move internet early — installs take time.",
        ),
        life=True,
    ),
    Topic(
        asks=(
            "can you help me write an email to my landlord about the broken heating",
            "how do I politely chase a client who hasn't paid in 60 days",
            "need to decline a meeting without sounding rude",
        ),
        explain=(
            "Lead with the specific problem and when it started, then what you need and by when.",
            "Keep the tone factual and friendly; it's easier for the other person to say yes.",
            "Put dates and amounts in the email so there's a written record.",
            "For a late payment, reference the invoice number and attach it again.",
            "Offer an alternative when declining, so it reads as a redirect rather than a no.",
        ),
        code=(
            (
                "text",
                "Subject: Heating not working since Monday — flat 3B\n\nHi Mark,\n\n"
                "The heating in flat 3B stopped working on Monday evening; the boiler shows error F28. "
                "Could you arrange a repair this week? I'm home after 4pm on weekdays, or I can leave a key "
                "with the neighbour.\n\nThanks,\nJo",
            ),
        ),
        tips=(
            "Keep it under 150 words.",
            "Send important ones during working hours.",
            "Follow up after 3 working days.",
            "Save a copy of what you sent.",
        ),
        life=True,
    ),
    Topic(
        asks=(
            "gift ideas for my dad, he has everything",
            "what's a good thank-you gift for a coworker, budget like 30",
            "anniversary idea that isn't dinner",
        ),
        explain=(
            "Experiences often land better than objects for people who have everything.",
            "Think about what they already spend time on and get a nicer version of a small thing they use "
            "daily.",
            "Something handwritten alongside the gift usually matters more than the gift.",
            "For coworkers, consumables (good coffee, snacks, a plant) are safe and don't clutter.",
            "Recreating a first date or a trip memory works well for anniversaries.",
        ),
        tips=(
            "Ask a sibling or friend for a second opinion.",
            "Order early for personalised items.",
            "Keep the receipt.",
            "Wrap it — presentation counts.",
        ),
        life=True,
    ),
    Topic(
        asks=(
            "I want to learn spanish before a trip in 4 months, realistic plan?",
            "duolingo streak is 200 days but I can't hold a conversation lol",
            "best way to practice speaking without a tutor",
        ),
        explain=(
            "Apps are good for vocabulary, but speaking only improves by speaking.",
            "Twenty focused minutes a day beats two hours on Sunday.",
            "A weekly conversation exchange or tutor session gives you a deadline to practise for.",
            "Shadowing — repeating audio right after the speaker — helps pronunciation and rhythm.",
            "Learn the phrases for the situations you'll actually be in first.",
        ),
        tips=(
            "Change your phone language for a week.",
            "Keep a notebook of phrases you needed but didn't know.",
            "Watch shows with target-language subtitles.",
            "Talk to yourself while cooking.",
        ),
        life=True,
    ),
    Topic(
        asks=(
            "my monstera has yellow leaves, what am I doing wrong",
            "which houseplants survive a north-facing flat",
            "how often should I water succulents in winter",
        ),
        explain=(
            "Yellowing lower leaves with damp soil is almost always overwatering.",
            "Water when the top few centimetres of soil are dry, not on a schedule.",
            "Pothos, ZZ plants, snake plants and some ferns tolerate low light well.",
            "Succulents barely need water in winter — every three or four weeks is often enough.",
            "Pots without drainage holes cause most houseplant deaths.",
        ),
        tips=(
            "Stick a finger in the soil before watering.",
            "Rotate plants for even growth.",
            "Repot in spring, not winter.",
            "Wipe dust off big leaves.",
        ),
        life=True,
    ),
    Topic(
        asks=(
            "I keep going to bed at 2am, how do I fix my sleep schedule",
            "is it bad to code right before bed",
            "tips for waking up earlier without feeling awful",
        ),
        explain=(
            "Fix the wake-up time first; bedtime follows within a week or two.",
            "Morning daylight is the strongest signal for your body clock.",
            "Screens before bed matter less than what's on them — stimulating work keeps your brain going.",
            "Move earlier in 15-minute steps rather than all at once.",
            "Caffeine after early afternoon stays in your system longer than people think.",
        ),
        tips=(
            "Keep the bedroom cool and dark.",
            "Write tomorrow's to-do list before bed to offload it.",
            "Avoid long weekend lie-ins.",
            "A short walk outside in the morning helps.",
        ),
        life=True,
    ),
    Topic(
        asks=(
            "can you look over my cover letter structure for a senior role",
            "how do I explain a gap in my CV",
            "what should I ask at the end of an interview",
        ),
        explain=(
            "Open with why this company and role specifically, in two sentences.",
            "Pick two or three achievements with numbers and connect each to what the role needs.",
            "A gap is fine; state what you did briefly and move on without apologising.",
            "Good closing questions are about how success is measured and what the team struggles with.",
            "Keep a cover letter under a page.",
        ),
        tips=(
            "Mirror keywords from the job ad.",
            "Cut any sentence that could apply to any company.",
            "Have someone read it aloud.",
            "Send it as a PDF.",
        ),
        life=True,
    ),
    Topic(
        asks=(
            "planning a birthday thing for my partner, about 12 people, ideas?",
            "how far in advance should I book a restaurant for a group",
            "cheap but fun party ideas",
        ),
        explain=(
            "Decide on the vibe first — quiet dinner, games night, or something active — then the rest "
            "follows.",
            "For 12 people, booking two to three weeks ahead is safe for most places.",
            "A shared group chat with one clear message (when, where, what to bring) saves a lot of "
            "back-and-forth.",
            "Potlucks and picnics are cheap and make people feel involved.",
            "Have a backup plan if it's outdoors.",
        ),
        tips=(
            "Ask one friend to help coordinate.",
            "Confirm the booking two days before.",
            "Plan a simple toast or moment.",
            "Keep the guest list realistic.",
        ),
        life=True,
    ),
    Topic(
        asks=(
            "my bike chain keeps skipping, can I fix it myself",
            "how often should I service my bike if I commute daily",
            "what tools do I need for basic bike maintenance",
        ),
        explain=(
            "A skipping chain is usually a worn chain, a worn cassette, or gears that need indexing.",
            "A chain checker tool tells you in seconds whether the chain is stretched.",
            "Clean and lube the chain every couple of weeks if you ride daily, more in the rain.",
            "Barrel adjusters fix most indexing issues with a quarter turn at a time.",
            "A basic kit is hex keys, tyre levers, a pump, a chain tool and lube.",
        ),
        tips=(
            "Replace the chain before it wears the cassette.",
            "Check tyre pressure weekly.",
            "Learn to fix a puncture at home first.",
            "Get a yearly service at a shop.",
        ),
        life=True,
    ),
    Topic(
        asks=(
            "I want to read more this year, can you suggest a few non-fiction books",
            "how do I actually finish books instead of starting 5",
            "audiobooks count as reading right",
        ),
        explain=(
            "Pick a short book first to build momentum.",
            "Reading at a fixed time, like the commute or before bed, works better than 'when I have time'.",
            "It's fine to abandon a book that isn't working for you.",
            "Audiobooks absolutely count; comprehension is similar for most non-fiction.",
            "Keeping a short note after each book helps you remember what you read.",
        ),
        tips=(
            "Keep the current book visible.",
            "Join or start a small book club.",
            "Use the library app.",
            "Alternate heavy and light books.",
        ),
        life=True,
    ),
    Topic(
        asks=(
            "I have a salary review next month, how do I prepare",
            "how do I ask for a raise without being awkward",
            "got an offer, should I negotiate",
        ),
        explain=(
            "Write down concrete results from the last year, with numbers where you can.",
            "Research market ranges for your role and location so your ask is anchored.",
            "Ask for a specific number and stop talking; silence is fine.",
            "If the answer is no, ask what would need to be true for a yes in six months.",
            "Most offers have room to negotiate, and asking politely rarely costs anything.",
        ),
        tips=(
            "Practise the conversation out loud.",
            "Send a short summary email afterwards.",
            "Consider non-salary items like learning budget or remote days.",
            "Don't negotiate by chat if you can avoid it.",
        ),
        life=True,
    ),
)

LANG_FENCES = {
    "TypeScript": ("ts", "tsx"), "JavaScript": ("js", "ts", "tsx"), "Python": ("python",), "Go": ("go",),
    "Ruby": ("ruby",), "PHP": ("php",), "Elixir": ("elixir",), "Rust": ("rust",),
}  # fmt: skip


# ---------------------------------------------------------------------------------------------------------
# Composing ordinary replies
# ---------------------------------------------------------------------------------------------------------

HEADINGS = ("**Why this happens**", "**What to do**", "**The fix**", "**Background**", "**In short**", "")


def choose_code(ctx: Ctx, topic: Topic, session: int) -> tuple[str, str]:
    lang = ctx.p.get("code_lang", "")
    if lang and session >= int(ctx.p.get("code_lang_from", "0")):
        preferred = [c for c in topic.code if c[0] in LANG_FENCES.get(lang, ())]
        if preferred:
            return ctx.rng.choice(preferred)
    return ctx.rng.choice(topic.code)


def bullets(rng: random.Random, items: list[str]) -> str:
    style = rng.choice(("- ", "* ", "1"))
    if style == "1":
        return "\n".join(f"{i}. {t}" for i, t in enumerate(items, start=1))
    return "\n".join(f"{style}{t}" for t in items)


CONTEXT_DEV = (
    "For {proj} specifically, I'd start with the smallest version of this and only add the rest once you "
    "actually need it.",
    "Given the size of {proj}, you don't need anything heavier than this; the fancier setups pay off at a scale "
    "you're not at yet.",
    "If other people on the team touch this code, leave a short comment pointing at why it's done this way, "
    "because the reason isn't obvious from the code alone.",
    "This is one of those changes that's easy to get 90% right, and the last 10% shows up only under load or on "
    "someone else's machine, so give it a proper test.",
    "It's worth checking how the rest of the codebase already handles this, so you don't end up with two "
    "different conventions side by side.",
    "If you're pressed for time, the first part is the important bit; the rest can wait for a quieter week.",
    "Once it works locally, try it in staging with realistic data before it goes anywhere near production.",
    "There's no single right answer here; what matters most is picking one approach and applying it consistently.",
)  # fmt: skip
VERIFY_DEV = (
    "Reproduce the original problem first, so you know what 'fixed' looks like before you change anything.",
    "Run the same steps again afterwards and compare the output line by line.",
    "If there's a test suite, run the slow tests too, not just the ones next to the change.",
    "Check the logs for a few minutes after deploying; new warnings are often the first sign something is off.",
    "Try it once with a clean cache and a fresh terminal session, so nothing from before is hiding the result.",
    "Ask someone else to try it on their machine; differences in setup show up immediately.",
    "Keep the before and after numbers somewhere — they're useful when someone asks why this changed.",
)  # fmt: skip
CONTEXT_LIFE = (
    "The main thing is to make the first step so small that it's easy to start today.",
    "You know your own energy levels best, so shuffle things around to match the days you usually have more time.",
    "Everyone's situation is a bit different, so take what's useful here and ignore the rest.",
    "It can help to tell someone else the plan — a little accountability goes a long way.",
)  # fmt: skip


def compose(ctx: Ctx, topic: Topic, session: int) -> str:
    """An ordinary answer: opener, explanation split around a code block, tips, a caveat, a closer."""
    rng = ctx.rng
    brief = ctx.brief[session]
    picked = sorted(rng.sample(range(len(topic.explain)), 1 if brief else rng.randint(3, len(topic.explain))))
    explain = [topic.explain[i] for i in picked]
    parts = [rng.choice(OPENERS_LIFE if topic.life else OPENERS_DEV)]
    cut = rng.randint(1, max(1, len(explain) - 1))
    heading = "" if topic.life else rng.choice(HEADINGS)
    first = " ".join(explain[:cut])
    parts.append(f"{heading}\n\n{first}" if heading and not brief else first)
    if topic.code and (not brief or rng.random() < 0.5):
        fence, code = choose_code(ctx, topic, session)
        parts.append(f"```{fence}\n{code}\n```")
    if explain[cut:]:
        parts.append(" ".join(explain[cut:]))
    if not brief:
        if rng.random() < 0.6:
            parts.append(ctx.f(rng.choice(CONTEXT_LIFE if topic.life else CONTEXT_DEV)))
        tips = rng.sample(topic.tips, rng.randint(3, len(topic.tips)))
        parts.append(rng.choice(LEADINS_LIFE if topic.life else LEADINS) + "\n\n" + bullets(rng, tips))
        caveats = CAVEATS_LIFE if topic.life else CAVEATS_DEV
        parts.append(" ".join(rng.sample(caveats, rng.choice((1, 1, 2)))))
        if not topic.life and rng.random() < 0.35:
            parts.append("**Checking it worked**\n\n" + " ".join(rng.sample(VERIFY_DEV, rng.randint(2, 3))))
    if rng.random() < 0.6:
        parts.append(ctx.f(rng.choice(CLOSERS_LIFE if topic.life else CLOSERS)))
    return "\n\n".join(parts)


def wrap(ctx: Ctx, core: list[str], *, life: bool = False, closer: bool = True) -> str:
    """A scripted reply: the paragraphs that matter, padded with an opener, a caveat and a closer."""
    rng = ctx.rng
    parts = [rng.choice(OPENERS_LIFE if life else OPENERS_DEV), *core]
    if rng.random() < 0.8:
        parts.append(rng.choice(CAVEATS_LIFE if life else CAVEATS_DEV))
    if closer and rng.random() < 0.6:
        parts.append(ctx.f(rng.choice(CLOSERS_LIFE if life else CLOSERS)))
    return "\n\n".join(parts)


def pick_topic(ctx: Ctx, life: bool | None = None) -> Topic:
    rng = ctx.rng
    if life is None:
        life = rng.random() < 0.25
    pool = [t for t in (LIFE_TOPICS if life else DEV_TOPICS) if t not in ctx.banned]
    return rng.choice(pool)


def join_lead(rng: random.Random, lead: str, ask: str) -> str:
    """A personal remark and a request in one message, in one of the ways people run them together."""
    form = rng.randrange(5)
    if form == 0:
        return f"{lead}. anyway — {ask}"
    if form == 1 and "(" not in lead:
        return f"{ask} ({lead})"
    if form == 2:
        return f"{lead}\n\n{ask}"
    if form == 3:
        return f"{lead}. ok so, {ask}"
    return f"{ask} — oh and {lead}"


def exchange_turns(ctx: Ctx, session: int, lead: str = "", *, life: bool | None = None) -> list[Turn]:
    """A help request (optionally carrying a personal remark) and the assistant's ordinary answer."""
    topic = pick_topic(ctx, life)
    ask = ctx.f(ctx.pick(topic.asks))
    user = join_lead(ctx.rng, ctx.f(lead), ask) if lead else ask
    return [("user", user), ("assistant", compose(ctx, topic, session))]


def exchange(ctx: Ctx, session: int, lead: str = "", *, life: bool | None = None) -> list[str]:
    return ctx.put(session, exchange_turns(ctx, session, lead, life=life))


def remark(ctx: Ctx, session: int, lead: str, reply: str) -> list[str]:
    """A standalone user remark and a short assistant answer to it."""
    return ctx.put(session, [("user", ctx.f(lead)), ("assistant", ctx.f(reply))])


# ---------------------------------------------------------------------------------------------------------
# Very long replies: log analyses, whole files, runbooks (20-60 KB)
# ---------------------------------------------------------------------------------------------------------

SERVICES = (
    "api",
    "worker",
    "scheduler",
    "gateway",
    "webhooks",
    "auth",
    "exporter",
    "ingest",
    "billing",
    "search",
)
RESOURCES = ("orders", "invoices", "customers", "shipments", "sessions", "reports", "payouts", "products")
TABLES = ("orders", "events", "order_items", "audit_log", "payments", "sessions", "jobs", "customers")
LOG_LINES = (
    "GET /v1/{res}/{id} 200 {ms}ms", "POST /v1/{res} 201 {ms}ms", "GET /v1/{res}?page={n} 200 {ms}ms",
    "POST /v1/{res}/{id}/sync 502 upstream timed out after {s}s", "job {job} started (attempt {a}/5)",
    "job {job} finished in {ms}ms", "job {job} failed: {err}", "slow query ({ms}ms): SELECT ... FROM {table} WHERE ...",
    "cache miss for {res}:{id}", "retrying request to {svc2} in {ms}ms", "healthcheck ok ({ms}ms)",
    "connection reset by peer ({svc2})", "acquired lock {table}:{id} after {ms}ms", "GC pause {ms}ms",
    "worker heartbeat, queue depth {n}", "PATCH /v1/{res}/{id} 409 version conflict",
    "GET /healthz 200 {ms}ms", "published event {res}.updated id={id}", "rate limit hit for key ip:{ip}",
    "pool stats: in_use={a} idle={n} waiting={w}",
)  # fmt: skip
ERRORS = (
    "timeout", "ECONNRESET", "deadlock detected", "too many connections", "certificate verify failed",
    "context deadline exceeded", "503 from upstream", "broken pipe", "read tcp: i/o timeout",
)  # fmt: skip
PHASES = (
    "Quiet baseline", "First warnings", "Errors start", "Retry storm", "Queue backs up", "Partial recovery",
    "Second wave", "Restart and recovery", "Background jobs", "Steady state", "The noisy part",
    "Cache side", "Database side", "Edge and load balancer", "Cron window", "Aftershocks",
)  # fmt: skip
COMMENTARY = (
    "Latency here is normal — p50 around {ms}ms — so nothing is wrong yet.",
    "Notice the `{svc}` lines start clustering; that's usually the first sign of back-pressure.",
    "These retries are a symptom, not a cause: each one adds load to a dependency that is already struggling.",
    "The queue depth climbing from {n} to {n2} over a few minutes means consumers can't keep up.",
    "Healthchecks still pass in this stretch, which explains why nothing alerted.",
    "`{err}` on its own isn't conclusive; it shows up whenever the other side is slow for any reason.",
    "There's a gap of about {s} seconds with no lines from `{svc}` — either it was blocked or restarting.",
    "The 409s are harmless optimistic-locking conflicts; they happen every day at this volume.",
    "Request volume is flat here, so this isn't a traffic spike.",
    "The GC pauses are short enough ({ms}ms) to rule out memory pressure as the trigger.",
    "You can see `{svc}` recover briefly and then degrade again, which points at something periodic.",
    "This block is mostly noise from the cache warming up after the restart.",
    "The `{svc2}` errors line up with the `{svc}` slowdowns to within a second, so they're related.",
    "Nothing in this section changes the picture; I'm including it so the timeline is complete.",
    "The rate-limit lines are a single scraper at ip {ip}; annoying, but not the problem.",
    "Pool stats show `waiting` creeping above zero for the first time here.",
)  # fmt: skip
RED_HERRINGS = (
    "At first glance this looks like a DNS problem, but resolution times stay under 5ms throughout.",
    "It's tempting to blame the deploy at {t}, but the first errors start before it.",
    "Memory looks fine: no OOM kills and GC pauses stay small, so it isn't a leak.",
    "The load balancer isn't at fault either; its own healthchecks never flap.",
    "The scraper hitting the rate limit is a coincidence — the errors continue after it stops.",
)  # fmt: skip
NEXT_STEPS = (
    "Add an alert on pool `waiting > 0` for more than a minute.", "Put a timeout on every outbound call.",
    "Make retries use exponential backoff with jitter.", "Add a dashboard panel for queue depth.",
    "Write a short incident note while it's fresh.", "Load-test the fix in staging before Friday.",
    "Cap concurrency on the worker that caused the spike.", "Add request ids to the worker logs too.",
)  # fmt: skip


def words(text: str) -> int:
    return len(text.split())


def _ts(base: int, rng: random.Random) -> str:
    sec = base + rng.randint(0, 59)
    return f"{(sec // 3600) % 24:02d}:{(sec // 60) % 60:02d}:{sec % 60:02d}.{rng.randint(0, 999):03d}"


def _log_values(rng: random.Random) -> dict[str, str]:
    return {
        "res": rng.choice(RESOURCES), "id": str(rng.randint(1000, 99999)), "ms": str(rng.randint(3, 4800)),
        "n": str(rng.randint(0, 400)), "n2": str(rng.randint(400, 9000)), "s": str(rng.randint(5, 60)),
        "job": f"{rng.choice(('sync', 'export', 'digest', 'cleanup', 'reindex'))}-{rng.randint(100, 999)}",
        "a": str(rng.randint(1, 5)), "err": rng.choice(ERRORS), "table": rng.choice(TABLES),
        "svc": rng.choice(SERVICES), "svc2": rng.choice(SERVICES), "w": str(rng.randint(0, 40)),
        "ip": f"203.0.113.{rng.randint(2, 250)}", "t": f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}",
    }  # fmt: skip


def _log_section(rng: random.Random, i: int, clock: int) -> str:
    lines = []
    for k in range(rng.randint(10, 18)):
        v = _log_values(rng)
        level = rng.choice(("INFO", "INFO", "INFO", "WARN", "ERROR"))
        lines.append(f"{_ts(clock + k * 7, rng)} {level:<5} [{v['svc']}] {fill(rng.choice(LOG_LINES), v)}")
    comments = " ".join(fill(c, _log_values(rng)) for c in rng.sample(COMMENTARY, 3))
    obs = [fill(c, _log_values(rng)) for c in rng.sample(COMMENTARY, 2)]
    end = clock + 150
    title = f"### {i}. {rng.choice(PHASES)} ({clock // 3600 % 24:02d}:{clock // 60 % 60:02d}–"
    title += f"{end // 3600 % 24:02d}:{end // 60 % 60:02d} UTC)"
    block = "\n".join(lines)
    return f"{title}\n\n{comments}\n\n```\n{block}\n```\n\nObservations:\n\n{bullets(rng, obs)}"


def long_log_analysis(rng: random.Random, deep: str = "") -> str:
    """A section-by-section walk through a pasted log; `deep` (the conclusion) lands after 2,000+ words."""
    target = rng.randint(20_000, 60_000) if not deep else rng.randint(26_000, 60_000)
    parts = [
        "I went through the whole thing. It's long, so I'll walk through it in order, quote the lines that "
        "matter in each stretch, and only draw the conclusion once the evidence is in. Times are UTC.",
        fill(rng.choice(RED_HERRINGS), _log_values(rng)),
    ]
    clock = rng.randint(0, 20) * 3600 + rng.randint(0, 59) * 60
    insert_at = rng.randint(2_200, 3_200)
    i = 1
    while deep or sum(len(p) for p in parts) < target:
        parts.append(_log_section(rng, i, clock))
        i += 1
        clock += rng.randint(120, 600)
        if deep and words("\n\n".join(parts)) >= insert_at:
            parts.append(deep)
            deep = ""
    parts.append("### What I'd do next\n\n" + bullets(rng, rng.sample(NEXT_STEPS, 4)))
    return "\n\n".join(parts)


VERBS = (
    "load", "sync", "build", "parse", "render", "fetch", "store", "validate", "export", "schedule", "notify",
    "resolve", "merge", "archive", "refresh", "compute", "reconcile", "enqueue", "normalise", "prune",
)  # fmt: skip
NOUNS = (
    "invoice", "order", "customer", "shipment", "report", "session", "payout", "coupon", "address",
    "subscription", "refund", "ledger_entry", "audit_log", "product", "warehouse", "driver", "route", "tenant",
)  # fmt: skip
PY_BODY = (
    "    if dry_run:\n        return {noun}",
    "    {noun}.updated_at = utcnow()",
    "    session.add({noun})\n    session.flush()",
    "    events.publish(\"{noun}.{verb}\", {{\"id\": {noun}.id}})",
    "    total = sum(line.amount for line in {noun}.lines)\n    if total < 0:\n        raise ValueError(\"negative total\")",
    "    cache.delete(f\"{noun}:{{{noun}.id}}\")",
    "    if {noun}.status not in ALLOWED_STATUSES:\n        raise InvalidState({noun}.status)",
    "    with session.begin_nested():\n        {noun}.version += 1",
    "    for attempt in range(3):\n        try:\n            client.push({noun}.to_dict())\n            break\n"
    "        except TransientError:\n            time.sleep(2**attempt)",
    "    metrics.increment(\"{noun}.{verb}.count\")",
    "    audit.record(actor=actor, action=\"{verb}\", target={noun}.id)",
    "    rows = session.scalars(select({Model}).where({Model}.tenant_id == {noun}.tenant_id)).all()",
)  # fmt: skip
TS_BODY = (
    "  if (opts.dryRun) return {noun};",
    "  {noun}.updatedAt = new Date();",
    "  await db.{noun}.update({{ where: {{ id }}, data: {noun} }});",
    "  events.emit('{noun}.{verb}', {{ id }});",
    "  const total = {noun}.lines.reduce((s, l) => s + l.amount, 0);\n  if (total < 0) throw new Error('negative total');",
    "  await cache.del(`{noun}:${{id}}`);",
    "  if (!ALLOWED.has({noun}.status)) throw new InvalidState({noun}.status);",
    "  for (let attempt = 0; attempt < 3; attempt++) {{\n    try {{\n      await client.push({noun});\n      break;\n"
    "    }} catch (e) {{\n      await sleep(2 ** attempt * 1000);\n    }}\n  }}",
    "  metrics.increment('{noun}.{verb}.count');",
    "  await audit.record({{ actor, action: '{verb}', target: id }});",
)  # fmt: skip


def _camel(snake: str) -> str:
    head, *rest = snake.split("_")
    return head + "".join(w.title() for w in rest)


def _function(rng: random.Random, ts: bool) -> str:
    verb, noun = rng.choice(VERBS), rng.choice(NOUNS)
    model = "".join(w.title() for w in noun.split("_"))
    v = {"verb": verb, "noun": _camel(noun) if ts else noun, "Model": model}
    body = [
        fill(b, v).replace("{{", "{").replace("}}", "}") for b in rng.sample(TS_BODY if ts else PY_BODY, 4)
    ]
    doc = f"{verb.title()} a {noun.replace('_', ' ')} and keep its dependants consistent."
    if ts:
        name = _camel(f"{verb}_{noun}")
        head = f"/** {doc} */\nexport async function {name}(id: string, opts: {{ dryRun?: boolean }} = {{}}): Promise<{model}> {{"
        load = f"  const {v['noun']} = await db.{v['noun']}.findUniqueOrThrow({{ where: {{ id }} }});"
        return "\n".join([head, load, *body, f"  return {v['noun']};", "}"])
    head = f"def {verb}_{noun}(session: Session, {noun}_id: int, *, dry_run: bool = False) -> {model}:"
    load = f'    {noun} = session.get({model}, {noun}_id)\n    if {noun} is None:\n        raise NotFound("{noun}", {noun}_id)'
    return "\n".join([head, f'    """{doc}"""', load, *body, f"    return {noun}"])


def long_file_listing(rng: random.Random, fence: str, module: str, deep: str = "") -> str:
    """A whole source file written out; `deep` (a function holding the asked-about value) lands past 2,000 words."""
    ts = fence == "ts"
    target = rng.randint(20_000, 60_000) if not deep else rng.randint(26_000, 60_000)
    header = (
        "import { db } from './db';\nimport { events, metrics, audit, cache, client } from './infra';\n"
        if ts
        else "from __future__ import annotations\n\nimport logging\nimport time\n\n"
        "from sqlalchemy import select\nfrom sqlalchemy.orm import Session\n\n"
        "from .infra import audit, cache, client, events, metrics\nfrom .models import *  # noqa: F403\n\n"
        "logger = logging.getLogger(__name__)\n"
    )
    funcs: list[str] = []
    insert_at = rng.randint(2_200, 3_200)
    while deep or sum(len(f) for f in funcs) < target:
        funcs.append(_function(rng, ts))
        if deep and words("\n\n".join(funcs)) >= insert_at:
            funcs.append(deep)
            deep = ""
    sep = "\n\n" if ts else "\n\n\n"
    intro = (
        f"Here's the complete `{module}` with everything we discussed folded in. It's long, but it's the whole "
        "file, so you can paste it over the old one in one go and diff it."
    )
    outro = (
        "A few notes: I kept the public function names the same so nothing that imports this breaks; the "
        "retry loops all use the same backoff; and every mutation goes through the audit call. Run the test "
        "suite after pasting it — anything that fails is probably a place where the old behaviour differed."
    )
    return f"{intro}\n\n```{fence}\n{header}\n{sep.join(funcs)}\n```\n\n{outro}"


RUNBOOK_STEPS = (
    ("Freeze deploys", "Announce the freeze in the team channel and disable auto-deploy on main.",
     "gh workflow disable deploy.yml", "The deploy workflow shows as disabled."),
    ("Snapshot the database", "Take a manual snapshot so there's a clean restore point.",
     "aws rds create-db-snapshot --db-instance-identifier prod-db --db-snapshot-identifier pre-cutover-$(date +%F)",
     "The snapshot status is `available`."),
    ("Check replication lag", "Make sure the new instance is caught up before touching traffic.",
     "psql \"$NEW_DB\" -c \"select now() - pg_last_xact_replay_timestamp() as lag;\"", "Lag is under 5 seconds."),
    ("Scale down workers", "Stop background workers so nothing writes during the switch.",
     "kubectl scale deploy/worker --replicas=0", "`kubectl get pods` shows no worker pods."),
    ("Drain the queue", "Let in-flight jobs finish rather than killing them.",
     "redis-cli -u \"$REDIS_URL\" llen queue:default", "The queue length reaches 0."),
    ("Flip the connection string", "Point the app at the new database through the secret, not a code change.",
     "kubectl create secret generic db-url --from-literal=DATABASE_URL=\"$NEW_DB\" --dry-run=client -o yaml | kubectl apply -f -",
     "The secret's resourceVersion changed."),
    ("Rolling restart", "Restart the API so every pod picks up the new secret.",
     "kubectl rollout restart deploy/api && kubectl rollout status deploy/api", "Rollout completes without errors."),
    ("Smoke test", "Run the smoke suite against production.", "make smoke ENV=prod", "All smoke checks pass."),
    ("Scale workers back up", "Bring background processing back.", "kubectl scale deploy/worker --replicas=4",
     "Workers are Ready and the queue is being consumed."),
    ("Watch dashboards", "Keep the error-rate and latency panels open for at least 30 minutes.",
     "open https://grafana.internal/d/api-overview", "p95 latency and error rate are back to baseline."),
    ("Verify row counts", "Compare counts on the biggest tables between old and new.",
     "psql \"$NEW_DB\" -c \"select count(*) from orders;\"", "Counts match within the expected delta."),
    ("Rotate credentials", "Rotate the old database password so nothing can still write to it by accident.",
     "aws secretsmanager rotate-secret --secret-id prod/old-db", "Old credentials are rejected."),
    ("Update DNS", "Move the internal CNAME to the new endpoint.",
     "terraform apply -target=aws_route53_record.db_internal", "`dig` returns the new endpoint."),
    ("Re-enable deploys", "Lift the freeze once things are stable.", "gh workflow enable deploy.yml",
     "A trivial deploy goes through."),
)  # fmt: skip
RUNBOOK_NOTES = (
    "If this step takes noticeably longer than in the rehearsal, stop and check before moving on.",
    "Post a one-line update in the incident channel after this step so everyone knows where you are.",
    "This is safe to repeat if you're unsure whether it ran.",
    "Whoever is driving types; the second person reads the check aloud.",
    "Don't skip the check even if the command printed no errors.",
    "Keep the terminal output; it's useful for the write-up afterwards.",
)  # fmt: skip


def long_runbook(rng: random.Random, task: str, deep: str = "") -> str:
    """A step-by-step cutover runbook; `deep` (one step's specific detail) lands past 2,000 words."""
    target = rng.randint(20_000, 60_000) if not deep else rng.randint(26_000, 60_000)
    parts = [f"Here's the full runbook for the {task}. Every step has a command and a check; don't move on "
             "until the check passes. Two people on the call, one driving, one reading."]  # fmt: skip
    insert_at = rng.randint(2_200, 3_200)
    i = 1
    while deep or sum(len(p) for p in parts) < target:
        title, why, cmd, check = rng.choice(RUNBOOK_STEPS)
        note = " ".join(rng.sample(RUNBOOK_NOTES, 2))
        parts.append(f"#### Step {i}: {title}\n\n{why} {note}\n\n```bash\n{cmd}\n```\n\n**Check:** {check}")
        i += 1
        if deep and words("\n\n".join(parts)) >= insert_at:
            parts.append(f"#### Step {i}: Decide whether to roll back\n\n{deep}")
            i += 1
            deep = ""
    parts.append(
        "That's it. Afterwards, write down anything that surprised you and fold it back into this doc."
    )
    return "\n\n".join(parts)


LONG_ASKS_LOG = (
    "ok here's the full log dump from last night, sorry it's huge. can you go through it?",
    "pasting the whole log from the incident window, can you tell me what actually happened",
    "this is everything from journalctl around the time it broke, can you read through it",
)  # fmt: skip
LONG_ASKS_FILE = (
    "can you write out the whole {module} file with all the changes we talked about? I want to paste it in one go",
    "just give me the full {module} please, I'm tired of patching it piece by piece",
    "could you output the entire {module} with the fixes applied",
)  # fmt: skip
LONG_ASKS_RUNBOOK = (
    "can you write me a full step-by-step runbook for the {task}? like, every command",
    "I need a proper runbook for the {task}, we're doing it this weekend",
)  # fmt: skip
RUNBOOK_TASKS = (
    "database cutover", "Postgres major upgrade", "move to the new cluster", "region migration",
    "Redis migration", "queue backend switch",
)  # fmt: skip


def long_turns(ctx: Ctx) -> list[Turn]:
    """A filler exchange whose answer is very long (no question points into it)."""
    rng = ctx.rng
    kind = rng.randrange(3)
    if kind == 0:
        return [("user", rng.choice(LONG_ASKS_LOG)), ("assistant", long_log_analysis(rng))]
    if kind == 1:
        fence = "ts" if ctx.stack.fence == "ts" else "python"
        module = (
            rng.choice(("services.py", "billing.py", "sync.py", "jobs.py"))
            if fence == "python"
            else "service.ts"
        )
        ask = fill(rng.choice(LONG_ASKS_FILE), {"module": module})
        return [("user", ask), ("assistant", long_file_listing(rng, fence, module))]
    task = rng.choice(RUNBOOK_TASKS)
    return [
        ("user", fill(rng.choice(LONG_ASKS_RUNBOOK), {"task": task})),
        ("assistant", long_runbook(rng, task)),
    ]


# ---------------------------------------------------------------------------------------------------------
# Facts and the questions about them. Each kind schedules the turns that state a fact (and turns that use
# the same words about something else), then asks about it in wording drawn from its own pool.
# ---------------------------------------------------------------------------------------------------------


def two(ctx: Ctx) -> tuple[int, int]:
    """Two different sessions, in order."""
    a = ctx.rng.randint(0, ctx.n - 3)
    return a, ctx.rng.randint(a + 1, ctx.n - 1)


def three(ctx: Ctx) -> tuple[int, int, int]:
    a = ctx.rng.randint(0, ctx.n - 4)
    b = ctx.rng.randint(a + 1, ctx.n - 2)
    return a, b, ctx.rng.randint(b + 1, ctx.n - 1)


def anywhere(ctx: Ctx) -> int:
    return ctx.rng.randint(0, ctx.n - 1)


def intro(ctx: Ctx, name: str, lead: str, *, last: int | None = None) -> tuple[str, int]:
    """A fact several kinds share (the pet, the side project): said once, in some session up to `last`."""
    if name in ctx.keys:
        return ctx.keys[name], int(ctx.keys[name + "@"])
    s = ctx.rng.randint(0, ctx.n - 3 if last is None else last)
    key = exchange(ctx, s, lead)[0]
    ctx.keys[name], ctx.keys[name + "@"] = key, str(s)
    return key, s


# --- single-hop ------------------------------------------------------------------------------------------


def s_city(ctx: Ctx) -> None:
    lead = ctx.pick((
        "sorry, slow today — the tram strike here in {city} ate my whole morning",
        "it's been raining nonstop in {city} all week so I'm stuck inside coding, which is fine I guess",
        "just got back from the shops, {city} on a saturday is chaos",
        "power cut in half of {city} this morning, finally back online",
    ))  # fmt: skip
    key = exchange(ctx, anywhere(ctx), lead)[0]
    exchange(ctx, anywhere(ctx), "my parents still live in {other_city}, visiting them next month")
    if ctx.rng.random() < 0.5:
        exchange(ctx, anywhere(ctx), "there's a conference in {other_city2} in the autumn I might go to")
    q = ctx.pick(
        ("Which city is the user based in?", "Where does the user live?", "What town is home for the user?")
    )
    ctx.ask("single-hop", q, ctx.p["city"], [key])


def s_job(ctx: Ctx) -> None:
    key = exchange(ctx, anywhere(ctx), ctx.pick(("for context, {job_line}", "btw {job_line}")))[0]
    exchange(
        ctx, anywhere(ctx), "my partner {partner} is a {partner_job}, so they think all of this is witchcraft"
    )
    q = ctx.pick(("What does the user do for a living?", "What is the user's occupation?",
                  "What kind of work pays the user's bills?"))  # fmt: skip
    ctx.ask("single-hop", q, ctx.p["job"], [key])


PET_LINES = (
    "sorry, had to feed {pet} — my {breed} gets dramatic at 6pm sharp",
    "{pet} (my {breed}) is sitting on my notes again, one sec",
    "brb in a bit, {pet} needs attention — {breed}s do not do patience",
)  # fmt: skip


def pet_intro(ctx: Ctx) -> tuple[str, int]:
    return intro(ctx, "pet", ctx.pick(PET_LINES), last=ctx.n - 3)


def s_pet(ctx: Ctx) -> None:
    key, _ = pet_intro(ctx)
    exchange(
        ctx,
        anywhere(ctx),
        "my neighbour's {breed2} {pet2} got out again and I spent 20 min chasing it down the street",
    )
    if ctx.rng.random() < 0.5:
        q, a = (
            ctx.pick(
                (
                    "What is the name of the user's {species}?",
                    "What does the user call their {species}?",
                    "What's the name of the user's {breed}?",
                )
            ),
            "{pet}",
        )
    else:
        q, a = (
            ctx.pick(
                ("What kind of animal does the user keep at home?", "What sort of pet lives with the user?")
            ),
            "a {breed} named {pet}",
        )
    ctx.ask("single-hop", ctx.f(q), ctx.f(a), [key])


def s_machine(ctx: Ctx) -> None:
    lead = ctx.pick(("I'm on {machine} if that matters for the install steps", "fwiw my setup is {machine}"))
    key = exchange(ctx, anywhere(ctx), lead)[0]
    exchange(ctx, anywhere(ctx), "{col} is on {machine2} and the setup script breaks for them every time")
    q = ctx.pick(("What computer and operating system does the user work on?",
                  "Which laptop or desktop, and which OS, does the user develop with?"))  # fmt: skip
    ctx.ask("single-hop", q, ctx.p["machine"], [key])


def s_editor(ctx: Ctx) -> None:
    lead = ctx.pick(("I live in {editor} all day so plugin suggestions welcome", "(I'm using {editor} btw)"))
    key = exchange(ctx, anywhere(ctx), lead)[0]
    exchange(ctx, anywhere(ctx), "{col} keeps trying to convert me to {editor2}, not happening")
    q = ctx.pick(
        (
            "Which IDE or text editor is the user's daily driver?",
            "What tool does the user write code in?",
            "What editor does the user live in all day?",
        )
    )
    ctx.ask("single-hop", q, ctx.p["editor"], [key])


def s_tz(ctx: Ctx) -> None:
    lead = ctx.pick(("fyi I'm on {tz}, so if I go quiet in the evening it's dinner",
                     "it's nearly midnight here ({tz}) so forgive the typos"))  # fmt: skip
    key = exchange(ctx, anywhere(ctx), lead)[0]
    exchange(ctx, anywhere(ctx), "our client is on {tz2} so every call lands at a weird hour for somebody")
    q = ctx.pick(("Which time zone does the user keep?", "What time zone is the user in?"))
    ctx.ask("single-hop", q, ctx.p["tz"], [key])


def s_budget(ctx: Ctx) -> None:
    key = exchange(
        ctx, anywhere(ctx), "hard cap of {budget} a month for hosting {side}, it's just a hobby thing"
    )[0]
    exchange(
        ctx, anywhere(ctx), "the redesign client has {big_budget} to spend which is a whole different story"
    )
    q = ctx.pick(("What's the most the user will pay each month to keep their personal app online?",
                  "How much monthly spend has the user allowed for running their weekend app?"))  # fmt: skip
    ctx.ask("single-hop", q, ctx.p["budget"] + " a month", [key])


def s_team(ctx: Ctx) -> None:
    key = exchange(
        ctx, anywhere(ctx), "we're {team} engineers total, plus a designer we share with marketing"
    )[0]
    exchange(
        ctx, anywhere(ctx), "the data team next door is like {team2} people and they still have no on-call"
    )
    q = ctx.pick(
        (
            "How many developers work in the user's group?",
            "What's the headcount of programmers on the user's team?",
            "How many engineers are on the user's team in total?",
        )
    )
    ctx.ask("single-hop", q, ctx.p["team"], [key])


def side_intro(ctx: Ctx) -> tuple[str, int]:
    return intro(ctx, "side", "my weekend project is {side} — {side_desc}, nothing fancy", last=ctx.n - 3)


def s_side(ctx: Ctx) -> None:
    key, _ = side_intro(ctx)
    q = ctx.pick(
        (
            "What does {side}, the user's hobby app, do?",
            "What is the purpose of the user's personal project {side}?",
            "What is the user's weekend project {side}?",
        )
    )
    ctx.ask("single-hop", ctx.f(q), ctx.p["side_desc"], [key])


HOBBIES = (
    ("legs are dead, long run this morning — the half marathon is in {hobby_month} and I'm behind on training",
     "What race is the user preparing for?", "a half marathon"),
    ("spent the whole weekend at the climbing gym again, bouldering is eating all my free time",
     "Which sport has been taking up the user's weekends?", "bouldering"),
    ("cello lesson tonight and I have not practised once this week, oops",
     "Which instrument is the user learning?", "the cello"),
    ("my Vespa restoration is stalled until the carburettor kit arrives",
     "What vehicle is the user fixing up?", "a Vespa scooter"),
    ("choir rehearsal tonight, we're doing the Fauré Requiem in spring",
     "What piece is the user's singing group working towards?", "Fauré's Requiem"),
    ("day 34 of my 100-day drawing challenge, my hands are not improving as fast as I hoped",
     "What creative challenge is the user in the middle of?", "a 100-day drawing challenge"),
    ("chess club tonight, I've been stuck at 1400 on lichess for months",
     "At roughly what online chess rating has the user plateaued?", "about 1400"),
)  # fmt: skip


def s_hobby(ctx: Ctx) -> None:
    lead, q, a = ctx.rng.choice(HOBBIES)
    key = exchange(ctx, anywhere(ctx), lead)[0]
    ctx.ask("single-hop", q, a, [key])


def s_ci(ctx: Ctx) -> None:
    key = exchange(ctx, anywhere(ctx), "our pipelines are all {ci}, for better or worse")[0]
    exchange(ctx, anywhere(ctx), "{col}'s old company used {ci2} and they won't stop comparing")
    q = ctx.pick(("What continuous integration system does the user's team rely on?",
                  "What are the user's pipelines running on?",
                  "Where do the user's automated builds and checks run?"))  # fmt: skip
    ctx.ask("single-hop", q, ctx.p["ci"], [key])


def s_partner(ctx: Ctx) -> None:
    key = exchange(ctx, anywhere(ctx), "{partner} (my partner) is making dinner so I've got 20 min")[0]
    exchange(ctx, anywhere(ctx), "{col2} from work is coming over for drinks later, should be fun")
    q = ctx.pick(
        (
            "Who is the user's significant other?",
            "What is the name of the person the user shares a home with?",
        )
    )
    ctx.ask("single-hop", q, ctx.p["partner"], [key])


# --- update: a value that changed; the question asks for the current one ---------------------------------

PG_NOTES = {
    "14": "that release brought multirange types and much better behaviour with lots of connections",
    "15": "that release has `MERGE`, and new databases no longer let every user create objects in the public schema",
    "16": "that release adds logical replication from standbys and the `pg_stat_io` view, handy for exactly this",
    "17": "that release has incremental backups and a faster vacuum, both of which help with big tables",
    "8.4": "that's the LTS line, so long support, though some old auth plugins are off by default",
}  # fmt: skip


def u_staging_db(ctx: Ctx) -> None:
    a, b = two(ctx)
    eng, new, prod = ctx.p["db_eng"], ctx.p["db_new"], ctx.p["db_prod"]
    exchange(ctx, a, "staging db is {db_eng} {db_old} btw, in case that changes the answer")
    correction = ctx.pick(("actually no, I just checked — the staging db is {db_eng} {db_new}, not {db_old}. sorry!",
                           "correction: staging is on {db_eng} {db_new}, not {db_old}, I was looking at an old doc"))  # fmt: skip
    # The reply confirms without repeating the version, so the answer is stated in one turn only.
    reply = wrap(ctx, [f"Thanks for checking, good to know. That's useful: {PG_NOTES[new]}.",
                       "Everything else I suggested still holds. I'd just run the migration locally against a "
                       "container of the same version so your test setup matches staging exactly, and fix the "
                       "old doc so nobody else gets caught by it."])  # fmt: skip
    key = ctx.put(b, [("user", ctx.f(correction)), ("assistant", reply)])[0]
    exchange(
        ctx, anywhere(ctx), f"prod is on RDS {eng} {prod} fwiw, upgrading that is a whole separate project"
    )
    exchange(ctx, anywhere(ctx), "{col}'s service sits on MySQL 5.7 which is its own kind of mess")
    q = ctx.pick(("Which {db_eng} release does the user's pre-production database actually run?",
                  "After double-checking, what database version did the user say their test environment uses?",
                  "What version is the user's staging db on?"))  # fmt: skip
    ctx.ask("update", ctx.f(q), f"{eng} {new}", [key])


HOST_NOTES = {
    "Fly.io": "Fly.io runs your Docker image close to users in many regions and is cheap for small apps, but the "
    "CLI-first workflow and the occasional platform incident take some getting used to.",
    "Render": "Render is the most Heroku-like: connect the repo, pick a plan, done. Free instances sleep when idle, "
    "so the first request after a quiet period is slow.",
    "Railway": "Railway has the nicest dashboard and usage-based pricing; great for prototypes, though costs are "
    "harder to predict as traffic grows.",
    "Vercel": "Vercel is excellent for Next.js front ends, with a preview deploy for every PR, but long-running "
    "backends and websockets don't fit its serverless model well.",
    "Netlify": "Netlify is strongest for static sites and front ends; its functions are fine for light APIs.",
    "Heroku": "Heroku is still the simplest mental model, but there's no free tier any more and per-dyno pricing "
    "adds up quickly.",
    "DigitalOcean App Platform": "DigitalOcean App Platform is predictable and cheap, with managed Postgres next "
    "door, though its builds are slower than the others.",
    "Google Cloud Run": "Cloud Run scales containers to zero and bills per request, which is very cheap at low "
    "traffic; cold starts and IAM setup are the price.",
    "AWS Lightsail": "Lightsail gives you fixed-price VMs or containers inside AWS, which is nice if you might grow "
    "into the rest of AWS later.",
    "Cloudflare Pages": "Cloudflare Pages is fast and nearly free for front ends, with Workers for small APIs, but "
    "anything needing a traditional long-running server is awkward.",
}  # fmt: skip
DECISION_REASONS = (
    "the free allowance covers us for now", "their managed Postgres made it a no-brainer",
    "the preview deploys sold the team", "their support answered in 10 minutes when we tested them",
    "it was the only one the client's security review signed off on", "the region near our users decided it",
)  # fmt: skip


def hosting(ctx: Ctx) -> tuple[str, int]:
    """The hosting decision for the main project: options, a leaning, and the final choice (shared)."""
    if "hosting" in ctx.keys:
        return ctx.keys["hosting"], int(ctx.keys["hosting@"])
    a, b, c = three(ctx)
    h1, h2, h3 = ctx.p["host_a"], ctx.p["host_b"], ctx.p["host_c"]
    order = [h1, h2, h3]
    ctx.rng.shuffle(order)
    compare = wrap(ctx, [
        f"All three can run {ctx.p['proj']} fine, so it comes down to what you value.",
        bullets(ctx.rng, [HOST_NOTES[h] for h in order]),
        "If I had to pick without knowing more: whichever one lets you run the database next to the app in the "
        "same region, because that latency matters more than anything else on this list.",
    ])  # fmt: skip
    seo = next(reply for ask, reply in GENERIC_FOLLOWUPS if "SEO" in ask)
    ctx.put(a, [("user", ctx.f("trying to pick hosting for {proj}: {host_a}, {host_b} or {host_c}. thoughts?")),
                ("assistant", compare),
                ("user", "hmm, which one works better for SEO and faster deployment times?"),
                ("assistant", seo)])  # fmt: skip
    remark(ctx, b, "leaning towards {host_b} tbh, their pricing page is way clearer",
           "That's a reasonable pick. Before committing, deploy a branch there and time a cold deploy and a "
           "warm one; it's the fastest way to find out whether the workflow suits you. Also check where their "
           "nearest region is to most of your users.")  # fmt: skip
    reason = ctx.pick(DECISION_REASONS)
    key = remark(ctx, c, f"update: we went with {h3} in the end, {reason}",
                 "Nice, decision made. The main things to set up early are health checks, a staging "
                 "environment that mirrors production, and alerts on deploy failures. Want a checklist for the "
                 "first deploy?")[0]  # fmt: skip
    ctx.keys["hosting"], ctx.keys["hosting@"] = key, str(c)
    return key, c


def u_hosting(ctx: Ctx) -> None:
    key, _ = hosting(ctx)
    exchange(
        ctx, anywhere(ctx), "my friend's startup is on {host_b} and they keep complaining about build times"
    )
    q = ctx.pick(
        (
            "Where did the user finally decide to run {proj}?",
            "Which platform ended up hosting {proj}?",
            "Which hosting did the user go with for {proj} in the end?",
        )
    )
    ctx.ask("update", ctx.f(q), ctx.p["host_c"], [key])


LAUNCH_REASONS = (
    "the designs aren't final", "legal wants another pass on the terms", "payment provider onboarding is dragging",
    "half the team had the flu", "the client asked for one more feature, of course",
)  # fmt: skip


def u_launch(ctx: Ctx) -> None:
    a, b = two(ctx)
    first = ctx.dates[b] + timedelta(days=ctx.rng.randint(2, 10))  # still ahead when it gets moved
    moved = first + timedelta(days=ctx.rng.randint(7, 21))
    exchange(ctx, a, f"{{proj}} launch is {month_day(first)}, so things are a bit hectic")
    reason = ctx.pick(LAUNCH_REASONS)
    key = remark(ctx, b, f"launch got pushed to {month_day(moved)} — {reason}",
                 "Honestly that's not the worst news: an extra couple of weeks is room for a proper load test and "
                 "a staged rollout. I'd use the first few days to fix whatever you were cutting corners on.")[0]  # fmt: skip
    other = ctx.dates[-1] + timedelta(days=ctx.rng.randint(3, 30))
    exchange(
        ctx,
        anywhere(ctx),
        f"{{col}}'s team ships their mobile release on {month_day(other)}, so code freeze chaos",
    )
    q = ctx.pick(
        (
            "When is {proj} now expected to go live?",
            "What is the current release date for {proj}?",
            "What date did the {proj} launch get pushed to?",
        )
    )
    ctx.ask("update", ctx.f(q), day(moved), [key])


def u_length(ctx: Ctx) -> None:
    a, b = two(ctx)
    remark(ctx, a, ctx.pick(("pls keep answers short for a while, I'm mostly reading on my phone on the train",
                             "can you keep replies really short for now? reading these between meetings")),
           "Will do — short answers until you say otherwise.")  # fmt: skip
    for s in range(a + 1, b):
        ctx.brief[s] = True
    key = remark(ctx, b, ctx.pick(("ok you can go back to long detailed answers now, I'm at my desk again",
                                   "you can go into more detail again, I have time to actually read now")),
                 "Great, back to full explanations then.")[0]  # fmt: skip
    q = ctx.pick(("At this point, does the user want brief or thorough replies?",
                  "What level of depth does the user currently want in responses?"))  # fmt: skip
    ctx.ask("update", q, "detailed, longer answers (no longer short ones)", [key])


def u_manager(ctx: Ctx) -> None:
    a, b = two(ctx)
    exchange(ctx, a, "{mgr} (my manager) wants a writeup on this by friday")
    key = remark(ctx, b, "news: {mgr} is moving to the platform team, {mgr2} is my manager starting monday",
                 "That's a big change. It might be worth a short intro 1:1 with your new manager to share what you're working "
                 "on and what {mgr} had agreed with you, so nothing gets lost in the handover.")[0]  # fmt: skip
    q = ctx.pick(
        (
            "Who does the user report to now?",
            "Who is the user's current boss?",
            "Who is the user's manager starting from the team change?",
        )
    )
    ctx.ask("update", q, ctx.p["mgr2"], [key])


FRAMEWORK_MOVES = (
    ("the API", "Express", "Fastify", "its HTTP server framework", "TypeScript"),
    ("the frontend build", "Webpack", "Vite", "bundling the frontend", ""),
    ("the test suite", "Jest", "Vitest", "running its JavaScript tests", ""),
    ("the API", "Flask", "FastAPI", "its Python web framework", "Python"),
    ("background jobs", "Celery", "Dramatiq", "its task queue", "Python"),
    ("the DB layer", "TypeORM", "Drizzle", "talking to the database", "TypeScript"),
    ("the e2e tests", "Cypress", "Playwright", "browser end-to-end testing", ""),
    ("the styling", "Sass modules", "Tailwind", "its CSS", ""),
)  # fmt: skip


def u_framework(ctx: Ctx) -> None:
    a, b = two(ctx)
    moves = [m for m in FRAMEWORK_MOVES if m[4] in ("", ctx.stack.lang)]
    part, old, new, phrase, _ = ctx.rng.choice(moves)
    exchange(ctx, a, f"{{proj}}'s {part} is on {old} currently")
    key = remark(ctx, b, f"finally finished moving {part} over to {new}!! only took 3 weekends",
                 f"Congrats, that's a chunky migration. Now is a good time to delete any {old} compatibility shims "
                 "and leftover config while it's fresh, before they turn into mystery files.")[0]  # fmt: skip
    exchange(ctx, anywhere(ctx), f"{{col}}'s team is still on {old} and they seem happy enough")
    q = f"After the switch, what does {ctx.p['proj']} use for {phrase}?"
    ctx.ask("update", q, new, [key])


SCHEDULES = (
    ("run", "tuesday and thursday evenings", "at 6am before work"),
    ("go to the gym", "at lunch", "after dinner, around 8"),
    ("climb", "on weekends", "on wednesday nights"),
    ("swim", "on friday mornings", "on sunday afternoons"),
    ("do yoga", "every morning", "three evenings a week"),
)  # fmt: skip


def u_schedule(ctx: Ctx) -> None:
    a, b = two(ctx)
    act, old, new = ctx.rng.choice(SCHEDULES)
    exchange(ctx, a, f"I {act} {old}, so don't be surprised if I vanish then")
    key = remark(ctx, b, f"changed my routine, I {act} {new} now",
                 "Nice — a routine that fits your week is the one you'll stick to. Just go easy the first couple "
                 "of times while your body adjusts to the new timing.")[0]  # fmt: skip
    q = ctx.pick(
        ("When does the user fit in their exercise these days?", "What is the user's current workout timing?")
    )
    ctx.ask("update", q, new, [key])


def u_runtime(ctx: Ctx) -> None:
    a, b = two(ctx)
    st = ctx.stack
    exchange(ctx, a, f"we're still on {st.runtime} {st.rt_old} for {{proj}}, upgrading is on the list")
    key = remark(ctx, b, f"bumped {{proj}} to {st.runtime} {st.rt_new} last week, only two tests broke",
                 f"Two broken tests is a good outcome for a {st.runtime} upgrade. Make sure the Docker base image and "
                 "the CI matrix were bumped too, otherwise you'll get 'works on my machine' differences.")[0]  # fmt: skip
    q = ctx.pick((f"Which {st.runtime} version is {{proj}} on after the upgrade?",
                  f"What {st.runtime} version did the user bump {{proj}} to?",
                  f"What {st.runtime} release does {{proj}} currently run?"))  # fmt: skip
    ctx.ask("update", ctx.f(q), f"{st.runtime} {st.rt_new}", [key])


def u_pkgmove(ctx: Ctx) -> None:
    a, b = two(ctx)
    exchange(ctx, a, "we use yarn (classic) on {proj}, for reference")
    key = remark(ctx, b, "we moved the whole monorepo from yarn to pnpm this week, so pnpm commands from now on pls",
                 "Got it, I'll write commands for the new setup. One thing to watch: it is strict about undeclared dependencies, so "
                 "anything that only worked because yarn hoisted it will now fail loudly — that's a feature.")[0]  # fmt: skip
    q = ctx.pick(("Which JavaScript package manager should commands for the user's project use now?",
                  "What tool does the user's repo currently install its JS dependencies with?"))  # fmt: skip
    ctx.ask("update", q, "pnpm", [key])


# --- assistant: what the assistant recommended or explained -----------------------------------------------


def a_logrotate(ctx: Ctx) -> None:
    n = ctx.rng.choice((7, 10, 14, 30))
    app = ctx.p["proj"].lower()
    user = f"the {{proj}} box ran out of disk again, turns out /var/log/{app} is like {ctx.rng.randint(18, 60)}G 🙃"
    conf = (f"/var/log/{app}/*.log {{\n    daily\n    rotate {n}\n    compress\n    delaycompress\n"
            "    missingok\n    notifempty\n    copytruncate\n}")  # fmt: skip
    reply = wrap(ctx, [
        "Logs growing without bound is the usual culprit. `logrotate` is already installed on most distros; it "
        "just needs a rule for your app's directory:",
        f"```\n{conf}\n```",
        f"Save that as `/etc/logrotate.d/{app}` and dry-run it with `sudo logrotate -d /etc/logrotate.d/{app}`. "
        f"With `rotate {n}` and `daily` you keep {n} days of history, compressed, and `copytruncate` means the "
        "app doesn't need to reopen its file handle. Free the space right now with `sudo truncate -s 0` on the "
        "current file rather than deleting it while the process still has it open.",
    ])  # fmt: skip
    key = ctx.put(anywhere(ctx), [("user", ctx.f(user)), ("assistant", reply)])[1]
    exchange(
        ctx,
        anywhere(ctx),
        "also our nginx access logs are huge but those live on the load balancer, different team",
    )
    roll = ctx.rng.random()
    if roll < 0.3:
        q, a = "How many days of logs does the assistant's logrotate config keep?", f"{n} days"
    elif roll < 0.65:
        q, a = "How much history did the assistant's fix for the full disk retain?", f"{n} days of logs"
    else:
        q, a = ("What did the assistant propose to stop the server's storage filling up again?",
                f"a logrotate rule (daily, compressed, keeping {n} days)")  # fmt: skip
    ctx.ask("assistant", q, a, [key])


def a_ratelimit(ctx: Ctx) -> None:
    st = ctx.stack
    user = f"someone's hammering our login endpoint, like {ctx.rng.randint(40, 400)} req/s from one IP. {st.framework} app"
    reply = wrap(ctx, [
        f"You want per-IP throttling on the login route specifically. In {st.framework} I'd reach for "
        f"**{st.ratelimit}**:",
        f"```{st.fence}\n{st.ratelimit_code}\n```",
        "Five attempts a minute per IP is a sensible start for a login form; answer with 429 and a "
        "`Retry-After` header. Longer term, put a coarser limit at the edge too (Cloudflare rules or nginx "
        "`limit_req`) so floods never reach the app, and add a per-account lockout so an attacker rotating IPs "
        "still can't brute-force one user.",
    ])  # fmt: skip
    key = ctx.put(anywhere(ctx), [("user", user), ("assistant", reply)])[1]
    q = ctx.pick(("Which library did the assistant point to for throttling the brute-force attempts?",
                  f"What did the assistant suggest adding to the {st.framework} app to cap repeated sign-in tries "
                  "from one address?"))  # fmt: skip
    ctx.ask("assistant", q, st.ratelimit, [key])


def a_nplus1(ctx: Ctx) -> None:
    st = ctx.stack
    page = ctx.rng.choice(("orders", "invoices", "shipments", "projects", "customers"))
    rows = ctx.rng.randint(30, 80)
    user = f"the {page} page takes like {ctx.rng.randint(4, 9)}s to load and it's only {rows} rows?? it's {st.framework} + {st.orm}"
    reply = wrap(ctx, [
        f"Slow with only {rows} rows is almost always an N+1: the page loads the {page} in one query, then "
        "runs one more query per row for the related data while rendering. Turn on query logging and you'll see "
        f"about {rows + 1} nearly identical SELECTs.",
        f"The fix is to load the related rows up front — with {st.orm} that's {st.eager}:",
        f"```{st.fence if st.fence != 'go' else 'sql'}\n{st.eager_code}\n```",
        "After that the page should do two or three queries in total, regardless of row count.",
    ])  # fmt: skip
    key = ctx.put(anywhere(ctx), [("user", user), ("assistant", reply)])[1]
    if ctx.rng.random() < 0.5:
        q, a = (
            f"What did the assistant diagnose as the cause of the sluggish {page} screen?",
            "an N+1 query problem",
        )
    else:
        q, a = (
            f"What technique did the assistant recommend to speed up the {page} listing?",
            f"eager loading with {st.eager}",
        )
    ctx.ask("assistant", q, a, [key])


VEG_DISHES = (
    "lentil dal with rice", "chickpea and spinach curry", "halloumi tray bake", "black bean tacos",
    "mushroom risotto", "pesto gnocchi with peas", "veggie fried rice", "shakshuka",
    "sweet potato and feta salad", "tofu stir-fry with noodles", "tomato and white bean soup", "cauliflower cheese",
)  # fmt: skip
MEAT_DISHES = (
    "chicken fajitas", "salmon with roasted veg", "turkey chilli", "prawn pad thai", "lemon garlic chicken thighs",
    "beef and broccoli stir-fry", "chicken sausage pasta", "tuna niçoise",
)  # fmt: skip
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def a_meal(ctx: Ctx) -> None:
    veg = ctx.rng.random() < 0.5
    diet = "mostly vegetarian" if veg else ctx.pick(("high protein", "no pork", "dairy-free-ish"))
    dishes = ctx.rng.sample(VEG_DISHES if veg else VEG_DISHES + MEAT_DISHES, 7)
    plan = "\n".join(f"- **{d}:** {dish}" for d, dish in zip(WEEKDAYS, dishes, strict=True))
    reply = wrap(ctx, ["Here's a week that stays under 30 minutes most nights, with leftovers built in:", plan,
                       "Cook double on Monday and Thursday and you've got lunches sorted too. Shopping-wise, buy "
                       "the fresh herbs and fish (if any) midweek so they don't wilt."], life=True)  # fmt: skip
    user = f"can you plan dinners for this week? {diet}, nothing over 30 min pls"
    key = ctx.put(anywhere(ctx), [("user", user), ("assistant", reply)])[1]
    i = ctx.rng.randrange(7)
    q = ctx.pick((f"What meal did the assistant slot in for {WEEKDAYS[i]} evening?",
                  f"Which dinner did the assistant plan for {WEEKDAYS[i]}?",
                  f"In the week of cooking the assistant mapped out, what's on for {WEEKDAYS[i]}?"))  # fmt: skip
    ctx.ask("assistant", q, dishes[i], [key])


def a_cron(ctx: Ctx) -> None:
    h, m = ctx.rng.choice(((2, 30), (3, 15), (1, 0), (4, 45), (23, 30), (0, 20)))
    script = ctx.rng.choice(("backup.sh", "prune_uploads.sh", "export_reports.sh", "vacuum_db.sh"))
    user = f"how do I run {script} every night at {h}:{m:02d}? it's on the ubuntu box"
    line = f"{m} {h} * * * /usr/local/bin/{script} >> /var/log/{script.removesuffix('.sh')}.log 2>&1"
    reply = wrap(ctx, [
        "Two options. Classic cron — edit with `crontab -e` and add:",
        f"```bash\n{line}\n```",
        "The five fields are minute, hour, day of month, month and weekday. Use absolute paths: cron runs with "
        "a tiny `PATH` and no shell profile. Alternatively a systemd timer gives you logs in journalctl and "
        f"catch-up after downtime: `OnCalendar=*-*-* {h:02d}:{m:02d}:00` with `Persistent=true`.",
    ])  # fmt: skip
    key = ctx.put(anywhere(ctx), [("user", user), ("assistant", reply)])[1]
    q = ctx.pick(("What crontab schedule did the assistant give for the nightly job?",
                  "Which timing expression did the assistant write out for running the script once a night?"))  # fmt: skip
    ctx.ask("assistant", q, f"{m} {h} * * *", [key])


def a_secret(ctx: Ctx) -> None:
    svc = ctx.rng.choice(("Stripe", "SendGrid", "AWS", "OpenAI", "Twilio", "Mapbox"))
    user = f"oh no. I pushed our .env with the {svc} key to github. public repo. it was up for like 10 min"
    steps = [
        f"**Revoke the {svc} key now** and issue a new one — assume it's compromised; bots scrape GitHub for "
        "keys within minutes, and rewriting history doesn't un-leak it.",
        "Put the new key in your secret store and redeploy.",
        "Remove the file from history with `git filter-repo --path .env --invert-paths`, then force-push and ask "
        "collaborators to re-clone.",
        f"Check the {svc} dashboard for usage you don't recognise during that window.",
        "Add `.env` to `.gitignore` and a gitleaks pre-commit hook so it can't happen again.",
    ]  # fmt: skip
    reply = wrap(
        ctx, ["Don't panic, but do it in this order:", "\n".join(f"{i}. {s}" for i, s in enumerate(steps, 1))]
    )
    key = ctx.put(anywhere(ctx), [("user", user), ("assistant", reply)])[1]
    if ctx.rng.random() < 0.5:
        q, a = ("According to the assistant, what had to happen before anything else after the credentials leak?",
                f"revoke and replace the exposed {svc} key")  # fmt: skip
    else:
        q, a = (
            "Which tool did the assistant suggest for scrubbing the file out of the repository's past commits?",
            "git filter-repo",
        )
    ctx.ask("assistant", q, a, [key])


def a_docker(ctx: Ctx) -> None:
    st = ctx.stack
    user = f"our {{proj}} image is {ctx.rng.randint(12, 25) / 10:.1f}GB and deploys take forever, help"
    reply = wrap(ctx, [
        "Almost all of that is build tooling and caches riding along into the final image. Split the "
        "Dockerfile into a build stage and a runtime stage, and copy only the built artefacts across.",
        f"For a {st.lang} app I'd base the final stage on `{st.base_image}`; it has what the app needs at "
        "runtime and nothing else. Add a `.dockerignore` for `.git`, tests and local caches, and order the "
        "layers so dependency installation is cached between code changes.",
        "Expect the image to drop to a few hundred MB, and pushes to get proportionally faster.",
    ])  # fmt: skip
    key = ctx.put(anywhere(ctx), [("user", ctx.f(user)), ("assistant", reply)])[1]
    q = ctx.pick(("Which base image did the assistant recommend for the slimmed-down container?",
                  "What should the final stage of the user's build start FROM, per the assistant?"))  # fmt: skip
    ctx.ask("assistant", q, st.base_image, [key])


# --- assistant, deep inside a very long reply ------------------------------------------------------------

ROOT_CAUSES = (
    ("the export worker held Redis connections open while streaming large CSVs, so the pool ran dry and every "
     "other request queued behind it", "the export worker exhausting the Redis connection pool",
     "last night's outage", "service going down overnight"),
    ("a missing index on `events.created_at` made the nightly cleanup scan the whole table and hold locks for "
     "minutes", "a missing index on events.created_at, so the cleanup job scanned and locked the table",
     "the 3am slowdown", "sluggishness in the early hours"),
    ("the internal gateway's TLS certificate expired at 00:00 UTC, so every service-to-service call failed the "
     "handshake", "an expired TLS certificate on the internal gateway", "the midnight errors",
     "failures that began at midnight"),
    ("a typo in the Helm values set `DB_POOL_SIZE` to 2 instead of 20, so requests waited on two connections",
     "a Helm values typo that shrank the database pool to 2", "monday's latency spike",
     "slow responses at the start of the week"),
    ("the hourly cron job and the manual backfill ran at the same time and kept deadlocking on `order_items`",
     "the cron job and the manual backfill deadlocking each other", "the weird errors this afternoon",
     "afternoon burst of failures"),
    ("one worker node's clock had drifted about four minutes, so tokens it checked looked expired",
     "clock drift on one worker node making tokens look expired", "the random logouts",
     "people getting signed out at random"),
)  # fmt: skip


def d_log(ctx: Ctx) -> None:
    cause, short, incident, q_incident = ctx.rng.choice(ROOT_CAUSES)
    deep = f"### Root cause\n\nPutting it together: {cause}. Everything before this section is a symptom of that."
    user = f"{ctx.pick(LONG_ASKS_LOG)} it's from {incident}"
    key = ctx.put(anywhere(ctx), [("user", user), ("assistant", long_log_analysis(ctx.rng, deep))])[1]
    q = f"After reading through everything the user pasted, what did the assistant conclude was behind the {q_incident}?"
    ctx.ask("assistant", q, short, [key])


FILE_VALUES = (
    ("deliver_webhook", "Outbound webhooks get this many delivery attempts before we park them in dead_letters.",
     "max_attempts", (5, 6, 7, 8), "",
     "In the complete source file the assistant produced, how many tries does an outgoing event notification "
     "get before it is set aside?"),
    ("expire_idle_sessions", "Sessions with no activity for this many minutes are signed out.", "idle_minutes",
     (15, 20, 30, 45), " minutes",
     "In the full module the assistant wrote out, after how long without activity are people logged out?"),
    ("stream_export", "Rows are streamed to the CSV in chunks of this size.", "chunk_size", (500, 1000, 2500, 5000),
     " rows", "What batch size did the assistant's full file use when streaming spreadsheet downloads?"),
    ("issue_reset_token", "Password reset links stop working after this many hours.", "ttl_hours", (1, 2, 6, 24),
     " hours", "How long do password-recovery links stay valid in the whole module the assistant wrote?"),
)  # fmt: skip


def d_file(ctx: Ctx) -> None:
    name, comment, var, values, unit, q = ctx.rng.choice(FILE_VALUES)
    value = ctx.rng.choice(values)
    ts = ctx.stack.fence == "ts"
    if ts:
        deep = (f"export async function {_camel(name)}(id: string): Promise<void> {{\n  // {comment}\n"
                f"  const {_camel(var)} = {value};\n  const row = await db.job.findUniqueOrThrow({{ where: {{ id }} }});\n"
                f"  await runWithLimit(row, {_camel(var)});\n}}")  # fmt: skip
        module = "service.ts"
    else:
        deep = (f"def {name}(session: Session, job_id: int) -> None:\n    \"\"\"Run one queued {name.split('_')[-1]} job.\"\"\"\n"
                f"    # {comment}\n    {var} = {value}\n    job = session.get(Job, job_id)\n"
                f"    run_with_limit(job, {var})")  # fmt: skip
        module = ctx.rng.choice(("services.py", "jobs.py", "accounts.py"))
    user = fill(ctx.pick(LONG_ASKS_FILE), {"module": module})
    reply = long_file_listing(ctx.rng, "ts" if ts else "python", module, deep)
    key = ctx.put(anywhere(ctx), [("user", user), ("assistant", reply)])[1]
    ctx.ask("assistant", q, f"{value}{unit.removesuffix('s') if value == 1 else unit}", [key])


def d_runbook(ctx: Ctx) -> None:
    task = ctx.pick(RUNBOOK_TASKS)
    x, y = ctx.rng.choice((1, 2, 3, 5)), ctx.rng.choice((5, 10, 15))
    deep = (f"Roll back if **the 5xx rate stays above {x}% for {y} consecutive minutes** after the flip, or if the "
            "smoke suite fails twice in a row. Rolling back means pointing the secret at the old database again and "
            "restarting the API; the old instance stays writable until the credentials are rotated, so nothing is "
            "lost.")  # fmt: skip
    user = fill(ctx.pick(LONG_ASKS_RUNBOOK), {"task": task})
    key = ctx.put(anywhere(ctx), [("user", user), ("assistant", long_runbook(ctx.rng, task, deep))])[1]
    q = f"In the step-by-step plan the assistant wrote for the {task}, what condition would trigger reverting?"
    ctx.ask("assistant", q, f"server errors (5xx) above {x}% for {y} minutes", [key])


# --- multi-hop: two turns from different sessions -----------------------------------------------------------

AIRLINES = (
    "TAP", "LOT", "Iberia", "Aer Lingus", "KLM", "Lufthansa", "Ryanair", "easyJet", "Air Canada", "United",
    "Finnair", "SAS", "Vueling", "Aeroméxico", "Qantas", "Emirates",
)  # fmt: skip
WEDDING_CITIES = (
    "Porto",
    "Kraków",
    "Seville",
    "Oaxaca",
    "Lyon",
    "Galway",
    "Cartagena",
    "Split",
    "Bergen",
    "Hoi An",
)


def m_wedding(ctx: Ctx) -> None:
    a, b = two(ctx)
    city = ctx.pick(WEDDING_CITIES)
    airline, airline2 = ctx.rng.sample(AIRLINES, 2)
    rel = ctx.pick(("sister", "brother", "best friend", "cousin"))
    month = f"{ctx.dates[-1] + timedelta(days=40):%B}"
    k1 = exchange(ctx, a, f"my {rel}'s wedding is in {city} in {month}, so I'm taking that week off")[0]
    k2 = remark(ctx, b, f"booked the flights for the wedding — {airline}, with a stupid layover but half the price",
                "Nice, one thing off the list. If the layover is short, travel carry-on only so a missed "
                "connection can't separate you from your outfit, and check in online the day before.")[0]  # fmt: skip
    exchange(ctx, anywhere(ctx), f"last time I flew {airline2} they lost my bag for 4 days, never again")
    q = ctx.pick(
        (
            f"Which airline is the user taking to get to {city}?",
            f"Who is the user flying with to reach {city}?",
        )
    )
    ctx.ask("multi-hop", q, airline, [k1, k2])


SERVICES_OWNED = (
    "billing",
    "notifications",
    "search",
    "auth",
    "reporting",
    "payments",
    "geocoding",
    "pricing",
)
OTHER_LANGS = ("Go", "Rust", "Kotlin", "Elixir", "Java", "Scala", "C#", "Clojure")


def m_colleague(ctx: Ctx) -> None:
    a, b = two(ctx)
    svc, svc2 = ctx.rng.sample(SERVICES_OWNED, 2)
    lang2 = ctx.pick([lang for lang in OTHER_LANGS if lang != ctx.stack.lang])
    k1 = exchange(ctx, a, f"{{col}} owns the {svc} service, so I'll have to ask them")[0]
    k2 = exchange(
        ctx,
        b,
        f"context: the {svc} service is the only thing we have in {lang2}, everything else is {ctx.stack.lang}",
    )[0]
    exchange(ctx, anywhere(ctx), f"{{col2}} owns {svc2}, which is fine, it never breaks")
    q = ctx.pick(("What language is the code that {col} looks after written in?",
                  "In which programming language is {col}'s part of the system built?"))  # fmt: skip
    ctx.ask("multi-hop", ctx.f(q), lang2, [k1, k2])


def m_side_host(ctx: Ctx) -> None:
    k1, a = side_intro(ctx)
    b = ctx.rng.randint(a + 1, ctx.n - 1)
    k2 = exchange(ctx, b, "{side} is running on {small_host} right now, which is fine until it isn't")[0]
    exchange(
        ctx, anywhere(ctx), "{col} hosts their blog on {small_host2} and keeps telling me to do the same"
    )
    q = ctx.pick(
        (
            "Where is the user's {side_short} running?",
            "What machine or service hosts the user's {side_short}?",
        )
    )
    ctx.ask("multi-hop", ctx.f(q), ctx.p["small_host"], [k1, k2])


VET = (
    ("Apoquel", "itchy skin"), ("antibiotic ear drops", "an ear infection"), ("carprofen", "a sore hip"),
    ("a probiotic paste", "an upset stomach"), ("eye drops", "mild conjunctivitis"), ("gabapentin", "joint pain"),
)  # fmt: skip


def m_vet(ctx: Ctx) -> None:
    k1, a = pet_intro(ctx)
    b = ctx.rng.randint(a + 1, ctx.n - 1)
    med, cond = ctx.rng.choice(VET)
    k2 = remark(ctx, b, f"vet visit went ok, {{pet}} has to take {med} for {cond} for the next two weeks. {{Pron}} hates it",
                "Poor {pet}! Hiding it in a small treat usually works, or wrap it in something soft. Set a phone "
                "reminder so doses don't get skipped on busy days.")[0]  # fmt: skip
    q = ctx.pick(
        (
            "What medicine was the user's {breed} put on?",
            "Which treatment did the vet give the user's {breed}?",
            "What does the user's {breed} have to take for the next two weeks?",
        )
    )
    ctx.ask("multi-hop", ctx.f(q), med, [k1, k2])


DELIVERABLES = (
    ("a one-page incident writeup for the outage", "a one-page incident writeup"),
    ("a cost breakdown of our AWS bill", "a breakdown of the AWS costs"),
    ("a migration plan for getting off MongoDB", "a plan for migrating off MongoDB"),
    ("a hiring rubric for the backend role", "a backend hiring rubric"),
    ("a first draft of next quarter's OKRs", "a draft of next quarter's OKRs"),
    ("a demo of the new onboarding flow", "a demo of the new onboarding flow"),
)  # fmt: skip


def m_deliverable(ctx: Ctx) -> None:
    a, b = two(ctx)
    thing, short = ctx.rng.choice(DELIVERABLES)
    k1 = exchange(ctx, a, "{mgr} is my manager btw, very nice but very into docs")[0]
    k2 = exchange(ctx, b, f"{{mgr}} wants {thing} by {ctx.pick(WEEKDAYS[:5])}")[0]
    q = ctx.pick(
        (
            "What is the user's boss waiting on from them?",
            "What has the person the user reports to asked them to produce?",
        )
    )
    ctx.ask("multi-hop", q, short, [k1, k2])


# --- temporal: answered from turns plus session dates ------------------------------------------------------

BUGS = (
    ("the race condition in the webhook retry queue", "a race condition in webhook retries",
     "Two workers can claim the same retry because the status check and the update aren't atomic. Claim jobs "
     "with `SELECT ... FOR UPDATE SKIP LOCKED` so each one is taken exactly once."),
    ("the bug where tomorrow's orders show up as today's", "orders appearing on the wrong day (a timezone bug)",
     "That's a day boundary computed in UTC and displayed in local time. Compute 'today' in the user's zone and "
     "convert the boundaries to UTC before querying."),
    ("the memory leak in the PDF export worker", "a memory leak in the PDF export worker",
     "The renderer keeps every page in memory until the document closes. Render in chunks and restart the worker "
     "process every N jobs as a safety net."),
    ("the broken pagination on search results", "broken search-result pagination",
     "Page two repeats items because the sort isn't unique. Add the id as a tiebreaker to the ORDER BY."),
    ("the Safari-only login loop", "a Safari-only login loop",
     "Safari drops the session cookie on the cross-site redirect. Set `SameSite=Lax` and make sure the callback is "
     "on the same site as the app."),
    ("the double charges when people click pay twice", "duplicate charges from double-clicking pay",
     "Send an idempotency key with the payment request, derived from the order id, so a second click returns the "
     "first result instead of charging again."),
)  # fmt: skip
AUDIENCES = (
    ("a potential client", "client"), ("our investors", "investor"), ("the board", "board"),
    ("the whole company at the all-hands", "all-hands"), ("a big prospect", "sales"),
)  # fmt: skip


def demo_session(ctx: Ctx) -> int | None:
    """A session with a quiet week before it and a few days after, so a demo can fall just after it."""
    ok = [j for j in range(1, ctx.n - 1)
          if (ctx.dates[j].date() - ctx.dates[j - 1].date()).days >= 6
          and (ctx.dates[j + 1].date() - ctx.dates[j].date()).days >= 4]  # fmt: skip
    return ctx.rng.choice(ok) if ok else None


def t_demo(ctx: Ctx) -> bool:
    j = demo_session(ctx)
    if j is None:
        return False
    demo = ctx.dates[j] + timedelta(days=2)
    audience, aq = ctx.rng.choice(AUDIENCES)
    bug, short, fix = ctx.rng.choice(BUGS)
    k1 = exchange(
        ctx,
        ctx.rng.randint(0, j - 1),
        f"we're demoing {{proj}} to {audience} on {demo:%A}, {month_day(demo)}",
    )[0]
    user = f"today's whole plan: kill {bug}. it has to be gone by {demo:%A}"
    k2 = ctx.put(
        j,
        [("user", user), ("assistant", wrap(ctx, [fix, "Write a test that reproduces it first, then fix."]))],
    )[0]
    remark(ctx, j + 1, "demo went well!! nobody noticed the loading spinner",
           "Congrats! Worth writing down the two or three questions people asked — they're a preview of what "
           "real users will care about.")  # fmt: skip
    q = f"What was the user trying to fix in the days just before the {aq} presentation of {ctx.p['proj']}?"
    ctx.ask("temporal", q, short, [k1, k2])
    return True


ACTIVITIES = (
    ("Spanish classes", "language course", "the teacher seems great"),
    ("physio for my knee", "physical therapy", "already sore"),
    ("couch to 5k", "beginner running programme", "already sore lol"),
    ("guitar lessons", "music lessons", "my fingertips hate me"),
    ("volunteering at the animal shelter", "volunteer work", "it was actually really fun"),
    ("a Rust course on weekends", "systems programming course", "feeling very out of my depth lol"),
    ("swimming lessons", "lessons in the pool", "swallowed half the pool"),
)  # fmt: skip


def t_started(ctx: Ctx) -> bool:
    s = anywhere(ctx)
    act, aq, comment = ctx.rng.choice(ACTIVITIES)
    back = ctx.rng.choice((0, 1, 2, 3, 4))
    when = ctx.dates[s] - timedelta(days=back)
    rel = {0: "this morning", 1: "yesterday"}.get(back, f"on {when:%A}")
    key = exchange(ctx, s, f"started {act} {rel}, {comment}")[0]
    q = ctx.pick((f"On what date did the user begin their {aq}?", f"When did the user kick off their {aq}?"))
    ctx.ask("temporal", q, day(when), [key])
    return True


TASKS = (
    ("Postgres 13 → 16 upgrade on prod", "production database major-version upgrade"),
    ("migration from Webpack to Vite", "frontend bundler switch"),
    ("SOC 2 evidence collection", "compliance-audit paperwork"),
    ("repainting of the spare room", "redecoration of the spare bedroom"),
    ("monorepo migration", "consolidation of the repositories into one"),
    ("Kubernetes upgrade to 1.30", "cluster version bump"),
    ("rewrite of the onboarding flow", "rebuild of the signup experience"),
)  # fmt: skip


def t_duration(ctx: Ctx) -> bool:
    a, b = two(ctx)
    task, tq = ctx.rng.choice(TASKS)
    k1 = remark(ctx, a, f"starting the {task} today, wish me luck",
                "Good luck! Keep a running log of what you do as you go — it makes the inevitable 'what changed?' "
                "question much easier to answer, and it doubles as the write-up afterwards.")[0]  # fmt: skip
    k2 = remark(ctx, b, f"the {task} is DONE. finally.",
                "Congrats, that's a big one off the list. Take a moment to note what you'd do differently next "
                "time while it's fresh.")[0]  # fmt: skip
    days = (ctx.dates[b].date() - ctx.dates[a].date()).days
    q = f"How many days passed between the user starting the {tq} and saying it was finished?"
    ctx.ask("temporal", q, f"{days} day" if days == 1 else f"{days} days", [k1, k2])
    return True


def t_hosting_month(ctx: Ctx) -> bool:
    key, c = hosting(ctx)
    q = ctx.pick(("In which month did the user settle on where {proj} would run?",
                  "When (month and year) was the hosting question for {proj} finally decided?"))  # fmt: skip
    ctx.ask("temporal", ctx.f(q), f"{ctx.dates[c]:%B %Y}", [key])
    return True


# --- preference: how the user wants to be helped -----------------------------------------------------------


def stated(ctx: Ctx, lead: str, ack: str) -> str:
    """A preference, said on its own or in passing with a request; returns the key of the user's turn."""
    s = anywhere(ctx)
    if ctx.rng.random() < 0.5:
        return remark(ctx, s, lead, ack)[0]
    return exchange(ctx, s, lead)[0]


def p_code_lang(ctx: Ctx) -> None:
    lang, other = ctx.rng.choice(
        (("TypeScript", "plain JS"), ("Python", "JavaScript"), ("TypeScript", "Python"))
    )
    s = anywhere(ctx)
    key = remark(ctx, s, f"can you do code examples in {lang} from now on? I don't really read {other}",
                 "Sure — I'll switch the examples over from here on.")[0]  # fmt: skip
    ctx.p["code_lang"], ctx.p["code_lang_from"] = lang, str(s + 1)
    q = ctx.pick(("In which programming language does the user want sample code?",
                  "What language should snippets be written in for this user?"))  # fmt: skip
    ctx.ask("preference", q, lang, [key])


def p_bullets(ctx: Ctx) -> None:
    key = stated(
        ctx,
        "fwiw bullet points are way easier for me to skim than walls of text",
        "Noted — I'll lead with bullets and keep prose for the parts that need it.",
    )
    q = ctx.pick(
        (
            "How does the user like answers laid out?",
            "What response format suits the user best?",
            "Does the user prefer bullet points or paragraphs?",
        )
    )
    ctx.ask("preference", q, "bullet points", [key])


def p_pkg(ctx: Ctx) -> None:
    pm, not_pm = ("uv", "pip") if ctx.stack.lang == "Python" else (ctx.pick(("pnpm", "bun")), "npm")
    key = stated(
        ctx,
        f"we use {pm} everywhere, so {pm} commands pls, not {not_pm}",
        "Got it, I'll write install commands that way.",
    )
    q = ctx.pick(("Which package tool should install instructions for this user assume?",
                  "What does the user want dependency-install commands written for?"))  # fmt: skip
    ctx.ask("preference", q, pm, [key])


def p_sql(ctx: Ctx) -> None:
    key = stated(
        ctx,
        "honestly I'd rather write plain SQL than fight an ORM, keep that in mind",
        "Understood — I'll give you queries directly rather than ORM code.",
    )
    q = ctx.pick(
        (
            "What approach to database access does the user favour?",
            "How does the user like to query their data stores?",
        )
    )
    ctx.ask("preference", q, "hand-written SQL rather than an ORM", [key])


def p_metric(ctx: Ctx) -> None:
    key = stated(
        ctx,
        "metric units pls, cups and ounces make no sense to me",
        "Noted, I'll convert quantities for you from now on.",
    )
    q = ctx.pick(
        (
            "Which system of measurement does the user want in recipes?",
            "How should quantities be expressed for this user?",
        )
    )
    ctx.ask("preference", q, "metric", [key])


def p_why(ctx: Ctx) -> None:
    key = stated(
        ctx,
        "don't just give me the fix, tell me why it broke — trying to actually get better at this",
        "Deal — cause first, then the fix.",
    )
    q = ctx.pick(("Besides a solution, what does the user want included when they get help?",
                  "What does the user expect alongside a working answer?"))  # fmt: skip
    ctx.ask("preference", q, "an explanation of why the problem happened", [key])


def p_emoji(ctx: Ctx) -> None:
    key = stated(
        ctx, "pls no emojis in answers, they make it read like marketing copy", "Understood, plain text only."
    )
    q = ctx.pick(
        (
            "What stylistic element does the user not want in responses?",
            "What should the assistant leave out of replies?",
        )
    )
    ctx.ask("preference", q, "emojis", [key])


def p_tests(ctx: Ctx) -> None:
    key = stated(
        ctx,
        "whenever you suggest a code change, include a test for it too pls",
        "Will do — every change comes with a test from now on.",
    )
    q = ctx.pick(("What should accompany any code change the assistant proposes?",
                  "What does the user expect with every suggested modification to their code?"))  # fmt: skip
    ctx.ask("preference", q, "a test", [key])


SINGLE = (s_city, s_job, s_pet, s_machine, s_editor, s_tz, s_budget, s_team, s_side, s_hobby, s_ci, s_partner)
UPDATE = (
    u_staging_db,
    u_hosting,
    u_launch,
    u_length,
    u_manager,
    u_framework,
    u_schedule,
    u_runtime,
    u_pkgmove,
)
ASSISTANT = (a_logrotate, a_ratelimit, a_nplus1, a_meal, a_cron, a_secret, a_docker)
DEEP = (d_log, d_file, d_runbook)
MULTI = (m_wedding, m_colleague, m_side_host, m_vet, m_deliverable)
PREFERENCE = (p_bullets, p_pkg, p_sql, p_metric, p_why, p_emoji, p_tests)


def plan(ctx: Ctx) -> None:
    """Choose which facts this user's weeks contain, and schedule them."""
    rng = ctx.rng
    updates = rng.sample(UPDATE, 3)
    assistants = rng.sample(ASSISTANT, 3)
    if a_docker in assistants:  # the generic image-size answer would name base images too: keep it out
        ctx.banned.append(DEV_TOPICS[0])
    multis = rng.sample([m for m in MULTI if not (m is m_deliverable and u_manager in updates)], 2)
    prefs_ok = [p for p in PREFERENCE if not (p is p_pkg and u_pkgmove in updates)]
    prefs = rng.sample(prefs_ok, 1)
    if u_length in updates:
        u_length(ctx)  # first: it decides which sessions get brief replies
    if rng.random() < 0.6:
        p_code_lang(ctx)
    else:
        prefs += rng.sample([p for p in prefs_ok if p not in prefs], 1)
    singles = rng.sample(SINGLE, 5)
    rest = [u for u in updates if u is not u_length]
    for kind in (*singles, *rest, *assistants, rng.choice(DEEP), *multis, *prefs):
        kind(ctx)
    temporal = [t_started, t_duration, t_demo] + ([t_hosting_month] if u_hosting in updates else [])
    rng.shuffle(temporal)
    wanted = rng.choice((2, 3))
    for t in temporal:
        if wanted and t(ctx):
            wanted -= 1


def filler(ctx: Ctx, session: int) -> list[Turn]:
    """Everyday traffic between the facts: requests, follow-ups, thanks, small talk, now and then a huge answer."""
    rng = ctx.rng
    r = rng.random()
    if r < 0.05:
        return long_turns(ctx)
    if r < 0.09:
        return exchange_turns(ctx, session, rng.choice(NOISE))
    topic = pick_topic(ctx)
    ask = ctx.f(rng.choice(topic.asks))
    if r < 0.14:
        turns: list[Turn] = [("user", rng.choice(BRB))]
        if rng.random() < 0.5:
            turns.append(("assistant", rng.choice(BOT_WAIT)))
        turns += [("user", f"{rng.choice(BACK)} {ask}"), ("assistant", compose(ctx, topic, session))]
        return turns
    turns = [("user", ask), ("assistant", compose(ctx, topic, session))]
    if rng.random() < 0.35:
        follow = topic.follow if topic.follow and rng.random() < 0.5 else GENERIC_FOLLOWUPS
        q, a = rng.choice(follow)
        extra = rng.sample(topic.tips, 2)
        turns += [("user", q), ("assistant", f"{a}\n\n{rng.choice(LEADINS)}\n\n{bullets(rng, extra)}")]
    if rng.random() < 0.2:
        if rng.random() < 0.4:
            turns += [("user", rng.choice(THANKS)), ("assistant", rng.choice(BOT_THANKS))]
        else:
            tips = " ".join(rng.sample(topic.tips, 2))
            caveat = rng.choice(CAVEATS_LIFE if topic.life else CAVEATS_DEV)
            more = f"One more thing while you're in there: {tips} {caveat}"
            turns += [("user", rng.choice(ACKS)), ("assistant", more)]
    return turns


def assemble(ctx: Ctx, conv: Conversation) -> None:
    """Write the sessions: scripted blocks interleaved, in order, with filler; then resolve the questions."""
    rng = ctx.rng
    ids: dict[str, str] = {}
    for s, ts in enumerate(ctx.dates):
        conv.new_session(ts)
        scripted = [list(b) for b in ctx.scripted[s]]
        count = sum(len(b) for b in scripted)
        target = rng.randint(12, 36)
        head: list[list[tuple[str, str, str]]] = []
        greet = rng.random()
        if greet < 0.3:
            head.append(
                [("user", rng.choice(GREETINGS), ""), ("assistant", ctx.f(rng.choice(BOT_GREETINGS)), "")]
            )
            count += 2
        elif greet < 0.6:
            (_, ask), (_, reply) = exchange_turns(ctx, s)
            head.append([("user", f"{rng.choice(GREETING_LEADS)}{ask}", ""), ("assistant", reply, "")])
            count += 2
        fillers: list[list[tuple[str, str, str]]] = []
        while count < target:
            block = [(role, text, "") for role, text in filler(ctx, s)]
            fillers.append(block)
            count += len(block)
        blocks = head + interleave(rng, scripted, fillers)
        for block in blocks:
            for role, text, key in block:
                dia = conv.say(conv.speaker_a if role == "user" else BOT, text, role)
                if key:
                    ids[key] = dia
    for category, question, answer, keys in ctx.pending:
        conv.ask(question, answer, [ids[k] for k in keys], category)


def interleave(rng: random.Random, a: list[list[tuple[str, str, str]]], b: list[list[tuple[str, str, str]]]
               ) -> list[list[tuple[str, str, str]]]:  # fmt: skip
    """Merge two lists of blocks at random, keeping each list's own order."""
    slots = [0] * len(a) + [1] * len(b)
    rng.shuffle(slots)
    it = (iter(a), iter(b))
    return [next(it[k]) for k in slots]


def make_dates(rng: random.Random, n: int) -> list[datetime]:
    """n session times over 3-8 weeks, somewhere in 2025-2026, at varied times of day."""
    while True:
        gaps = [rng.randint(1, 8) for _ in range(n - 1)]
        if 21 <= sum(gaps) <= 56:
            break
    start = datetime(2025, 1, 6) + timedelta(days=rng.randint(0, 600))
    out, offset = [], 0
    for gap in [0, *gaps]:
        offset += gap
        hour = rng.choice((7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23))
        out.append(start + timedelta(days=offset, hours=hour, minutes=rng.randint(0, 59)))
    return out


def make_profile(rng: random.Random, name: str) -> dict[str, str]:
    """Who this user is: one coherent background drawn from the pools."""
    (city, tz), (_, tz2) = rng.sample(CITIES, 2)
    job, job_line = rng.choice(JOBS)
    (pet, species, breed, pron), (pet2, _, breed2, _) = rng.sample(PETS, 2)
    side, side_desc, side_short = rng.choice(SIDE_PROJECTS)
    host_a, host_b, host_c = rng.sample(HOSTS, 3)
    small_host, small_host2 = rng.sample(SMALL_HOSTS, 2)
    eng, old, new = rng.choice((("Postgres", "14", "15"), ("Postgres", "13", "15"), ("Postgres", "15", "16"),
                                ("Postgres", "14", "16"), ("Postgres", "16", "17"), ("MySQL", "8.0", "8.4")))  # fmt: skip
    prod = (
        "Aurora MySQL 3"
        if eng == "MySQL"
        else rng.choice([v for v in ("13", "14", "15", "16", "17") if v not in (old, new)])
    )
    machine, machine2 = rng.sample(MACHINES, 2)
    editor, editor2 = rng.sample(EDITORS, 2)
    col, col2 = rng.sample(COLLEAGUES, 2)
    mgr, mgr2 = rng.sample(MANAGERS, 2)
    other_city, other_city2 = rng.sample([c for c in OTHER_CITIES if c != city], 2)
    ci, ci2 = rng.sample(
        ("GitHub Actions", "GitLab CI", "CircleCI", "Buildkite", "Jenkins", "Azure Pipelines"), 2
    )
    team = rng.randint(3, 9)
    return {
        "name": name, "city": city, "tz": tz, "tz2": tz2, "job": job, "job_line": job_line,
        "partner": rng.choice(PARTNERS),
        "partner_job": rng.choice(("nurse", "teacher", "architect", "chef", "lawyer", "pharmacist", "carpenter")),
        "pet": pet, "species": species, "breed": breed, "Pron": pron.title(), "pet2": pet2, "breed2": breed2,
        "machine": machine, "machine2": machine2, "editor": editor, "editor2": editor2, "col": col, "col2": col2,
        "mgr": mgr, "mgr2": mgr2, "proj": rng.choice(PROJECTS), "side": side, "side_desc": side_desc,
        "side_short": side_short, "host_a": host_a, "host_b": host_b, "host_c": host_c, "small_host": small_host,
        "small_host2": small_host2, "db_eng": eng, "db_old": old, "db_new": new, "db_prod": prod,
        "other_city": other_city, "other_city2": other_city2, "ci": ci, "ci2": ci2,
        "team": str(team), "team2": str(team + rng.randint(6, 12)),
        "budget": rng.choice(("$15", "$25", "$40", "$60", "€30", "£20")),
        "big_budget": rng.choice(("$8k", "$12k", "€15k", "$20k")),
        "hobby_month": rng.choice(("April", "May", "September", "October", "November")),
    }  # fmt: skip


def conversation(i: int, name: str) -> Conversation:
    rng = random.Random(SEED * 100 + i)
    n = rng.randint(8, 14)
    dates = make_dates(rng, n)
    ctx = Ctx(rng=rng, p=make_profile(rng, name), dates=dates, stack=rng.choice(STACKS))
    ctx.scripted = [[] for _ in range(n)]
    ctx.brief = [False] * n
    plan(ctx)
    conv = Conversation(
        sample_id=f"help-{i:02d}", split="dev" if i % 2 else "test", speaker_a=name, speaker_b=BOT
    )
    assemble(ctx, conv)
    return conv


def generate() -> list[Conversation]:
    names = random.Random(SEED).sample(NAMES, N_CONVERSATIONS)
    return [conversation(i, names[i - 1]) for i in range(1, N_CONVERSATIONS + 1)]
