"""The knobs of hybrid recall's ranking (pipeline/recall/hybrid.py), with what each measured."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pipeline.core.config import Settings


@dataclass(frozen=True, slots=True)
class RecallTuning:
    """Knobs of the ranking. A part stays only when it helps at least two evaluation sets and costs none
    more than 0.005 R@10, measured through the pipeline on all of them (issue 45: LoCoMo, a LongMemEval
    sample, the generated sets, Chinese and English; the table and the named exceptions are in
    BENCHMARKS.md, "Issue 45, second round"). The notes below each knob record what it measured; "LoCoMo
    1-5" figures are from before the other sets existed and prove little on their own.

    Ablations at equal weights (R@5 / R@10 change when the rule is removed; LoCoMo, assistant_help,
    friends_chat), which decided the defaults: neighbour spread -0.008 / -0.010, +0.003 / +0.005, +0.007 /
    -0.001 (helps one set), fact boost 0 / 0, 0 / -0.011, 0 / 0, and mixing the session neighbours'
    vectors into a turn's cosine (below re-scoring's R@10) were off and are deleted (issue 45: a part that
    does not pay goes, code and setting); cosine re-scoring -0.027 / -0.018, +0.023 / +0.001, +0.028 /
    +0.026 (helps one: off); the session prior was on (-0.014 / -0.018, +0.018 / -0.003, -0.016 / -0.028)
    until issue 45's second round deleted it (see below); the review's member weight and stand-ins ("members-whole" off: LoCoMo not run,
    +0.020 / +0.020, 0 / +0.005): members rank at their whole weight; since issue 40 a coherent memory
    stands in for the members its text states (see `semantic`).
    """

    dense: bool = True
    lexical: bool = True
    # Min-max fusion of the two lists (each list's scores stretched to [0, 1], a weighted sum): on LoCoMo 1-5 it
    # beat reciprocal rank fusion by ~0.05 R@5 (RRF was kept as a variant until issue 45 deleted it).
    # Equal weights since `hindsight bench quality` measured three shapes of conversation: 0.4 (the LoCoMo
    # 1-5 optimum) against 1.0, R@5 / R@10 on LoCoMo 0.702 / 0.786 vs 0.693 / 0.782, on assistant_help
    # 0.348 / 0.438 vs 0.455 / 0.562, on friends_chat 0.416 / 0.500 vs 0.438 / 0.530. MiniLM is the weaker
    # signal on LoCoMo's long polished turns and the stronger one on paraphrased questions about help
    # conversations and short chat; neither weight is knowable in advance, so neither side is favoured.
    # Measured and not kept (2026-12-04, through the pipeline, R@5 / R@10 against the default): "absolute"
    # fusion, the sum of each retriever's own score (cosine + BM25 share of the query's ceiling, no
    # stretching), LoCoMo 0.609 / 0.690 against 0.677 / 0.768, assistant_help 0.509 / 0.618 against
    # 0.539 / 0.623 (offline over raw turns it had looked better: 0.659 / 0.580 / 0.474 R@10 against
    # min-max's 0.676 / 0.505 / 0.469). z-score and Qdrant-style distribution-based fusion, offline: no
    # better than min-max on any set. Every fixed fusion trades LoCoMo (where BM25 is the stronger list)
    # against assistant_help (where MiniLM is): what would lift both is a better representation.
    dense_weight: float = 1.0
    lexical_weight: float = 1.0
    # False: the embedding model reads English only (EmbeddingSettings.reads_cjk), so a query written mostly
    # in Chinese, Japanese or Korean (`core.scripts.mostly_cjk`) is ranked by the lexical list alone when it
    # has any match: MiniLM's vector of such a query ranks at random, and min-max fusion gave its top
    # cosine full weight ("瑜伽课" ranked a recipe above the yoga class the lexical side found).
    dense_reads_cjk: bool = False
    # Deleted by issue 45's second round (code and setting): "lexical confidence", the lexical list's
    # weight times (share of the query its best match covers) ** 0.25. R@10 it made, 2026-12-06 through the
    # pipeline: LoCoMo -0.011 (R@5 -0.029), LongMemEval 0 (R@5 -0.023), assistant_help +0.042, friends_chat
    # +0.012, bilingual_en +0.006: it helped the sets this project generated and cost the two it did not.
    # From each retriever; each list is min-maxed over its own `candidates`. 100 measured and not taken
    # (2026-12-06, BENCHMARKS.md "issue45-depth"): offline, the fusion alone, +0.021 R@10 on 48 LongMemEval
    # questions nobody read (one question) and 0 to +0.017 elsewhere. Through the pipeline, where passages
    # and semantic memories share the lists: assistant_help -0.019, bilingual_en -0.006, LoCoMo +0.010.
    candidates: int = 50
    # A long turn's passage counts for the turn at its cosine less this (`ranking.passage_cosine`). Taking
    # the best of a reply's many windows at face value lifted long replies over the short turns that held
    # the answer: dense-only R@10 on assistant_help (11,579 passages) 0.667 over main vectors alone, 0.625
    # with passages at face value, 0.673 at 0.1, 0.665 at 0.05. The expected best of n unrelated windows
    # (σ√(2 ln n), σ = 0.076, MiniLM's median spread per query) gave 0.663, but at 149 windows it subtracts
    # 0.25 and loses a fact deep in a 60 KB reply to a short distractor 0.13 below it (tests/integration/
    # test_long_turns.py). Tuned on assistant_help alone: LoCoMo and friends_chat hold almost no long turns.
    passage_discount: float = 0.1
    # LoCoMo 1-5, the 124 questions naming a time: boost 2.0 with a 3-day lag and 200 candidates took
    # R@5 / R@10 from 0.706 / 0.746 to 0.730 / 0.794 (1.5 / no lag / 50: the previous defaults).
    window_boost: float = 2.0
    # What happened in a window is often told later ("yesterday I went bowling"): a turn counts as in the
    # window up to this many days after its end (0, 3, 7, 14 measured; 3 best).
    window_lag_days: float = 3.0
    # With a time window, this many lexical candidates (0: `candidates`), so that the turns of that time
    # which share few of the query's words still reach the window boost (100: R@10 -0.024, 400: same).
    window_candidates: int = 200
    # Measured and not kept (LoCoMo 1-5, R@5 / R@10 from 0.723 / 0.796): window_boost 3.0, 0.724 / 0.796;
    # the words naming the window left out of the lexical query ("on March 16, 2022": a turn that says
    # "March" is not therefore from March), 0.723 / 0.797, held out 0.699 / 0.776 -> 0.696 / 0.775.
    # History mode only; superseded ones are dropped otherwise, except for a question about the previous value
    # or about change, which gets them back flagged and not pushed down (hybrid.recall, issue 46).
    superseded_factor: float = 0.5
    # Semantic memories among the results (issue 40: on). Review writes a memory only when its members are
    # about one subject (a fact chain, restated requests, a cosine cluster with a term in every member) and
    # records which members its text states; recall returns coherent memories only, each standing in for
    # the members it states (`stand_in`). False: turns only (HINDSIGHT_RECALL__SEMANTIC=false); review still
    # builds the memories (/v1/memories, the inspector). Before issue 40 they were off: a memory built by
    # cosine alone stood beside its members and took result slots from the turns that held the answer
    # (R@5 / R@10 without them: LoCoMo +0.006 / +0.006, assistant_help -0.007 / +0.014, friends_chat
    # +0.001 / +0.011). `bench quality --variant no-semantic` measures the switch with the current review.
    # Measured with issue 40's review (2026-12-05, through the pipeline, R@5 / R@10, tuned / held-out halves):
    # LoCoMo on 0.634 / 0.743 and 0.588 / 0.713, off 0.670 / 0.781 and 0.618 / 0.725 (all: -0.033 / -0.025);
    # locomo_speakers on 0.663 / 0.759 and 0.644 / 0.743, off 0.687 / 0.782 and 0.653 / 0.753 (all: -0.017 /
    # -0.017), all of it the cosine clusters' memories: `semantic_methods` leaves those out (BENCHMARKS.md,
    # "Semantic memories in recall").
    semantic: bool = True
    # Only memories whose text review wrote one of these ways (None: all). Restated requests, fact chains and
    # LLM summaries of them: a cosine cluster's extractive text, even with a term in every member, is left
    # out. LoCoMo 2026-12-05, R@5 / R@10 over all questions (reused ingest, one run): memories off 0.646 /
    # 0.753, these kinds only 0.643 / 0.753, cosine clusters too 0.613 / 0.728 (`--variant
    # semantic-cosine-too`): the whole cost of memories on LoCoMo was the cosine clusters'.
    semantic_methods: tuple[str, ...] | None = ("restated", "template", "llm")
    stand_in: bool = True  # a semantic memory hides its members from the list
    # A question about what the user asked of the assistant ("How long should my answers be?", "用什么语言
    # 回复？": restatements.asked_subjects) gets the memory of restated requests on that subject first, when
    # it was recalled at all (hits.subject_first): review built it, found it coherent and named its subject
    # (issue 40); it stands in for the turns it states, so it costs the list one slot. No multiplier to tune.
    # `bench quality --variant no-subject-first`.
    subject_first: bool = True
    # A memory folded from more turns than this is a topic rather than a statement: it keeps its own rank
    # and its members keep theirs (on LoCoMo, rules-only review builds some 300-turn clusters). 12 -> 8,
    # LoCoMo 1-5 with speaker_boost 1.3: R@5 / R@10 0.735 / 0.811 -> 0.738 / 0.813 (held out 0.723 /
    # 0.796 -> 0.724 / 0.796; 20: 0.720 / 0.799 all conversations at speaker_boost 1.2).
    # Issue 40: a memory stands in only for the members whose words its text states (review's
    # `semantic_members.stated`), so the bound guards against a topic-sized memory only: restated requests
    # and fact chains hold 2 - 6 turns. (Before: 0, no memory stood in; 8 before that.)
    stand_in_max: int = 12
    # Review folded a member at this weight before ReviewSettings.member_weight became 1.0 (members keep
    # theirs); a member still at it ranks with its own weight back whenever its memory does not stand in
    # for it (LoCoMo: 2,150 turns sit in memories of more than 12 members).
    member_weight: float = 0.5
    unfold_big: bool = True
    # Deleted by issue 45 (code and setting): a session prior, where each candidate gained a quarter of the
    # best relevance among the other candidates of its session. R@10 without it, 2026-12-06 through the
    # pipeline: friends_chat -0.035, bilingual_en -0.020, bilingual_cross -0.009, but bilingual_zh +0.049,
    # restated +0.025, assistant_help +0.023, LongMemEval (12 questions) +0.058: it cost four shapes more
    # than 0.005. A conversation's topic is a prior only where sessions hold one topic each.
    # Every candidate gets a cosine: the vector search's 50 hits have theirs, and the lexical candidates
    # (up to `dense_lexical`) get one from the embeddings the lexicon holds (Lexicon(vectors=True); else
    # one SELECT of them). Before, a lexical candidate outside the vector search's 50 counted 0 on the dense
    # side, however close it was. Fusion then min-max-normalises the dense list over all of them.
    # LoCoMo 1-5: R@5 / R@10 0.723 / 0.796 -> 0.727 / 0.799, held out 0.699 / 0.776 ->
    # 0.698 / 0.778 (at dense_weight 0.3, before the session prior; 0.5: 0.729 / 0.799 but held-out R@5
    # 0.690; 0.2: 0.720 / 0.797).
    # With the final defaults (`--variant no-rescore`): 0.726 / 0.798 without it, 0.726 / 0.805 with it
    # (held out 0.698 / 0.785 -> 0.708 / 0.787).
    dense_rescore: bool = False  # off: see the class note
    dense_lexical: int = 200
    # A query naming exactly one of the people who spoke in its candidates favours what that person said
    # over what others said to or about them (LoCoMo: 83% of the evidence of such questions). LoCoMo 1-5,
    # with the spread above: R@5 / R@10 0.715 / 0.791 -> 0.722 / 0.795 (1.1: 0.722 / 0.794; 1.3: 0.725 /
    # 0.798, but adversarial questions, which name the wrong person on purpose, lose more). Re-measured
    # with the final pipeline (novelty knee 0.1, dense_rescore, session prior), 1.2 -> 1.3: 0.731 / 0.807
    # -> 0.735 / 0.811 (adversarial 0.821 / 0.911 -> 0.806 / 0.907), held out 0.716 / 0.793 -> 0.723 /
    # 0.796; 1.4: 0.731 / 0.810; 1.5: 0.729 / 0.810.
    # The same boost favours the side a question names by its role ("the user", "the assistant":
    # hybrid.named_role; unless the question also names a person): an agent asks about "the user". Offline
    # over raw turns (2026-12-04, the floors' rankers times the boost, not tuned: 1.3 as above),
    # assistant_help R@5 / R@10 dense 0.530 / 0.667 -> 0.575 / 0.721, simple hybrid 0.473 / 0.551 ->
    # 0.515 / 0.619; LoCoMo and friends_chat have no roles to name and are unchanged by it. Through the
    # pipeline (`bench quality --variant no-speaker`, 2026-12-04): assistant_help 0.568 / 0.649 -> 0.596 /
    # 0.682 with it; LoCoMo with metadata.speaker (`locomo_speakers`), where the named person applies, -0.032
    # / -0.022 without the rule; as a plain export (no names known) it cannot apply.
    speaker_boost: float = 1.3
    # How much decay counts in the ranking: a memory's weight is base_weight x decay (decay = weight /
    # base_weight, DESIGN §2) and ranks as base_weight x decay ** this. The base (what a person set,
    # review's member weight) always counts whole. 1 is DESIGN §2's relevance x weight. 0: decay decides
    # what goes to cold storage, not the order of what is still hot. `hindsight bench month` (30 days of
    # 1,000 turns, LoCoMo recall@10 review / raw): 1: 0.654 / 0.774 (ratio 0.845); 0.5: 0.924; 0.25:
    # 0.942; 0: 0.738, ratio 0.954. At 1, a relevant fact left untouched for three weeks (weight 0.35)
    # ranked below a fresh turn a third as relevant; what is current is what the fact chains say, not
    # what is recent. Settings: `recall.decay_exponent`.
    # Issue 40 looked for an exponent that helps the current-versus-stale case (`python -m
    # bench.decay_ranking`, the simple hybrid floor times decay ** e, every turn idle since it was said): at
    # 0.1 current-first on the update set rose 0.422 -> 0.605 while LoCoMo R@10 fell 0.676 -> 0.482 and
    # friends_chat 0.469 -> 0.406; none exists on this grid (0.1, 0.25, 0.5, 1). Fact chains and supersession
    # links (issue 39) decide what is current; decay stays out of the order.
    decay_exponent: float = 0.0
    # Knowledge updates (issue 39, pipeline/recall/updates_order.py): a statement a newer one superseded
    # ranks below it, at `update_demotion` of its successor's score, and its successor at least as high as
    # it ranked; among the first `update_window` hits, a pair that review has not seen yet (one side waits
    # for its review) is ordered by the same rules. `hindsight bench updates`.
    updates: bool = True
    update_demotion: float = 0.5
    update_window: int = 20
    # For a question that asks a value (pipeline/recall/value_order.py, issue 46): the hits among the first
    # k that state it for the question's subject and holder are reordered among their own slots, newest
    # first (oldest for "previous", time order for "how has it changed"). It replaced issue 39's
    # `update_order_reviewed`, `update_answer_ratio` and `update_answer_cosine` (looser pairwise rules and
    # a vector cosine). It never changes which k hits are returned. `bench updates --longmemeval`.
    value_order: bool = True
    # ... and the wanted statement (the newest for the present) takes the first place of all, not only the
    # first of the slots the statements held (issue 46: "the newest statement ranks first"). LongMemEval's
    # knowledge-update questions, offline over the simple hybrid's first 10 (`bench updates --longmemeval
    # --floors-only --full`, 2026-12-06): wanted top-1 on the test half (29 questions, never read) 0.207 ->
    # 0.345 (dev 0.387 -> 0.516; BM25 0.310, the hybrid 0.172), wanted-first unchanged (0.621). R@10 cannot
    # change; `--variant no-value-lead` measures R@5.
    value_lead: bool = True


DEFAULT_TUNING = RecallTuning()


def configured(settings: Settings, base: RecallTuning = DEFAULT_TUNING) -> RecallTuning:
    """`base` as the settings change it: what the embedding model reads and the operator's recall switches.
    The API ranks with this, and so must every bench that stands in for it: a bench that ranked with
    DEFAULT_TUNING under a model that reads Chinese scored its Chinese questions by BM25 alone."""
    tuning = base
    if settings.recall.decay_exponent is not None:
        tuning = replace(tuning, decay_exponent=settings.recall.decay_exponent)
    if settings.embedding.reads_cjk:
        tuning = replace(tuning, dense_reads_cjk=True)
    if settings.recall.semantic is not None:
        tuning = replace(tuning, semantic=settings.recall.semantic)
    return tuning


def rebased(variant: RecallTuning, base: RecallTuning) -> RecallTuning:
    """`base` with the knobs `variant` sets apart from DEFAULT_TUNING (a bench's `--variant` over the tuning
    the API actually ranks with)."""
    changed = {
        name: getattr(variant, name)
        for name in RecallTuning.__dataclass_fields__
        if getattr(variant, name) != getattr(DEFAULT_TUNING, name)
    }
    return replace(base, **changed)
