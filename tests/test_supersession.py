"""Issue 18: no identity by title; supersession only from an explicit link; fresher facts first.

Documents sharing a title are separate memories. A ``supersedes:`` frontmatter line names
the memory a document replaces (by relative path, or by name when exactly one other
document has it); the named one then ranks after its successor and is never fast-delivered.
Without a link, a newer memory about the same subject overtakes an older one it nearly
matches, and a bounded freshness prior decides near-ties.
"""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from memrecall.engine.scoring.features import link_target
from memrecall.engine.scoring.fielded import FieldedIndex, Params
from memrecall.engine.scoring.judgement import Judgement, Thresholds
from memrecall.engine.scoring.turn_model import TurnModel
from memrecall.events.documents import MemoryDocument
from memrecall.sources.frontmatter import ParsedTopic, parse_topic
from memrecall.sources.scanner import MemoryTree, scan_tree
from memrecall.tooling.evaluation import load_corpus
from tests.factories import filler, memory

OPEN = Thresholds(0.0, 0.0, 0.0, 0.0)
DAY = 86_400.0
TALK = TurnModel({}, bias=50.0, cutoff=0.5)
"""Reads every turn as small talk."""
WORK = TurnModel({}, bias=-50.0, cutoff=0.5)
"""Reads no turn as small talk."""


def note(
    name: str,
    body: str,
    *,
    title: str = "Meeting notes",
    description: str = "",
    days: float = 0.0,
    supersedes: str = "",
) -> MemoryDocument:
    """A memory at ``<name>.md`` written ``days`` after the epoch."""
    document = memory(title, description, body, name=name, mtime=days * DAY)
    return msgspec.structs.replace(document, supersedes=supersedes)


MEETINGS = [
    note("payments", "Refund webhooks move to the refunds-v2 queue; Aisha owns it.", days=30),
    note("mobile", "The iOS 5.2 submission moves to 14 July; Android ships first.", days=100),
    note("search", "The Elasticsearch 8 upgrade is postponed to the third quarter.", days=160),
]


def test_equal_titles_are_separate_memories() -> None:
    index = FieldedIndex.of(MEETINGS, thresholds=OPEN)
    query = "meeting notes about refund webhooks"
    assert index.rank(query, 5)[0] == 0  # the oldest, which holds the answer
    assert dict(index.judge(query))[0] is Judgement.STRONG


def test_the_supersedes_line_is_parsed_and_scanned(tmp_path: Path) -> None:
    text = "---\ntype: project\nname: On-call\nsupersedes: ./oncall/q1.md \n---\nMarco, Dana"
    parsed = parse_topic(text)
    assert isinstance(parsed, ParsedTopic)
    assert parsed.supersedes == "./oncall/q1.md"
    plain = parse_topic("---\ntype: project\nname: On-call\n---\nMarco")
    assert isinstance(plain, ParsedTopic)
    assert plain.supersedes == ""
    (tmp_path / "q3.md").write_text(text, encoding="utf-8")
    scanned = scan_tree(MemoryTree.of(project=str(tmp_path)))
    assert [d.supersedes for d in scanned.documents] == ["./oncall/q1.md"]


@pytest.mark.parametrize(
    ("written", "names"),
    [("./oncall/Q1.md", "oncall/q1"), ("On-call rotation ", "on-call rotation")],
)
def test_link_targets_compare_loosely(written: str, names: str) -> None:
    assert link_target(written) == names


OLD = note(
    "oncall/q1", "On-call order: Priya, Marco, Dana. Handoff Monday.", title="On-call", days=1
)
NEW_BODY = "Yusuf joined; Priya left."


@pytest.mark.parametrize("link", ["oncall/q1.md", "./oncall/q1", "On-call"])
def test_a_linked_older_memory_ranks_after_its_successor_and_is_never_strong(link: str) -> None:
    new = note("oncall/q3", NEW_BODY + " Order and handoff unchanged.", title="Rota", days=2)
    pool = [OLD, msgspec.structs.replace(new, supersedes=link)]
    index = FieldedIndex.of(pool, thresholds=OPEN)
    query = "on-call order and handoff"
    scores = {m.index: m.score for m in index.matches(query)}
    assert scores[0] > scores[1]  # the old one shares more words with the query
    assert index.rank(query, 5) == [1, 0]
    assert dict(index.judge(query))[0] is Judgement.WEAK
    assert index.fast(query) == [1]
    # without the successor in the pool (or when it does not match), the old one stands alone
    assert index.rank(query, 5, exclude={1}) == [0]


