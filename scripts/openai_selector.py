"""Recall with a real model selector: any OpenAI-compatible chat-completions endpoint.

Plays one tool-using turn against a memory tree (the bundled example tree by
default) and prints what would go into the conversation and when, then the
telemetry records::

    uv run python scripts/openai_selector.py --base-url http://localhost:8000/v1 \\
        --model qwen2.5-7b-instruct "How do I fail over the Postgres primary?"

The API key, if the endpoint needs one, is read from ``$OPENAI_API_KEY`` (or
``--api-key-env NAME``); it is never printed. Works with OpenAI, vLLM,
llama.cpp's server, Ollama (``http://localhost:11434/v1``) and others that
accept ``response_format={"type": "json_object"}``.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

import trio

from memrecall.actors import open_engine
from memrecall.selectors import OpenAICompatibleSelector
from memrecall.sources.scanner import MemoryTree
from memrecall.telemetry import MemorySink
from memrecall.testing import SelectorAnswered

EXAMPLES = Path(__file__).resolve().parent.parent / "memrecall" / "examples" / "memory"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("query", help="the user's message")
    parser.add_argument("--base-url", required=True, help="API root, e.g. http://host:8000/v1")
    parser.add_argument("--model", required=True, help="model name the endpoint knows")
    parser.add_argument(
        "--api-key-env", default="OPENAI_API_KEY", help="variable holding the API key"
    )
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds per call (<= 30)")
    parser.add_argument("--project", default=str(EXAMPLES / "project"), help="project root")
    parser.add_argument("--user", default=str(EXAMPLES / "user"), help="user root")
    parser.add_argument(
        "--wait-for-selector",
        action="store_true",
        help="let the first request wait (up to 100 ms) for the model's pick",
    )
    return parser


async def run(args: argparse.Namespace) -> None:
    """One tool-using turn; prints each block and the telemetry."""
    selector = OpenAICompatibleSelector(
        base_url=args.base_url,
        model=args.model,
        api_key=os.environ.get(args.api_key_env) or None,
        timeout=args.timeout,
    )
    telemetry = MemorySink()
    answered = SelectorAnswered(trio.Event())
    tree = MemoryTree.of(project=args.project, user=args.user)
    async with open_engine(
        tree,
        selector=selector,
        sinks=[telemetry],
        observer=answered,
        catalog_cache=None,
        wait_for_selector=args.wait_for_selector,
    ) as engine:
        session = await engine.open_session()
        started = trio.current_time()
        first = await session.user_query(args.query)
        waited = (trio.current_time() - started) * 1000
        if first is None:
            print(f"before the first request ({waited:.0f} ms): nothing")
        else:
            print(f"before the first request ({waited:.0f} ms): {first.phase} {list(first.paths)}")
        # The model asks for a tool; while it runs, the selector may answer.
        await session.turn_end(tools_requested=True)
        with trio.move_on_after(args.timeout + 1):
            await answered.event.wait()
        later = await session.tool_result()
        if later is None:
            print("after the tool output: nothing")
        else:
            print(f"after the tool output: {later.phase} {list(later.paths)}")
        await session.turn_end(tools_requested=False)
    for record in telemetry.records:
        print(record)


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the arguments and play the turn; 0, or 2 for bad arguments."""
    args = _parser().parse_args(argv)
    try:
        trio.run(run, args)
    except ValueError as exc:  # a bad --timeout, model or URL
        print(f"openai_selector: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
