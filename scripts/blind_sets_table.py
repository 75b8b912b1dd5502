"""The blind sets of issue 18 (tests/fixtures/blind/), measured as the tests measure them.

    uv run python scripts/blind_sets_table.py

Prints, for ``fielded``, each blind slice's Recall@5, top-1, small-talk silence, fast precision
and fast outdated (each set joined to the corpus as ``tests/test_blind_sets.py`` joins it), and
the fast result's precision and hit over every set as tested; then the small talk of every set
pooled: every blind set joined at once, the share of off-topic turns that get nothing, and the
share of silent turns that were right to be silent (no-result precision over all the sets'
cases), and that small talk per language (guessed from script and function words). Last, each
set's questions split by whether they are asked in the language of the memory that should come
first (guessed alike, on its title and body): their Recall@5 and top-1. Where a set's cases say
which language their writer wrote them in (``lang``), a table per set and language of the small
talk left silent and the questions left silent. It ranks with the runtime's turn reader
(``MEMRECALL_TURNS=lexical`` for the lexical model alone).

    uv run python scripts/blind_sets_table.py --dump before.json
    uv run python scripts/blind_sets_table.py --compare before.json after.json

``--dump`` also writes what was selected for every case (each set as its test joins it, and
every set joined), so that two versions of the code can be measured one after the other;
``--compare`` prints the cases whose outcome differs between two such files: small talk
silenced or answered again, questions whose top five or first document gained or lost a
relevant memory, each with its id, and the counts.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path
from typing import Any

import regex

from memrecall.sources.turn_reader import remembering
from memrecall.tooling.evaluation import Corpus, Report, compute_metrics, evaluate, load_corpus
from tests.test_blind_sets import JOINED

FIXTURES = Path(__file__).parent.parent / "tests" / "fixtures"
BLIND = FIXTURES / "blind"


def _percent(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}"


def _sets() -> list[str]:
    return sorted((p.name for p in BLIND.glob("set-*.json")), key=lambda n: int(n[4:-5]))


def main(argv: list[str] | None = None) -> None:
    """Print the tables (and write the dump), or compare two dumps."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dump", type=Path, help="also write every case's selection here")
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"))
    args = parser.parse_args(argv)
    if args.compare:
        print("\n".join(compare(*(json.loads(p.read_text("utf-8")) for p in args.compare))))
        return
    with remembering():  # each memory's passage embedded once for every set
        dumped = tables()
    if args.dump:
        args.dump.write_text(json.dumps(dumped, ensure_ascii=False, indent=1), "utf-8")