@pytest.mark.parametrize(
    "pool",
    [
        # a link that names nothing
        [OLD, note("q3", NEW_BODY + " handoff", title="Rota", days=2, supersedes="gone.md")],
        # a name two other documents share: ambiguous, so no link
        [
            OLD,
            note("other", "Handoff of the on-call laptop.", title="On-call", days=1.5),
            note("q3", NEW_BODY + " handoff", title="Rota", days=2, supersedes="On-call"),
        ],
        # two documents naming each other
        [
            msgspec.structs.replace(OLD, supersedes="q3"),
            note("q3", NEW_BODY + " handoff", title="Rota", days=2, supersedes="oncall/q1"),
        ],
        # a cycle of three links
        [
            msgspec.structs.replace(OLD, supersedes="c"),
            note("q3", NEW_BODY + " handoff", title="Rota", days=2, supersedes="oncall/q1"),
            note("c", "Lunch menu for Friday.", title="Lunch", days=3, supersedes="q3"),
        ],
    ],
    ids=["dangling", "ambiguous-name", "mutual", "cycle"],
)
def test_links_that_name_no_single_document_supersede_nothing(
    pool: list[MemoryDocument],
) -> None:
    index = FieldedIndex.of(pool, thresholds=OPEN, params=Params(subject=2.0))
    query = "on-call order and handoff"
    assert index.rank(query, 5)[0] == 0
    assert dict(index.judge(query))[0] is Judgement.STRONG


LEDGER_OLD = note(
    "ledger-deploy",
    "Run make deploy-ledger from the ops repo, watch the ledger-api dashboards, post in #deploys."
    " Deploy the ledger service to production between 10:00 and 16:00.",
    title="Ledger deploy procedure",
    description="How to deploy the ledger service to production",
    days=0,
)
LEDGER_NEW = note(
    "ledger-canary",
    "make deploy-ledger is retired: merging to main sends ledger-api traffic to a canary"
    " through Argo Rollouts. Still post in #deploys.",
    title="Ledger deploys go through a canary",
    description="Since April the ledger ships with Argo Rollouts",
    days=300,
)
UNRELATED = note(
    "cafeteria",
    "The cafeteria deploys a new ledger of lunch vouchers every quarter.",
    title="Lunch vouchers",
    days=300,
)


def test_a_newer_memory_on_the_same_subject_overtakes_an_older_one() -> None:
    index = FieldedIndex.of([LEDGER_OLD, LEDGER_NEW], thresholds=OPEN)
    query = "ledger deploy procedure: make deploy-ledger and #deploys"
    scores = {m.index: m.score for m in index.matches(query)}
    assert scores[0] > scores[1]
    assert index.rank(query, 5)[:2] == [1, 0]
    assert dict(index.judge(query))[0] is Judgement.WEAK


def test_companions_written_together_are_not_updates() -> None:
    written_together = msgspec.structs.replace(LEDGER_NEW, mtime=LEDGER_OLD.mtime + 2 * DAY)
    index = FieldedIndex.of([LEDGER_OLD, written_together], thresholds=OPEN)
    query = "ledger deploy procedure: make deploy-ledger and #deploys"
    assert index.rank(query, 5)[:2] == [0, 1]
    assert dict(index.judge(query))[0] is Judgement.STRONG


def test_a_newer_memory_on_another_subject_does_not_overtake() -> None:
    index = FieldedIndex.of([LEDGER_OLD, UNRELATED], thresholds=OPEN)
    query = "ledger deploy procedure for production"
    assert index.rank(query, 5)[0] == 0
    assert dict(index.judge(query))[0] is Judgement.STRONG


