"""The ``memrecall`` command line."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

import msgspec

from memrecall.argtypes import (
    distinct_positive_ints,
    fraction,
    non_negative_int,
    nonempty_path,
    positive_int,
    probability,
)
from memrecall.http import cli as http_cli
from memrecall.http.cli import positive_seconds
from memrecall.mcp import cli as mcp_cli
from memrecall.scanview import print_scan, scan_json
from memrecall.sources.scanner import MemoryTree, scan_tree
from memrecall.store import cli as store_cli

__all__ = ["EXAMPLE_TREE", "main"]

EXAMPLE_TREE = Path(__file__).resolve().parent / "examples" / "memory"
"""The bundled example tree (package data: ``memrecall/examples/memory/{project,user}``)."""


def _uses_example_tree(args: argparse.Namespace) -> bool:
    return args.project is None and args.user is None and args.discover is None


def _tree_from(args: argparse.Namespace) -> MemoryTree:
    if args.discover is not None:
        if args.project is not None or args.user is not None:
            print(
                f"memrecall {args.command}: error: --discover finds both roots; "
                "do not combine it with --project or --user",
                file=sys.stderr,
            )
            raise SystemExit(2)
        return MemoryTree.discover(args.discover)
    if _uses_example_tree(args):
        return MemoryTree.of(project=str(EXAMPLE_TREE / "project"), user=str(EXAMPLE_TREE / "user"))
    return MemoryTree.of(project=args.project, user=args.user)


EXAMPLE_NOTE = "no --project or --user given: listing the bundled example tree"
"""The line ``scan`` prints first when it lists the bundled example tree."""

NO_ROOT_STATUS = 2
"""``scan``'s exit status when none of its roots is an existing directory."""


def _cmd_scan(args: argparse.Namespace) -> int:
    tree = _tree_from(args)
    if not any(os.path.isdir(root.path) for root in tree.roots):
        given = ", ".join(f"--{root.scope.value} {root.path}" for root in tree.roots)
        print(
            f"memrecall scan: error: no memory root found ({given}: "
            "not an existing directory); nothing to list",
            file=sys.stderr,
        )
        return NO_ROOT_STATUS
    result = scan_tree(tree)
    if _uses_example_tree(args):
        # On stderr under --json, so the JSON on stdout stays one object.
        print(f"{EXAMPLE_NOTE} ({EXAMPLE_TREE})", file=sys.stderr if args.json else sys.stdout)
    if args.json:
        sys.stdout.buffer.write(scan_json(result) + b"\n")
    else:
        print_scan(result)
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    from memrecall.demo import run_demo

    return run_demo(_tree_from(args), log_path=args.log)


def _cmd_eval(args: argparse.Namespace) -> int:
    from memrecall.tooling import evaluation

    try:
        corpus = evaluation.load_corpus(args.corpus, extra=args.extra)
    except evaluation.CorpusError as exc:
        print(f"memrecall eval: error: {exc}", file=sys.stderr)
        return 2
    if args.match:
        from memrecall.tooling.matcheval import format_report, score_match
        from memrecall.tools.constants_file import ConstantsFileError, load_constants

        try:
            config = load_constants(args.constants) if args.constants else None
        except ConstantsFileError as exc:
            print(f"memrecall eval: error: --constants {args.constants}: {exc}", file=sys.stderr)
            return 2
        print(format_report(score_match(corpus, config)))
        return 0
    if args.compare:
        reports = evaluation.evaluate_many(corpus, ["frozen", args.scorer])
        print(evaluation.format_comparison(reports["frozen"], reports[args.scorer]))
        return 0
    if args.side_by_side:
        names = list(dict.fromkeys([*evaluation.BASELINES, args.scorer]))
        print(
            evaluation.format_side_by_side(list(evaluation.evaluate_many(corpus, names).values()))
        )
        return 0
    report = evaluation.evaluate(corpus, args.scorer)
    if args.json:
        sys.stdout.flush()
        sys.stdout.buffer.write(msgspec.json.encode(report.to_json()) + b"\n")
        sys.stdout.buffer.flush()
    else:
        print(evaluation.format_report(report))
    return 0


