"""The OpenAI-compatible selector against a fake chat-completions server on loopback.

The server (:mod:`tests.fake_openai`) is real sockets in a thread; its delays
(20 ms, 300 ms, 2 s) are the scenarios. The tests wait for what the server saw
(a request received, a client hang-up) through threading events, never by
sleeping.
"""

from __future__ import annotations

import asyncio
import json
import logging
import runpy
import ssl
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest
import trio
from hypothesis import given, settings
from hypothesis import strategies as st

from memrecall.actors import open_engine
from memrecall.actors.plan import PlanObserver
from memrecall.actors.selector import (
    SELECTOR_INSTRUCTIONS,
    SelectorError,
    SelectorHTTPError,
    SelectorRequest,
    SelectorResponseError,
    SelectorTimeoutError,
    SelectorUnreachableError,
    validate_selection,
)
from memrecall.engine.scoring.candidates import build_manifest
from memrecall.events import JsonlCodec, LogHeader
from memrecall.events.documents import MemoryDocument, MemoryType, Scope
from memrecall.events.telemetry import (
    DeliveryPoint,
    DeliveryRecord,
    Phase,
    SelectionRecord,
    SelectorOutcome,
    Strategy,
    TelemetryRecord,
)
from memrecall.selectors import OpenAICompatibleSelector
from memrecall.selectors.openai import chat_request_body
from memrecall.sources.scanner import MemoryTree
from memrecall.telemetry.sinks import MemorySink
from memrecall.testing import SelectorAnswered

from .fake_openai import Behaviour, FakeOpenAI, manifest_ids, refused_port, serve

ROOT = "/home/alice/work/shop/.qwen/memory"
API_KEY = "sk-test-0123456789abcdef"
QUERY = "why is the kafka consumer lag alert firing"


def document(
    relative: str, description: str = "", *, scope: Scope = Scope.PROJECT
) -> MemoryDocument:
    return MemoryDocument(
        scope=scope,
        path=f"{ROOT}/{scope.value}/{relative}",
        relative_path=relative,
        type=MemoryType.REFERENCE,
        title=relative,
        description=description,
        body="body",
        mtime=1_700_000_000.0,
    )


def request_for(documents: list[MemoryDocument], limit: int = 5) -> SelectorRequest:
    manifest = build_manifest(documents)
    return SelectorRequest(
        query=QUERY,
        manifest=manifest.text,
        candidates=manifest.included,
        recent_tools=("run_shell",),
        limit=limit,
        ids=manifest.ids,
    )


DOCS = [
    document("ops/kafka-lag.md", "kafka consumer lag alert runbook"),
    document("ops/deploy.md", "how we deploy"),
    document("people/oncall.md", "who is on call", scope=Scope.USER),
]


# --- the instruction template ----------------------------------------------------------------


def test_the_instruction_template_fills_in_the_limit_and_keeps_its_json_example() -> None:
    text = SELECTOR_INSTRUCTIONS.format(limit=5)
    assert "at most 5 memories" in text
    assert '{"selected_memories": [...]}' in text
    assert "{limit}" not in text


# --- the manifest: ids, never absolute paths --------------------------------------------------

segments = st.text(
    alphabet=st.sampled_from("abz09-_. #\\\n\u2028é"), min_size=0, max_size=6
) | st.sampled_from(["..", ".", "", "#3", "C:"])
relatives = st.lists(segments, min_size=1, max_size=3).map("/".join) | st.sampled_from(
    ["/etc/passwd", "../up.md", "a//b.md"]
)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(relatives, st.sampled_from(Scope), st.text(max_size=20)),
        min_size=1,
        max_size=12,
    )
)
def test_no_selector_request_holds_an_absolute_path(
    drawn: list[tuple[str, Scope, str]],
) -> None:
    docs = [
        msgspec.structs.replace(
            document("x", description, scope=scope),
            path=f"{ROOT}/{scope.value}/{i}/{relative}",
            relative_path=relative,
        )
        for i, (relative, scope, description) in enumerate(drawn)
    ]
    request = request_for(docs, limit=len(docs))
    body = json.dumps(chat_request_body(request, "m"), ensure_ascii=False)
    assert ROOT not in body
    assert all(d.path not in body for d in docs)
    # every id is unique, shown in the manifest, and maps back to its own document
    assert len(set(request.ids)) == len(request.ids) == len(request.candidates)
    assert validate_selection(list(request.ids), request) == request.candidates