PAYMENTS_FEB = note(
    "payments-feb",
    "Payments sync, 3 Feb: refund webhooks move from the legacy jobs table to the refunds-v2"
    " queue. Aisha writes the consumer.",
    days=30,
)
PAYMENTS_SEP = note(
    "payments-sep",
    "Payments sync, 22 Sep: the refunds-v2 consumer is live and its lag alerts page the"
    " payments on-call. Aisha handed the consumer to Tomás.",
    days=260,
)


REFUND_POLICY = note(
    "refund-policy",
    "Customers get a refund within 14 days; support issues the refund from the admin page.",
    title="Refund policy",
    days=200,
)


def test_an_older_record_keeps_its_place_when_it_alone_names_what_is_asked() -> None:
    # Two minutes of one meeting: each opens with its date, so the later one records another
    # occasion and does not replace the first (time_rules.stands_in).
    index = FieldedIndex.of([PAYMENTS_FEB, PAYMENTS_SEP, REFUND_POLICY], thresholds=OPEN)
    assert index.same_subject(0, 1)
    asked = "what did we decide in the payments meeting about refund webhooks?"
    assert index.rank(asked, 5)[:2] == [0, 1]
    assert dict(index.judge(asked))[0] is Judgement.STRONG
    # the same pair still puts the newer first when it names the specific thing too
    assert index.rank("payments meeting: who handles the refunds-v2 consumer?", 5)[0] == 1
    # undated, the later note is a version of a standing fact, and answers in its place
    undated = [
        msgspec.structs.replace(d, body=d.body.split(": ", 1)[1])
        for d in (PAYMENTS_FEB, PAYMENTS_SEP)
    ]
    plain = FieldedIndex.of([*undated, REFUND_POLICY], thresholds=OPEN)
    assert plain.same_subject(0, 1)
    assert plain.rank(asked, 5)[:2] == [1, 0]


UPLOAD_OLD = note(
    "upload-old",
    "Merchants upload PDF files of up to 10 MB each, 20 per upload, in the documents tab;"
    " bigger ones go through Sharepoint.",
    title="Merchant portal upload limits",
    days=0,
)
UPLOAD_NEW = note(
    "upload-new",
    "The documents tab of the merchant portal accepts PDF and CSV files up to 25 MB each.",
    title="Document uploads in the merchant portal",
    days=200,
)


def test_a_value_the_asker_remembers_does_not_keep_the_older_note_first() -> None:
    index = FieldedIndex.of([UPLOAD_OLD, UPLOAD_NEW, REFUND_POLICY], thresholds=OPEN)
    assert index.same_subject(0, 1)
    # "10" and "20" are only in the older note: values the asker remembers, what updates change
    asked = "max size of a PDF a merchant can upload in the documents tab? I think 10 MB, 20 a time"
    assert index.rank(asked, 5)[:2] == [1, 0]
    # a word only the older note has: the update still stands in for it (the older follows)
    sharepoint = asked.replace("10 MB, 20", "Sharepoint for bigger ones")
    assert index.rank(sharepoint, 5)[:2] == [1, 0]
    # unless the question names what sets the older note's heading apart ("limits"): it
    # asks about that note, which answers what the newer does not
    named = sharepoint.replace("max size", "upload limits: max size")
    assert index.rank(named, 5)[:2] == [0, 1]


BASE = "kestrel rollout " + " ".join(f"filler{i}" for i in range(20))


def _pair(newer_body: str) -> list[MemoryDocument]:
    """Two unrelated memories a year apart that both answer ``kestrel rollout``."""
    return [
        note("a", BASE, title="Alpha", days=0),
        note("b", newer_body, title="Beta", days=365),
    ]


def test_the_freshness_prior_decides_near_ties_only() -> None:
    params = Params(subject=2.0)  # no same-subject pairs here
    query = "kestrel rollout"
    near = FieldedIndex.of(_pair(BASE + " emu"), thresholds=OPEN, params=params)
    scores = {m.index: m.score for m in near.matches(query)}
    assert 1.0 < scores[0] / scores[1] < 1 + params.freshness / 2  # the older, barely ahead
    assert near.rank(query, 5) == [1, 0]
    longer = BASE + " " + " ".join(f"more{i}" for i in range(12))
    far = FieldedIndex.of(_pair(longer), thresholds=OPEN, params=params)
    far_scores = {m.index: m.score for m in far.matches(query)}
    assert far_scores[0] / far_scores[1] > 1 + params.freshness  # clearly ahead
    assert far.rank(query, 5) == [0, 1]