def _add_eval_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from memrecall.tooling.evaluation import DEFAULT_SCORER, SCORERS

    ev = sub.add_parser("eval", help="measure a scorer on a labelled corpus (JSON file)")
    ev.add_argument("--corpus", metavar="FILE", required=True, help="the corpus JSON file")
    ev.add_argument(
        "--extra",
        metavar="FILE",
        action="append",
        default=[],
        help="a JSON file whose documents join the pool and whose cases are evaluated too"
        " (repeatable; e.g. tests/fixtures/blind/*.json)",
    )
    ev.add_argument(
        "--scorer",
        choices=sorted(SCORERS),
        default=DEFAULT_SCORER,
        help=f"the scorer to measure (default: {DEFAULT_SCORER})",
    )
    mode = ev.add_mutually_exclusive_group()
    mode.add_argument("--json", action="store_true", help="print the contract's JSON object")
    mode.add_argument(
        "--compare", action="store_true", help="print a before/after table: frozen vs --scorer"
    )
    mode.add_argument(
        "--side-by-side",
        action="store_true",
        help="print frozen / reference / bm25 / --scorer side by side, per slice",
    )
    mode.add_argument(
        "--match",
        action="store_true",
        help="score memory_recall's match judgement: strong/weak/none precision and recall",
    )
    ev.add_argument(
        "--constants",
        metavar="FILE",
        help="with --match: the constants file to judge with (memrecall calibrate --contract)",
    )
    ev.set_defaults(func=_cmd_eval)


def _cmd_calibrate(args: argparse.Namespace) -> int:
    from memrecall.tooling.calibration import calibrate_main

    command = "memrecall calibrate --corpus " + args.corpus
    if not args.holdout:
        command += " --no-holdout"
    if args.contract:
        from memrecall.tooling.matcheval import fit_constants_main

        return fit_constants_main(
            args.corpus,
            output=args.output,
            as_json=args.json,
            holdout=args.holdout,
            command=command + " --contract",
        )
    return calibrate_main(
        args.corpus,
        output=args.output,
        as_json=args.json,
        holdout=args.holdout,
        target=args.target,
        command=command,
    )


def _add_calibrate_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    cal = sub.add_parser(
        "calibrate",
        help="recompute the strong/weak match thresholds on a labelled corpus"
        " (--contract: the memory tools' constants)",
    )
    cal.add_argument("--corpus", metavar="FILE", required=True, help="the corpus JSON file")
    cal.add_argument("--output", metavar="FILE", help="also write the thresholds file here")
    cal.add_argument("--json", action="store_true", help="print the thresholds file's JSON")
    cal.add_argument(
        "--contract",
        action="store_true",
        help="refit the memory tools' constants (memory_recall's match) instead; --output"
        " then writes a constants file for memrecall mcp --constants",
    )
    cal.add_argument(
        "--no-holdout",
        dest="holdout",
        action="store_false",
        help="fit on every case (default: even-numbered cases, the odd ones held out)",
    )
    cal.add_argument(
        "--target",
        type=fraction,
        default=0.96,
        help="fast-path precision the strong thresholds must reach, in (0, 1] (default: 0.96)",
    )
    cal.set_defaults(func=_cmd_calibrate)


def _cmd_simulate(args: argparse.Namespace) -> int:
    from memrecall.progress import Progress

    if args.what == "delivery":
        from memrecall.simulation.delivery import delivery_main

        if args.corpus is None:
            print("memrecall simulate delivery: --corpus FILE is required", file=sys.stderr)
            return 2
        if args.log is not None:
            print("memrecall simulate delivery: --log is for runs", file=sys.stderr)
            return 2
        return delivery_main(
            args.corpus,
            as_json=args.json,
            wait_for_selector=args.wait_for_selector,
            miss_rate=args.miss_rate,
        )
    from memrecall.simulation.cli import simulate_main

    runs = args.runs if args.runs is not None else (1 if args.log is not None else 20)
    if args.log is not None and runs != 1:
        print(
            "memrecall simulate: error: --log writes one run's event log; use it with --runs 1",
            file=sys.stderr,
        )
        return 2
    with Progress(runs, "simulate") as progress:
        return simulate_main(
            args.seed, runs, verbose=args.verbose, log_path=args.log, progress=progress
        )


def _cmd_replay(args: argparse.Namespace) -> int:
    from memrecall.simulation.cli import replay_main

    return replay_main(args.log)


def _add_simulation_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    sim = sub.add_parser(
        "simulate",
        help="seeded runs of the engine on a virtual clock, or the delivery evaluation",
    )
    sim.add_argument(
        "what",
        nargs="?",
        choices=["runs", "delivery"],
        default="runs",
        help="runs: seeded safety/liveness simulations (default); delivery: the delivery table",
    )
    sim.add_argument("--seed", type=non_negative_int, default=1, help="first seed (runs)")
    sim.add_argument(
        "--runs",
        type=positive_int,
        default=None,
        help="number of seeds, at least 1 (runs; default 20, or 1 with --log)",
    )
    sim.add_argument(
        "--log",
        metavar="FILE",
        type=nonempty_path,
        help="write the run's event log here, failed or not (runs; replay it with `replay FILE`)",
    )
    sim.add_argument("--verbose", action="store_true", help="print every seed's options")
    sim.add_argument("--corpus", metavar="FILE", help="labelled corpus (delivery)")
    sim.add_argument("--json", action="store_true", help="JSON output (delivery)")
    sim.add_argument(
        "--wait-for-selector",
        action="store_true",
        help="delivery: compare the fast-result policies (at once vs open_engine's"
        " wait_for_selector) instead of the designs",
    )
    sim.add_argument(
        "--miss-rate",
        type=probability,
        default=0.0,
        metavar="P",
        help="delivery: the labelled stand-in selector misses each labelled document with"
        " probability P (a fixed coin per case and document; default 0)",
    )
    sim.set_defaults(func=_cmd_simulate)

    rep = sub.add_parser(
        "replay", help="replay an event log through the state machine and check it"
    )
    rep.add_argument("log", metavar="LOG", help="an event log (JSON Lines)")
    rep.set_defaults(func=_cmd_replay)