def test_one_unknown_entry_discards_the_whole_answer() -> None:
    request = request_for(DOCS)
    with pytest.raises(SelectorResponseError):
        validate_selection([request.ids[0], "project/ops/missing.md"], request)
    with pytest.raises(SelectorResponseError):  # an absolute path the model could only guess
        validate_selection([f"{ROOT}/project/ops/unknown.md"], request)


# --- the selector over HTTP --------------------------------------------------------------------


def selector(server: FakeOpenAI, **kwargs: Any) -> OpenAICompatibleSelector:
    return OpenAICompatibleSelector(
        base_url=server.base_url, model="fake-model", api_key=API_KEY, **kwargs
    )


async def test_a_20ms_answer_maps_back_to_the_documents() -> None:
    request = request_for(DOCS)
    with serve(Behaviour(delay=0.02)) as server:
        answer = await selector(server).select(request)
    assert answer == list(request.ids[:2])
    assert validate_selection(answer, request) == request.candidates[:2]
    (body,) = server.requests
    assert body["model"] == "fake-model"
    assert body["response_format"] == {"type": "json_object"}
    assert "at most 5 memories" in body["messages"][0]["content"]
    assert manifest_ids(body) == list(request.ids)
    assert server.headers[0]["Authorization"] == f"Bearer {API_KEY}"
    assert ROOT.encode() not in server.raw_requests[0]


async def test_an_answer_slower_than_the_timeout_is_a_timeout_and_hangs_up() -> None:
    # The server holds its answer up to 10 s but stops as soon as the client hangs up, so
    # a loaded machine cannot make the answer beat the 0.5 s timeout (long enough for the
    # request to reach the server first: the first call of a process is the slowest).
    with serve(Behaviour(delay=10.0)) as server:
        with pytest.raises(SelectorTimeoutError):
            await selector(server, timeout=0.5).select(request_for(DOCS))
        assert await trio.to_thread.run_sync(server.received.wait, 5.0)
        assert await trio.to_thread.run_sync(server.disconnected.wait, 5.0)
        assert not server.answered.is_set()


def test_tls_is_built_once_per_process_and_only_for_https() -> None:
    plain = OpenAICompatibleSelector(base_url="http://127.0.0.1:9/v1", model="m")
    assert plain._tls_context() is False  # nothing to verify, and no CA bundle read
    secure = OpenAICompatibleSelector(base_url="HTTPS://models.example/v1", model="m")
    again = OpenAICompatibleSelector(base_url="https://other.example/v1", model="m")
    context = secure._tls_context()
    assert isinstance(context, ssl.SSLContext)
    assert again._tls_context() is context


async def test_cancelling_a_call_closes_the_request() -> None:
    with serve(Behaviour(delay=10.0)) as server:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(selector(server).select, request_for(DOCS))
            assert await trio.to_thread.run_sync(server.received.wait, 5.0)
            nursery.cancel_scope.cancel()
        # the server sees the hang-up while it is still delaying its answer
        assert await trio.to_thread.run_sync(server.disconnected.wait, 5.0)
        assert not server.answered.is_set()


async def test_http_500_is_an_http_error_and_is_not_retried() -> None:
    with serve(Behaviour(status=500)) as server, pytest.raises(SelectorHTTPError) as caught:
        await selector(server).select(request_for(DOCS))
    assert caught.value.status == 500
    assert len(server.requests) == 1