LEDGER_UNMARKED = note(
    "ledger-canary",
    "Merging to main sends ledger-api traffic to a canary through Argo Rollouts. Post in #deploys.",
    title="Ledger deploys go through a canary",
    description="The ledger ships with Argo Rollouts",
    days=300,
)
ASKED_IN_OLD_WORDS = "how do I deploy the ledger service to production?"


def test_an_update_that_says_so_speaks_for_the_older_note_on_what_it_does_not_repeat() -> None:
    # The older note alone has "service" and "production": without a word of change the
    # newer one does not speak of them, and the older one keeps its place.
    plain = FieldedIndex.of([LEDGER_OLD, LEDGER_UNMARKED], thresholds=OPEN)
    assert plain.rank(ASKED_IN_OLD_WORDS, 5)[:2] == [0, 1]
    assert dict(plain.judge(ASKED_IN_OLD_WORDS))[0] is Judgement.STRONG
    # "make deploy-ledger is retired": the newer note says it changes the older state.
    index = FieldedIndex.of([LEDGER_OLD, LEDGER_NEW], thresholds=OPEN)
    scores = {m.index: m.score for m in index.matches(ASKED_IN_OLD_WORDS)}
    assert scores[0] > 2 * scores[1]
    assert index.rank(ASKED_IN_OLD_WORDS, 5)[:2] == [1, 0]
    assert dict(index.judge(ASKED_IN_OLD_WORDS))[0] is Judgement.WEAK


def test_an_update_still_needs_the_same_subject_and_a_later_date() -> None:
    # written together: companions, not an update
    together = msgspec.structs.replace(LEDGER_NEW, mtime=LEDGER_OLD.mtime + 2 * DAY)
    index = FieldedIndex.of([LEDGER_OLD, together], thresholds=OPEN)
    assert index.rank(ASKED_IN_OLD_WORDS, 5)[:2] == [0, 1]
    # another subject that happens to say "now"
    other = note(
        "lunch",
        "The cafeteria now deploys a new ledger of lunch vouchers every quarter.",
        title="Lunch vouchers",
        days=300,
    )
    index = FieldedIndex.of([LEDGER_OLD, other, *MEETINGS], thresholds=OPEN)
    assert not index.same_subject(0, 1)
    assert index.rank(ASKED_IN_OLD_WORDS, 5)[:2] == [0, 1]


RETRO = note(
    "q2-retro",
    "Quarter retro. Ledger deploys run between 10:00 and 16:00 CET. Invoices move to the"
    " billing service. The on-call rota gains a secondary. Flaky tests get quarantined after"
    " two failures. The search cluster is reindexed every Sunday. Grafana alerts go to"
    " #incidents. Design reviews need two approvers. The mobile release train leaves on"
    " Tuesdays. Vault tokens expire after thirty days. The staging database gets a nightly"
    " snapshot. Customer webhooks retry five times with backoff. Kafka consumers report lag"
    " to the platform dashboard.",
    title="Q2 retrospective",
    days=0,
)
WINDOW = note(
    "ledger-window",
    "Ledger deploys run between 10:00 and 16:00 CET.",
    title="Ledger deploy window",
    days=200,
)


def test_a_broad_note_is_not_an_older_version_of_each_topic_it_touches() -> None:
    # Nearly every word of the short note is in the retro, but the retro is about eight
    # other things too: the overlap is measured against what the two say together
    # (the share of the smaller note's words alone would make them one subject).
    index = FieldedIndex.of([RETRO, WINDOW, LEDGER_OLD, LEDGER_NEW, *MEETINGS])
    assert not index.same_subject(0, 1)
    assert index.same_subject(2, 3)
    asked = "retro: when do ledger deploys run, and who approves design reviews?"
    assert index.rank(asked, 5)[0] == 0
    assert dict(index.judge(asked))[0] is Judgement.STRONG