def tables() -> dict[str, dict[str, list[str]]]:
    """Print the tables; return each case's selection, per set as joined and pooled."""
    dumped: dict[str, dict[str, list[str]]] = {}
    print("| slice | Recall@5 | top-1 | small talk silent | fast precision | fast outdated |")
    print("|---|--:|--:|--:|--:|--:|")
    cases = {n: json.loads((BLIND / n).read_text("utf-8"))["cases"] for n in _sets()}
    across: list[str] = []
    fast = [0, 0, 0, 0]  # delivered, relevant among them, questions, questions hit
    for name, own_cases in cases.items():
        corpus = load_corpus(
            FIXTURES / "recall-eval.json", extra=[BLIND / f for f in JOINED.get(name, [name])]
        )
        own = {case["slice"] for case in own_cases}
        report = evaluate(corpus, "fielded")
        dumped[name] = _selections(report, {case["id"] for case in own_cases})
        for slice_name in sorted(own):
            m = report.slices[slice_name]
            cells = (m.recall_at_5, m.top1, m.no_result_recall, m.fast_precision, m.fast_outdated)
            print(f"| {slice_name} | " + " | ".join(_percent(c) for c in cells) + " |")
        across.extend(_across(corpus, report, {case["id"] for case in own_cases}))
        fast = [a + b for a, b in zip(fast, _fast_totals(report, own_cases), strict=True)]
    sent, right, asked, hit = fast
    print()
    print(
        f"fast result, every set as tested: {sent} memories delivered, "
        f"precision {_percent(right / sent if sent else None)}%; a relevant memory in it for "
        f"{hit} of {asked} questions (hit {_percent(hit / asked if asked else None)}%)"
    )
    everything = load_corpus(FIXTURES / "recall-eval.json", extra=[BLIND / n for n in _sets()])
    report = evaluate(everything, "fielded")
    blind = {case["id"]: bool(case["relevant"]) for c in cases.values() for case in c}
    dumped["pooled"] = _selections(report, set(blind))
    silent = {r.id for r in report.results if r.id in blind and not r.selected}
    talk = [i for i, answerable in blind.items() if not answerable]
    right = sum(1 for i in talk if i in silent)
    wrong = sum(1 for i, answerable in blind.items() if answerable and i in silent)
    print()
    print(
        f"pooled, every blind set joined: small talk silent {right} of {len(talk)} "
        f"({_percent(right / len(talk))}%); questions silent {wrong} of "
        f"{len(blind) - len(talk)}; no-result precision {_percent(right / (right + wrong))}%"
    )
    queries = {
        case["id"]: case["query"] for c in cases.values() for case in c if not case["relevant"]
    }
    turns: Counter[str] = Counter()
    quiet: Counter[str] = Counter()
    for case_id, query in queries.items():
        lang = language(query)
        turns[lang] += 1
        quiet[lang] += case_id in silent
    print()
    print("| language (guessed) | small talk | silent |")
    print("|---|--:|--:|")
    for lang, n in turns.most_common():
        print(f"| {lang} | {n} | {_percent(quiet[lang] / n)} |")
    print()
    print("| questions | asked in | cases | Recall@5 | top-1 |")
    print("|---|---|--:|--:|--:|")
    print("\n".join(across))
    labelled = _by_writers_language(cases, dumped)
    if labelled:
        print()
        print(
            "| set | language (the writer's) | small talk | silent | questions silent "
            "| no-result precision |"
        )
        print("|---|---|--:|--:|--:|--:|")
        print("\n".join(labelled))
    return dumped


def _fast_totals(report: Report, own_cases: list[dict[str, Any]]) -> tuple[int, int, int, int]:
    """For a set's own cases: the memories its fast results delivered, the relevant ones
    among them, its questions, and those whose fast result holds a relevant memory."""
    relevant = {case["id"]: set(case["relevant"]) for case in own_cases}
    sent = right = asked = hit = 0
    for result in report.results:
        wanted = relevant.get(result.id)
        if wanted is None:
            continue
        delivered = set(result.fast)
        sent += len(result.fast)
        right += len(delivered & wanted)
        if wanted:
            asked += 1
            hit += bool(delivered & wanted)
    return sent, right, asked, hit


def _by_writers_language(
    cases: dict[str, list[dict[str, Any]]], dumped: dict[str, dict[str, list[str]]]
) -> list[str]:
    """Rows for the sets whose cases carry the language their writer wrote them in
    (``lang``): per language, the small talk left silent and the questions left silent."""
    rows = []
    for name, own in cases.items():
        langs = sorted({case["lang"] for case in own if "lang" in case})
        for lang in langs:
            mine = [case for case in own if case.get("lang") == lang]
            talk = [case for case in mine if not case["relevant"]]
            right = sum(1 for case in talk if not dumped[name][case["id"]])
            wrong = sum(1 for case in mine if case["relevant"] and not dumped[name][case["id"]])
            asked = len(mine) - len(talk)
            precision = right / (right + wrong) if right + wrong else None
            silent = right / len(talk) if talk else None  # set 29 holds questions only
            rows.append(
                f"| {name} | {lang} | {len(talk)} | {_percent(silent)} | "
                f"{wrong} / {asked} | {_percent(precision)} |"
            )
    return rows


def _selections(report: Report, ids: set[str]) -> dict[str, list[str]]:
    """What ``report`` selected for each case among ``ids``, best first."""
    return {r.id: list(r.selected) for r in report.results if r.id in ids}