async def test_a_refused_connection_is_unreachable() -> None:
    unreachable = OpenAICompatibleSelector(
        base_url=f"http://127.0.0.1:{refused_port()}/v1", model="m", retries=1
    )
    with pytest.raises(SelectorUnreachableError):
        await unreachable.select(request_for(DOCS))


@pytest.mark.parametrize(
    "behaviour",
    [
        Behaviour(raw=b"<html>502 Bad Gateway</html>"),
        Behaviour(raw=b'{"choices": []}'),
        Behaviour(content="I think ops/kafka-lag.md is best"),
        Behaviour(content='{"picked": ["project/ops/kafka-lag.md"]}'),
        Behaviour(content='{"selected_memories": "project/ops/kafka-lag.md"}'),
        Behaviour(content='{"selected_memories": [1, 2]}'),
    ],
    ids=["garbage", "no-choices", "prose", "wrong-field", "not-a-list", "not-strings"],
)
async def test_a_malformed_reply_is_an_invalid_answer(behaviour: Behaviour) -> None:
    with serve(behaviour) as server, pytest.raises(SelectorResponseError):
        await selector(server).select(request_for(DOCS))


async def test_a_fenced_json_answer_is_accepted() -> None:
    request = request_for(DOCS)
    fenced = '```json\n{"selected_memories": ["user/people/oncall.md"]}\n```'
    with serve(Behaviour(content=fenced)) as server:
        assert await selector(server).select(request) == ["user/people/oncall.md"]


def counting_transport(
    *failures: type[httpx.RequestError],
) -> tuple[httpx.MockTransport, list[int]]:
    """A transport that raises ``failures`` in turn, then answers with an empty pick."""
    calls: list[int] = []
    reply = {"choices": [{"message": {"content": '{"selected_memories": []}'}}]}

    def handle(request: httpx.Request) -> httpx.Response:
        calls.append(1)
        if len(calls) <= len(failures):
            raise failures[len(calls) - 1]("planted", request=request)
        return httpx.Response(200, json=reply)

    return httpx.MockTransport(handle), calls


async def test_only_a_failed_connect_is_retried() -> None:
    transport, calls = counting_transport(httpx.ConnectError)
    async with httpx.AsyncClient(transport=transport) as client:
        chosen = await OpenAICompatibleSelector(
            base_url="http://model.invalid/v1", model="m", client=client, retries=1
        ).select(request_for(DOCS))
    assert chosen == []
    assert len(calls) == 2

    transport, calls = counting_transport(httpx.ConnectError, httpx.ConnectError)
    async with httpx.AsyncClient(transport=transport) as client:
        with pytest.raises(SelectorUnreachableError):
            await OpenAICompatibleSelector(
                base_url="http://model.invalid/v1", model="m", client=client, retries=1
            ).select(request_for(DOCS))
    assert len(calls) == 2

    transport, calls = counting_transport(httpx.ReadError)  # sent: never retried
    async with httpx.AsyncClient(transport=transport) as client:
        with pytest.raises(SelectorError):
            await OpenAICompatibleSelector(
                base_url="http://model.invalid/v1", model="m", client=client, retries=2
            ).select(request_for(DOCS))
    assert len(calls) == 1


async def test_no_secret_query_or_path_reaches_the_logs(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    request = request_for(DOCS)
    with serve(Behaviour()) as server:
        await selector(server).select(request)
        server.behaviour = Behaviour(status=500)
        with pytest.raises(SelectorHTTPError):
            await selector(server).select(request)
        server.behaviour = Behaviour(delay=10.0)  # until the client hangs up
        with pytest.raises(SelectorTimeoutError) as caught:
            await selector(server, timeout=0.05).select(request)
    shown = caplog.text + repr(selector(server)) + str(caught.value)
    assert caplog.records  # something was logged
    for secret in (API_KEY, QUERY, ROOT, "kafka-lag"):
        assert secret not in shown


def test_the_selector_runs_under_asyncio() -> None:
    request = request_for(DOCS)
    with serve(Behaviour(delay=0.02)) as server:
        answer = asyncio.run(selector(server).select(request))
    assert answer == list(request.ids[:2])


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="timeout"):
        OpenAICompatibleSelector(base_url="http://x/v1", model="m", timeout=31)
    with pytest.raises(ValueError, match="retries"):
        OpenAICompatibleSelector(base_url="http://x/v1", model="m", retries=3)
    with pytest.raises(ValueError, match="model"):
        OpenAICompatibleSelector(base_url="http://x/v1", model=" ")