def _older_version(newer: str) -> str:
    """The corpus names the two notes of an update pair ``X-old``/``X-new`` (or the
    on-call rota's quarters ``-q1``/``-q3``)."""
    for old, new in (("-old", "-new"), ("-q1", "-q3")):
        if newer.endswith(new):
            return newer[: -len(new)] + old
    raise AssertionError(f"no older version named for {newer}")


def test_every_update_pair_of_the_corpus_is_one_subject_with_a_margin() -> None:
    """What :attr:`Params.subject` was set from: each pair the recency slice labels reaches
    0.14 (the threshold is 0.12)."""
    corpus = load_corpus(Path(__file__).parent / "fixtures" / "recall-eval.json")
    position = {name: i for i, name in enumerate(corpus.ids)}
    tight = FieldedIndex.of(corpus.documents, params=Params(subject=0.14))
    pairs = {
        (position[_older_version(c.top)], position[c.top])
        for c in corpus.cases
        if c.slice == "recency" and c.top is not None
    }
    assert len(pairs) >= 12
    assert all(tight.same_subject(old, new) for old, new in pairs)
    assert Params().subject < 0.14


CARD_OLD = note(
    "card-limit",
    "The company card pays up to 500 EUR per purchase; larger amounts need your manager's"
    " approval first. Paper receipts go to accounting at the end of the month.",
    title="Company card",
    description="500 EUR per purchase",
    days=0,
)
CARD_NEW = note(
    "card-expenses",
    "Each company card has a monthly limit of 1,500 EUR with no cap per purchase. Upload"
    " the receipt photo to the expense app within seven days.",
    title="Spending with the company card",
    days=200,
)
ASKED_ABOUT_THE_LIMIT = "company card: how much per purchase?"


def test_a_fact_a_newer_note_may_have_changed_is_never_fast_delivered_alone() -> None:
    # Same-subject overtaking off (no pair is similar enough), so that the older note
    # ranks first: only the weaker "may be its update" bar is left.
    no_pairs = Params(subject=1.0)
    index = FieldedIndex.of([CARD_OLD, CARD_NEW, *MEETINGS], params=no_pairs)
    assert index.similarity(0, 1) >= no_pairs.doubt
    assert index.rank(ASKED_ABOUT_THE_LIMIT, 5)[:2] == [0, 1]
    first = index.matches(ASKED_ABOUT_THE_LIMIT)[0]
    assert (first.index, first.judgement, first.newer) == (0, Judgement.STRONG, 1)
    assert index.fast(ASKED_ABOUT_THE_LIMIT) == [0, 1]
    # without the doubt, the older note goes in alone
    trusting = FieldedIndex.of(
        [CARD_OLD, CARD_NEW, *MEETINGS], params=Params(subject=1.0, doubt=1.0)
    )
    assert trusting.fast(ASKED_ABOUT_THE_LIMIT) == [0]
    # written together, the two are companions, not an update
    together = msgspec.structs.replace(CARD_NEW, mtime=CARD_OLD.mtime + DAY)
    index = FieldedIndex.of([CARD_OLD, together, *MEETINGS], params=no_pairs)
    assert index.fast(ASKED_ABOUT_THE_LIMIT) == [0]


def test_an_older_note_asked_about_in_its_own_words_goes_in_beside_its_update() -> None:
    # The question names what only the older note says (the user still holds the old
    # fact), so the older note keeps its place; as its update is about the same subject,
    # it goes in beside it, never alone, although the update does not repeat the words
    # asked about.
    index = FieldedIndex.of([PAYMENTS_FEB, PAYMENTS_SEP, REFUND_POLICY])
    asked = "what did we decide in the payments meeting about refund webhooks?"
    assert index.same_subject(0, 1)
    assert index.rank(asked, 5)[:2] == [0, 1]
    assert index.fast(asked) == [0, 1]
    # merely alike (not one subject), the newer note must answer what the older answers:
    # here it does not, and the older one goes in alone as before
    alike = FieldedIndex.of([PAYMENTS_FEB, PAYMENTS_SEP, REFUND_POLICY], params=Params(subject=1.0))
    assert not alike.same_subject(0, 1)
    assert alike.matches(asked)[0].newer == 1
    assert alike.fast(asked) == [0]