def compare(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """Lines naming each case whose outcome differs between two dumps, per set (as its
    test joins it) and pooled, with the counts; labels come from the blind sets' files."""
    labels = {
        case["id"]: case
        for n in _sets()
        for case in json.loads((BLIND / n).read_text("utf-8"))["cases"]
    }
    lines = []
    for name in [n for n in before if n in after]:
        changes: Counter[str] = Counter()
        for case_id in sorted(set(before[name]) & set(after[name])):
            case = labels[case_id]
            was, now = before[name][case_id], after[name][case_id]
            for what in _changes(case, was, now):
                changes[what] += 1
                lines.append(f"{name}: {case_id} {what}")
        summary = ", ".join(f"{what} {n}" for what, n in sorted(changes.items())) or "no change"
        lines.append(f"{name}: {summary}")
    return lines


def _changes(case: dict[str, Any], was: list[str], now: list[str]) -> list[str]:
    """How one case's outcome moved from ``was`` to ``now`` (empty when it did not)."""
    relevant = set(case["relevant"])
    if not relevant:
        if bool(was) == bool(now):
            return []
        return ["small talk silenced" if not now else "small talk answered again"]
    moved = []
    hits = len(relevant & set(was[:5])), len(relevant & set(now[:5]))
    if hits[0] != hits[1]:
        moved.append(
            "question gained in top five" if hits[1] > hits[0] else "question lost in top five"
        )
    top = case["top"]
    first = (was[:1] == [top]), (now[:1] == [top])
    if top is not None and first[0] != first[1]:
        moved.append("question gained top-1" if first[1] else "question lost top-1")
    return moved


def _across(corpus: Corpus, report: Report, own: set[str]) -> list[str]:
    """Rows for the questions among ``own`` (case ids), by slice: those asked in the
    language of the memory that should come first (``top``, else the first relevant one)
    and those asked in another."""
    documents = dict(zip(corpus.ids, corpus.documents, strict=True))
    selected = {r.id: r.selected for r in report.results}
    rows = []
    for slice_name in sorted({c.slice for c in corpus.cases if c.id in own and c.relevant}):
        split: dict[str, list[int]] = {"the memory's language": [], "another language": []}
        for i, case in enumerate(corpus.cases):
            if case.id not in own or case.slice != slice_name:
                continue
            memory = documents[case.top or case.relevant[0]]
            same = language(case.query) == language(f"{memory.title} {memory.body}")
            split["the memory's language" if same else "another language"].append(i)
        for label, picked in split.items():
            if not picked:
                continue
            m = compute_metrics(
                [corpus.cases[i] for i in picked], [selected[corpus.cases[i].id] for i in picked]
            )
            cells = f"{len(picked)} | {_percent(m.recall_at_5)} | {_percent(m.top1)}"
            rows.append(f"| {slice_name} | {label} | {cells} |")
    return rows


_SCRIPTS = (
    ("ja", regex.compile(r"[\p{Hiragana}\p{Katakana}]")),
    ("ko", regex.compile(r"\p{Hangul}")),
    ("zh", regex.compile(r"\p{Han}")),
    ("th", regex.compile(r"\p{Thai}")),
    ("hi", regex.compile(r"\p{Devanagari}")),
    ("ar", regex.compile(r"\p{Arabic}")),
    ("ru", regex.compile(r"\p{Cyrillic}")),
    ("vi", regex.compile(r"[ạảấầẩẫậắằẳẵặẹẻẽếềểễệỉịọỏốồổỗộớờởỡợụủứừửữựỳỵỷỹđ]")),
)
_FUNCTION_WORDS = {
    "en": "the a is what how do i my you to of and in for it",
    "es": "el la de que y en los se del las por un una para con mi me qué cómo",
    "fr": "le la les de des et est un une je mon ma pour que comment quel c'est",
    "de": "der die das und ist ich mein meine wie was nicht ein eine mit für",
    "pt": "o a de que e do da em um uma para com meu minha como não pra",
    "it": "il la di che e è un una per con mi come non",
    "nl": "de het een en is van ik mijn wat hoe niet voor",
}


def language(text: str) -> str:
    """A rough guess of a turn's language: its script, else the language whose function
    words it has most of (good enough to group the blind sets' small talk)."""
    lowered = text.lower()
    for name, pattern in _SCRIPTS:
        if pattern.search(lowered):
            return name
    words = regex.findall(r"[\p{L}']+", lowered)
    votes = {n: sum(w in set(f.split()) for w in words) for n, f in _FUNCTION_WORDS.items()}
    return max(votes, key=votes.__getitem__)


if __name__ == "__main__":
    main()