# --- telemetry: the outcome field and old logs ----------------------------------------------------

codec: JsonlCodec[TelemetryRecord] = JsonlCodec(TelemetryRecord, content="telemetry")
HEADER = LogHeader(content="telemetry", engine_version="0", options={}, seed=None)


def test_records_without_an_outcome_still_decode_and_new_ones_round_trip() -> None:
    old = (
        b'{"kind":"selection","query_length":3,"docs_scanned":4,"docs_selected":1,'
        b'"strategy":"heuristic","duration_ms":1.0}\n'
        b'{"kind":"delivery","phase":"refined","delivery_point":"discarded",'
        b'"strategy":"none","docs_selected":0,"latency_ms":2.0,"discard_reason":"abort"}\n'
    )
    _, records = codec.decode_all(codec.encode_header(HEADER) + old)
    assert [r.selector_outcome for r in records] == [None, None]
    new = [
        SelectionRecord(
            query_length=3,
            docs_scanned=4,
            docs_selected=1,
            strategy=Strategy.HEURISTIC,
            duration_ms=1.0,
            selector_outcome=outcome,
        )
        for outcome in SelectorOutcome
    ]
    data = codec.encode_all(HEADER, new)
    assert codec.decode_all(data)[1] == new


# --- end to end: open_engine with the selector ----------------------------------------------------


KAFKA = """---
name: Kafka consumer lag alert
description: kafka consumer lag alert runbook
type: reference
---
When the kafka consumer lag alert fires, check the consumer group first.
"""


def write_tree(root: Path) -> MemoryTree:
    project = root / "project"
    (project / "ops").mkdir(parents=True)
    (project / "ops" / "kafka-lag.md").write_text(KAFKA, encoding="utf-8")
    for i, topic in enumerate(["deploy steps", "coffee machine", "holiday calendar"]):
        text = KAFKA.replace("Kafka consumer lag alert", topic.title()).replace(
            "kafka consumer lag alert", topic
        )
        (project / "ops" / f"note-{i}.md").write_text(text, encoding="utf-8")
    return MemoryTree.of(project=str(project))


def pick_last(body: dict[str, Any]) -> object:
    """The model's pick: the last manifest entry (not what the fast result holds)."""
    return manifest_ids(body)[-1:]


def outcomes(sink: MemorySink) -> list[tuple[str, SelectorOutcome | None]]:
    return [
        (r.phase.value if isinstance(r, DeliveryRecord) else "selection", r.selector_outcome)
        for r in sink.records
    ]


async def test_end_to_end_a_fast_selector_pick_arrives(
    tmp_path: Path, mock_clock: trio.testing.MockClock
) -> None:
    # trio's clock stands still (rate 0), so the 100 ms wait cannot run out while the
    # loopback server answers, however loaded the machine: the pick always comes first.
    tree = write_tree(tmp_path)
    sink = MemorySink()
    observer: PlanObserver = SelectorAnswered(trio.Event())
    with serve(Behaviour(delay=0.02, answer=pick_last)) as server:
        async with open_engine(
            tree,
            selector=selector(server),
            sinks=[sink],
            catalog_cache=None,
            wait_for_selector=True,
            observer=observer,
        ) as engine:
            session = await engine.open_session()
            block = await session.user_query(QUERY)
    assert block is not None
    assert block.phase is Phase.REFINED  # the model's pick, before the first request
    assert len(block.paths) == 1
    assert block.paths[0].endswith(".md")
    assert not block.paths[0].endswith("kafka-lag.md")  # not the fast result
    assert ("selection", SelectorOutcome.OK) in outcomes(sink)
    assert ("refined", SelectorOutcome.OK) in outcomes(sink)