STAGING_OLD = note(
    "staging-db",
    "Staging Postgres is pg-staging-01.internal:5432, database ledger_staging; connect through"
    " bastion-eu with your LDAP password; run alembic migrations from the ledger repo README.",
    title="Staging database",
    days=10,
)
STAGING_NEW = note(
    "staging-db-2026",
    "Staging Postgres: pg-staging-02.internal:6432 behind PgBouncer, database ledger_staging;"
    " connect through the office VPN.",
    title="Staging database",
    days=200,
)
_WORDS = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike".split()
STALE_PASTE = "\n".join(
    [
        "alembic upgrade hangs against staging, DSN from the old README:",
        "postgresql://ledger@pg-staging-01.internal:5432/ledger_staging via bastion-eu",
        *(
            f"INFO worker-{w} step {w}{i} {w}ing {_WORDS[(i + 3) % len(_WORDS)]}ed"
            for i, w in enumerate(_WORDS * 2)
        ),
        "ERROR could not connect to pg-staging-01.internal port 5432: timeout",
        "WARN bastion-eu ssh: LDAP password rejected",
        "alembic migrations from the ledger repo README keep failing, what is wrong?",
    ]
)


def test_a_paste_showing_the_old_state_gets_the_newer_note_first_and_alone() -> None:
    # The paste quotes the older note's host, port and bastion (the user follows an old
    # README), so it shares more words with the older note; the newer same-subject note
    # says what holds now, and is the one a paste needs.
    index = FieldedIndex.of([STAGING_OLD, STAGING_NEW, *MEETINGS])
    assert index.same_subject(0, 1)
    assert index.query_terms(STALE_PASTE)[2]  # a paste
    assert index.rank(STALE_PASTE, 5)[:2] == [1, 0]
    judged = dict(index.judge(STALE_PASTE))
    # it stands out from everything but the older version it replaces
    assert (judged[1], judged[0]) == (Judgement.STRONG, Judgement.WEAK)
    assert index.fast(STALE_PASTE) == [1]


@pytest.mark.parametrize(
    "asked",
    [
        "do we still connect to staging Postgres through bastion-eu with the LDAP password?",
        "verbinden wir uns immer noch über bastion-eu mit dem LDAP-Passwort mit Staging Postgres?",
        "staging Postgresにはまだbastion-euとLDAPのパスワードで接続するの？",
    ],
)
def test_a_question_whether_the_old_state_still_holds_gets_the_newer_note_first(
    asked: str,
) -> None:
    # Asked in the older note's words, but about the present ("still", "immer noch",
    # "まだ"): the newer note on the same subject is the answer.
    index = FieldedIndex.of([STAGING_OLD, STAGING_NEW, *MEETINGS])
    assert index.rank(asked, 5)[:2] == [1, 0]


def test_the_same_question_without_asking_about_now_gets_the_update_first_too() -> None:
    # Asked in the older note's words (the user holds the old fact) without "still": the
    # update of a standing fact answers in its place all the same (time_rules.stands_in).
    index = FieldedIndex.of([STAGING_OLD, STAGING_NEW, *MEETINGS])
    asked = "how do we connect to staging Postgres through bastion-eu with the LDAP password?"
    assert index.rank(asked, 5)[:2] == [1, 0]
    assert index.fast(asked) == [1, 0]  # the fast result too: the update, then its note


KIT_OLD = note(
    "first-aid",
    "The first aid kit hangs in the corridor next to the kitchen on the second floor, below"
    " the fire extinguisher and the evacuation plan.",
    title="First aid",
    days=10,
)
KIT_NEW = note(
    "first-aid-2026",
    "First aid: the kit is at reception. First aiders this year: Ali and Mei. Training dates"
    " are posted in the HR portal each spring and autumn; sign up with your manager. The"
    " evacuation plan for the second floor is unchanged.",
    title="First aid",
    days=200,
)