def _cmd_bench(args: argparse.Namespace) -> int:
    from memrecall.tooling.scanbench import DEFAULT_SIZES, scan_bench_main

    if args.what == "store":
        from memrecall.tooling import storebench

        store_sizes = storebench.DEFAULT_SIZES if args.sizes is None else args.sizes
        return storebench.store_bench_main(store_sizes, as_json=args.json, postgres=args.postgres)
    if args.what == "http":
        from memrecall.tooling import httpbench

        return httpbench.http_bench_main(args.clients, args.duration, as_json=args.json)
    if args.what == "recall":
        from memrecall.tooling import recallbench

        recall_sizes = recallbench.DEFAULT_SIZES if args.sizes is None else args.sizes
        return recallbench.recall_bench_main(recall_sizes, as_json=args.json)
    sizes = DEFAULT_SIZES if args.sizes is None else args.sizes
    return scan_bench_main(sizes, as_json=args.json, catalog=args.catalog, scorer=args.scorer)


def _add_bench_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    bench = sub.add_parser("bench", help="benchmarks (scan: recall start to fast result)")
    bench.add_argument(
        "what",
        choices=["scan", "recall", "store", "http"],
        help="which benchmark (recall: user_query return time; store: memory store; "
        "http: the management API under load)",
    )
    bench.add_argument(
        "--clients", type=positive_int, default=8, help="http: concurrent clients (default 8)"
    )
    bench.add_argument(
        "--duration",
        type=positive_seconds,
        default=10.0,
        help="http: seconds of load (default 10)",
    )
    bench.add_argument(
        "--sizes",
        type=distinct_positive_ints,
        default=None,
        help="comma-separated distinct topic counts (scan default: 200,500,1000,2000,5000)",
    )
    bench.add_argument("--json", action="store_true", help="print JSON rows")
    bench.add_argument(
        "--postgres",
        metavar="URI",
        default=None,
        help="store: also measure this PostgreSQL database (postgresql://...), side by side",
    )
    bench.add_argument(
        "--scorer",
        choices=["fielded", "reference"],
        default="fielded",
        help="the engine's scorer (default: fielded, the engine's default)",
    )
    bench.add_argument(
        "--catalog",
        action="store_true",
        help="also time the catalog: warm, after an edit, and a new process from its file",
    )
    bench.set_defaults(func=_cmd_bench)


def _add_tree_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--project", metavar="DIR", type=nonempty_path, help="project memory root")
    parser.add_argument("--user", metavar="DIR", type=nonempty_path, help="user memory root")
    parser.add_argument(
        "--discover",
        metavar="PATH",
        type=nonempty_path,
        help="use Qwen Code's project and user memory roots for the project at PATH",
    )


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for tests and docs)."""
    parser = argparse.ArgumentParser(prog="memrecall", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    scan = sub.add_parser(
        "scan",
        help="list the documents and diagnostics of a memory tree",
        description=(
            "List the documents and diagnostics of a memory tree. Without --project and "
            f"--user it lists the bundled example tree ({EXAMPLE_TREE}) and says so. "
            "A root that is missing is a diagnostic; exit status 2 when no root given "
            "is an existing directory."
        ),
    )
    _add_tree_options(scan)
    scan.add_argument("--json", action="store_true", help="print JSON instead of a table")
    scan.set_defaults(func=_cmd_scan)

    demo = sub.add_parser("demo", help="run the scripted demo on the bundled example tree")
    _add_tree_options(demo)
    demo.add_argument(
        "--log",
        metavar="FILE",
        type=nonempty_path,
        help="write the demo's event log here (replay it with `memrecall replay FILE`)",
    )
    demo.set_defaults(func=_cmd_demo)

    _add_simulation_parsers(sub)
    _add_bench_parser(sub)

    _add_eval_parser(sub)
    _add_calibrate_parser(sub)
    mcp_cli.add_parser(sub)
    store_cli.add_parser(sub)
    http_cli.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``memrecall`` script."""
    args = build_parser().parse_args(argv)
    try:
        status: int = args.func(args)
    except BrokenPipeError:  # e.g. piped into `head`
        sys.stderr.close()
        return 0
    return status


if __name__ == "__main__":
    raise SystemExit(main())