async def test_end_to_end_a_slow_pick_comes_at_the_next_tool_result(
    tmp_path: Path, mock_clock: trio.testing.MockClock
) -> None:
    # trio's clock stands still: the fast result goes in when the scan completes, however
    # slow a loaded machine makes the scan, and the model (2 s of real time) comes later.
    tree = write_tree(tmp_path)
    sink = MemorySink()
    done = SelectorAnswered(trio.Event())
    with serve(Behaviour(delay=2.0, answer=pick_last)) as server:
        async with open_engine(
            tree, selector=selector(server), sinks=[sink], catalog_cache=None, observer=done
        ) as engine:
            session = await engine.open_session()
            first = await session.user_query(QUERY)
            assert first is not None
            assert first.phase is Phase.FAST  # at the window, before the model answers
            assert first.paths[0].endswith("kafka-lag.md")
            await session.turn_end(tools_requested=True)
            await done.event.wait()
            later = await session.tool_result()
    assert later is not None
    assert later.phase is Phase.REFINED
    assert not set(later.paths) & set(first.paths)
    terminal = [r for r in sink.records if isinstance(r, DeliveryRecord) and r.terminal]
    assert terminal[0].delivery_point is DeliveryPoint.TOOL_RESULT
    assert terminal[0].strategy is Strategy.MODEL
    assert terminal[0].selector_outcome is SelectorOutcome.OK


async def test_end_to_end_http_500_shows_as_http_error(tmp_path: Path) -> None:
    sink = MemorySink()
    done = SelectorAnswered(trio.Event())
    with serve(Behaviour(status=500)) as server:
        async with open_engine(
            write_tree(tmp_path),
            selector=selector(server),
            sinks=[sink],
            catalog_cache=None,
            observer=done,
        ) as engine:
            session = await engine.open_session()
            await session.user_query(QUERY)
            await done.event.wait()
            await session.turn_end(tools_requested=False)
    (selection,) = [r for r in sink.records if isinstance(r, SelectionRecord)]
    assert selection.strategy is Strategy.HEURISTIC
    assert selection.selector_outcome is SelectorOutcome.HTTP_ERROR
    terminal = [r for r in sink.records if isinstance(r, DeliveryRecord) and r.terminal]
    assert terminal[0].selector_outcome is SelectorOutcome.HTTP_ERROR


async def test_end_to_end_a_new_query_cancels_the_request(tmp_path: Path) -> None:
    sink = MemorySink()
    with serve(Behaviour(delay=10.0)) as server:  # answers only if the client never hangs up
        async with open_engine(
            write_tree(tmp_path), selector=selector(server), sinks=[sink], catalog_cache=None
        ) as engine:
            session = await engine.open_session()
            await session.user_query(QUERY)
            assert await trio.to_thread.run_sync(server.received.wait, 5.0)
            await session.abort()
            assert await trio.to_thread.run_sync(server.disconnected.wait, 5.0)
    terminal = [r for r in sink.records if isinstance(r, DeliveryRecord) and r.terminal]
    assert terminal[0].selector_outcome is SelectorOutcome.CANCELLED
    assert not server.answered.is_set()


# --- the example script -----------------------------------------------------------------------


def test_the_example_script_runs_against_the_fake_server(
    capsys: pytest.CaptureFixture[str],
) -> None:
    script = runpy.run_path(str(Path(__file__).parent.parent / "scripts" / "openai_selector.py"))
    with serve(Behaviour(delay=0.02)) as server:
        status = script["main"](
            ["--base-url", server.base_url, "--model", "fake", "How do I fail over Postgres?"]
        )
    assert status == 0
    out = capsys.readouterr().out
    assert "before the first request" in out
    assert "selector_outcome=<SelectorOutcome.OK: 'ok'>" in out
    assert len(server.requests) == 1
    assert str(Path(__file__).parent.parent) not in server.raw_requests[0].decode()