def test_asked_whether_it_still_holds_an_update_that_repeats_little_still_answers() -> None:
    # The update does not repeat where the kit used to hang, so it scores well under the
    # older note (under Params.subject_ratio of it); asked whether the old place still
    # holds, the newer note on the subject is the answer all the same, and the older one
    # never goes into the prompt alone.
    index = FieldedIndex.of([KIT_OLD, KIT_NEW, *MEETINGS])
    asked = (
        "does the first aid kit still hang in the corridor next to the kitchen, below the"
        " fire extinguisher?"
    )
    first, second = index.matches(asked)[:2]
    assert (first.index, second.index) == (1, 0)
    assert first.score < index.params.subject_ratio * second.score
    assert index.same_subject(0, 1)
    assert 0 not in index.fast(asked)


PARKING_OLD = note(
    "parking-old",
    "Staff parking for employees is in the Building B garage; pick up the yearly windscreen"
    " sticker at the front desk.",
    title="Staff parking for employees: Building B",
    description="Building B garage",
    days=0,
)
PARKING_NEW = note(
    "parking-new",
    "Staff parking for employees is in the Mill Street garage; spots are booked per day in"
    " the Parkly app.",
    title="Staff parking for employees: Mill Street",
    description="Mill Street garage",
    days=200,
)
PARKING_MOVED = note(
    "parking-moved",
    "Staff parking for employees moved to the Mill Street garage; spots are booked per day in"
    " the Parkly app.",
    title="Staff parking for employees: Mill Street",
    description="Mill Street garage",
    days=200,
)


def test_an_update_follows_its_note_into_the_ranking_even_unmatched() -> None:
    # The question names what sets the older note's title apart ("Building B"): it asks
    # about that one, and the update follows it; asked without it, the update answers in
    # its place (time_rules.stands_in)
    pool = [PARKING_OLD, PARKING_NEW, REFUND_POLICY]
    index = FieldedIndex.of(pool, thresholds=OPEN)
    assert index.same_subject(0, 1)
    assert index.rank("where do I pick up the windscreen sticker?", 5) == [1, 0]
    asked = "where do I pick up the windscreen sticker for Building B?"
    assert [m.index for m in index.matches(asked)] == [0]  # no query word in the newer note
    assert index.rank(asked, 5) == [0, 1]
    assert index.rank_and_fast(asked, 5)[0] == [0, 1]
    assert index.rank(asked, 1) == [0]  # within the limit
    assert index.rank(asked, 5, exclude={1}) == [0]  # already delivered
    assert 1 not in index.fast(asked)  # the fast path delivers what the query matches
    # written together, or on another subject: no update
    together = msgspec.structs.replace(PARKING_NEW, mtime=PARKING_OLD.mtime + DAY)
    assert FieldedIndex.of([PARKING_OLD, together], thresholds=OPEN).rank(asked, 5) == [0]
    assert FieldedIndex.of([REFUND_POLICY, PARKING_NEW], thresholds=OPEN).rank(
        "refund within 14 days", 5
    ) == [0]


def test_an_update_that_says_it_changed_things_goes_before_its_note() -> None:
    # Asked in the words of what the asker last knew, the older note is all the words
    # find; the newer one says the parking *moved*: it answers first, the older follows.
    pool = [PARKING_OLD, PARKING_MOVED, REFUND_POLICY]
    index = FieldedIndex.of(pool, thresholds=OPEN)
    assert index.same_subject(0, 1)
    assert index.says_change(1)
    assert not index.says_change(0)
    assert not FieldedIndex.of([PARKING_OLD, PARKING_NEW], thresholds=OPEN).says_change(1)
    asked = "where do I pick up the windscreen sticker?"
    assert [m.index for m in index.matches(asked)] == [0]
    assert index.rank(asked, 5) == [1, 0]
    assert index.rank_and_fast(asked, 5)[0] == [1, 0]
    assert index.rank(asked, 1) == [1]  # the update takes the one place
    assert index.rank(asked, 5, exclude={1}) == [0]  # already delivered
    # the fast path delivers only what the words match: none of them is in the update
    assert index.terms_matching(asked, 1) == 0
    assert index.fast(asked) == [0]
    # asked with a word of the update's too ("garage"), the fast result takes it, before
    # its note, though the words leave it out of the fast result; unless delivered
    garage = "where do I pick up the yearly windscreen sticker at the front desk for the garage?"
    assert index.terms_matching(garage, 1) > 0
    assert 1 not in index._fast_of(index._ranked(garage, (), 2, floor=True), garage)
    assert index.fast(garage) == [1, 0]
    assert index.rank_and_fast(garage, 5)[1] == [1, 0]
    assert index.fast(garage, exclude={1}) == [0]
    # written together, it says nothing about the older note: no update
    together = msgspec.structs.replace(PARKING_MOVED, mtime=PARKING_OLD.mtime + DAY)
    assert FieldedIndex.of([PARKING_OLD, together], thresholds=OPEN).rank(asked, 5) == [0]


def test_an_update_that_says_so_goes_first_where_the_words_rank_it_far_below() -> None:
    # The question repeats the older note's words and shares one general word with the
    # update ("staff"): the words rank the update second, far under the older note (under
    # Params.subject_ratio of it, so the fresher-facts rule leaves the pair as it is). It
    # names what sets the older note's heading apart ("Building B"), so an update stands in
    # for it only where it says it moved things: that one goes first, the other second.
    asked = "where do staff pick up the yearly windscreen sticker at the front desk in Building B?"
    for newer, first_two in ((PARKING_MOVED, [1, 0]), (PARKING_NEW, [0, 1])):
        index = FieldedIndex.of([PARKING_OLD, newer, REFUND_POLICY], thresholds=OPEN)
        older_match, newer_match = index.matches(asked)[:2]
        assert (older_match.index, newer_match.index) == (0, 1)
        assert newer_match.score < index.params.subject_ratio * older_match.score
        assert index.rank(asked, 5)[:2] == first_two
        assert index.rank_and_fast(asked, 5)[0][:2] == first_two
    assert index.rank(asked, 5, exclude={1}) == [0]


BETA_OLD = note(
    "beta-old",
    "Every merge uploads the iOS and Android beta builds; testers join the beta group and"
    " install the builds from the tester app.",
    title="Beta builds for testers",
    description="Test builds go out through the distribution app",
    days=0,
)
BETA_NEW = note(
    "beta-new",
    "iOS betas now go through TestFlight, Android betas through the Play test track; the"
    " pipeline uploads both after every merge.",
    title="Beta builds",
    days=200,
)


def test_what_a_turn_is_read_as_never_puts_an_older_fact_first() -> None:
    # The older note matches more of the question (strong); the newer one, on the same
    # subject, less (weak), and the fresher-first rule ranks it above the older one. Read
    # as small talk, the turn leaves weak memories out: the newer one comes back only as
    # the older one's update, and goes before it, as it ranked before the reading.
    pool = [BETA_OLD, BETA_NEW, *filler(20)]
    strong_from = Thresholds(0.0, 0.0, 0.4, 0.0)
    asked = "how do I install the iOS beta builds as a tester"
    work = FieldedIndex.of(pool, thresholds=strong_from, turns=WORK)
    talk = FieldedIndex.of(pool, thresholds=strong_from, turns=TALK)
    assert work.same_subject(0, 1)
    assert [(m.index, m.judgement, m.outranked) for m in work.matches(asked)[:2]] == [
        (1, Judgement.WEAK, False),
        (0, Judgement.WEAK, True),  # an older version is never strong
    ]
    assert work.rank(asked, 5) == [1, 0]
    assert [(m.index, m.judgement) for m in talk.matches(asked)[:2]] == [
        (1, Judgement.NONE),  # weak on small talk: left out
        (0, Judgement.WEAK),  # strong by the thresholds, then an older version
    ]
    assert talk.rank(asked, 5) == [1, 0]
    assert talk.rank_and_fast(asked, 5) == ([1, 0], [])
    assert talk.rank(asked, 5, exclude={1}) == [0]  # already delivered
    # not outranked (asked in the older note's own words): the update still goes first, as
    # it says it changed things ("now"); one that does not say so follows its note
    own_words = "how do testers join the beta group and install from the tester app"
    assert [m.outranked for m in talk.matches(own_words)[:1]] == [False]
    assert talk.says_change(1)
    assert talk.rank(own_words, 5)[:2] == [1, 0]
