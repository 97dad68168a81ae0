"""`tracetui mcp`, driven by the MCP SDK's own client over stdio, as an agent drives it."""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import subprocess
import sys
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from conftest import ROOT, SAMPLES, SHARED

import tracetui
from tui.cli.mcp.traces import page

pytest.importorskip("mcp")
pytest.importorskip("duckdb")
from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402
from mcp.types import CallToolResult, TextContent  # noqa: E402

BERT = str(SAMPLES / "h100-bert-small.json.gz")
MOE = str(SAMPLES / "b300-moe-small.json.gz")  # no Python frames, no memory events: code and memory refuse it
TOOLS = {
    "summary", "explain", "ops", "kernels", "code", "memory", "roofline", "critical", "diff", "steps",
    "search_events", "events_in_range", "event", "sql", "allocations",
    "breakdown", "queues", "op_kernels", "sequences",
}  # fmt: skip


@asynccontextmanager
async def serve(cache: Path, **settings: str):
    """The server as an agent starts it (tracetui mcp), its cache in the test's (and these settings)."""
    env = {"TRACETUI_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT), **settings}
    params = StdioServerParameters(command=sys.executable, args=["-m", "tui.cli", "mcp"], env=env, cwd=str(ROOT))
    async with Client(params, read_timeout_seconds=120) as client:
        yield client


async def call(client: Client, tool: str, **args) -> dict:
    result = await client.call_tool(tool, args)
    assert not result.is_error, _text(result)
    assert result.structured_content is not None
    return result.structured_content


async def failure(client: Client, tool: str, **args) -> str:
    result = await client.call_tool(tool, args)
    assert result.is_error
    text = _text(result)
    assert "\n" not in text
    return text


def _text(result: CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


async def test_every_tool_answers_with_the_apis_figures(isolated_cache):
    """GIVEN the server WHEN each tool is called THEN it answers what the API (so the CLI's JSON) says, paged."""
    t = tracetui.load(BERT)
    async with serve(isolated_cache) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert set(listed) == TOOLS
        assert all(
            tool.description and "trace" in tool.input_schema["properties"] or name in ("diff", "allocations")
            for name, tool in listed.items()
        )
        from tui.tables import code, kernels, ops, roofline

        for name, table in (("ops", ops), ("kernels", kernels), ("code", code), ("roofline", roofline)):
            said = listed[name].description or ""
            assert "{" not in said and all(key in said.split("sort: ")[1] for key in table.SORTS), (name, said)
        assert await call(client, "summary", trace=BERT) == t.summary()
        assert await call(client, "explain", trace=BERT) == t.explain()
        assert await call(client, "memory", trace=BERT) == t.memory()
        assert await call(client, "ops", trace=BERT) == page(t.ops(), "rows", 50, 0)
        assert await call(client, "ops", trace=BERT, sort="self_cpu", limit=5, offset=5) == page(
            t.ops(sort="self_cpu"), "rows", 5, 5
        )
        assert await call(client, "kernels", trace=BERT) == page(t.kernels(), "rows", 50, 0)
        assert await call(client, "code", trace=BERT, all_frames=True) == page(t.code(all_frames=True), "rows", 50, 0)
        assert await call(client, "roofline", trace=BERT) == page(t.roofline(), "rows", 50, 0)
        assert await call(client, "steps", trace=BERT) == {
            "steps": t.steps(),
            "page": page({"s": t.steps()}, "s", 100, 0)["page"],
        }
        assert await call(client, "diff", a=BERT, b=BERT, limit=3) == tracetui.diff(BERT, BERT, limit=3)
        found = await call(client, "search_events", trace=BERT, name="memcpy|gemm", limit=100)
        assert found["events"] == t.events(name="memcpy|gemm") and found["page"]["left"] == 0
        first = found["events"][0]
        window = await call(
            client, "events_in_range", trace=BERT, start_us=first["ts_us"], end_us=first["ts_us"], limit=500
        )
        assert first in window["events"] and window["events"] == t.events(
            start_us=first["ts_us"], end_us=first["ts_us"]
        )
        assert await call(client, "event", trace=BERT, id=first["id"]) == t.event(first["id"])
        answer = await call(
            client,
            "sql",
            trace=BERT,
            query="SELECT kind, count(*) AS n FROM events GROUP BY kind ORDER BY n DESC, kind",
        )
        assert (
            answer["rows"]
            == t.sql("SELECT kind, count(*) AS n FROM events GROUP BY kind ORDER BY n DESC, kind")["rows"]
        )


async def test_search_then_event_then_its_kernel_round_trips(isolated_cache):
    """An agent's walk: find an op by name, open it, follow the kernel it launched, back to its launch."""
    async with serve(isolated_cache) as client:
        ops = await call(client, "search_events", trace=BERT, name="^aten::addmm$", cat="cpu_op", limit=1)
        assert (
            ops["page"]["total"] > 1
            and ops["page"]["next_offset"] == 1
            and ops["page"]["left"] == ops["page"]["total"] - 1
        )
        op = await call(client, "event", trace=BERT, id=ops["events"][0]["id"])
        assert op["name"] == "aten::addmm" and op["kernels"]
        kernel = await call(client, "event", trace=BERT, id=op["kernels"][0]["id"])
        assert kernel["kind"] == "kernel" and kernel["launch"]
        launch = await call(client, "event", trace=BERT, id=kernel["launch"]["id"])
        assert kernel["id"] in [k["id"] for k in launch["kernels"]]
        assert op["id"] in [p["id"] for p in launch["parents"]]  # the op the walk started from launched it
        rows = await call(
            client, "sql", trace=BERT, query=f"SELECT launch_id FROM launches WHERE activity_id = {kernel['id']}"
        )
        assert rows["rows"] == [{"launch_id": launch["id"]}]


async def test_errors_are_one_line_tool_errors_and_the_server_stays(isolated_cache, tmp_path):
    async with serve(isolated_cache) as client:
        missing = str(tmp_path / "nope.json")
        assert (await failure(client, "summary", trace=missing)).endswith(f"{missing}: no such file")
        assert "bad regular expression '(': missing )" in await failure(client, "search_events", trace=BERT, name="(")
        assert "no event with id 99999: this trace's ids are 0 to 2,059" in await failure(
            client, "event", trace=BERT, id=99999
        )
        assert "Parser Error" in await failure(client, "sql", trace=BERT, query="SELEC 1")
        assert "unknown sort key 'fastest'" in await failure(client, "kernels", trace=BERT, sort="fastest")
        assert "limit must be 1 or more" in await failure(client, "ops", trace=BERT, limit=0)
        assert "no memory events" in await failure(client, "memory", trace=str(SAMPLES / "cpu-only-gloo.json.gz"))
        assert (await call(client, "summary", trace=BERT))["verdict"]  # still serving


async def test_sql_reads_and_writes_no_file(isolated_cache, tmp_path):
    target = tmp_path / "stolen.csv"
    async with serve(isolated_cache) as client:
        for query in (
            "SELECT * FROM read_csv('/etc/passwd')",
            f"COPY (SELECT * FROM events) TO '{target}'",
            "SET enable_external_access = true",
            f"ATTACH '{tmp_path / 'x.db'}'",
        ):
            text = await failure(client, "sql", trace=BERT, query=query)
            assert "disabled by configuration" in text or "read-only" in text, text
        assert (await call(client, "sql", trace=BERT, query="SELECT count(*) AS n FROM events"))["rows"] == [
            {"n": 2060}
        ]
    assert not target.exists() and not (tmp_path / "x.db").exists()
    assert {p.name for p in tmp_path.iterdir()} == set()  # nothing written beside the trace or anywhere asked


async def test_sql_cannot_change_what_later_calls_read(isolated_cache):
    """DROP and CREATE are refused (the summary table agrees with the summary tool after them), and so are a
    transaction's end and a second statement."""
    async with serve(isolated_cache) as client:
        before = await call(client, "sql", trace=BERT, query="SELECT * FROM kernels ORDER BY name")
        for query in (
            "DROP TABLE kernels",
            "CREATE OR REPLACE TABLE kernels AS SELECT * FROM kernels LIMIT 1",
            "DROP VIEW events",
            "COMMIT; DROP VIEW events",
            "SELECT 1; DROP VIEW events",
        ):
            assert "read-only" in await failure(client, "sql", trace=BERT, query=query)
        assert await call(client, "sql", trace=BERT, query="SELECT * FROM kernels ORDER BY name") == before
        n = await call(client, "sql", trace=BERT, query="SELECT count(*) AS n FROM events")
        assert n["rows"] == [{"n": 2060}]


async def test_endless_queries_are_stopped_and_other_calls_answer_meanwhile(isolated_cache):
    """Four never-ending queries at once: a summary call made beside them answers while they run, and each query
    is stopped at the time limit (TRACETUI_SQL_TIMEOUT_S) and answered as a timeout. The query streams in constant
    memory (a cross join buffers its side until the memory limit, which follows the machine's free memory: on a
    busy machine it met that limit before the time limit)."""
    endless = "SELECT sum(range) FROM range(1e15::BIGINT)"
    async with serve(isolated_cache, TRACETUI_SQL_TIMEOUT_S="12") as client:
        want = await call(client, "summary", trace=BERT)  # the trace open, its summary known
        loop = asyncio.get_running_loop()
        began = loop.time()
        ended: list[float] = []

        async def stopped() -> str:
            text = await failure(client, "sql", trace=BERT, query=endless)
            ended.append(loop.time())
            return text

        queries = [asyncio.ensure_future(stopped()) for _ in range(4)]
        await asyncio.sleep(0.5)
        assert await call(client, "summary", trace=BERT) == want
        assert await call(client, "sql", trace=BERT, query="SELECT count(*) AS n FROM steps")
        answered = loop.time()
        texts = await asyncio.gather(*queries)
    assert answered < min(ended), f"the summary waited on the endless queries ({answered - began:.1f} s)"
    assert all("stopped after 12 s, its time limit" in text for text in texts), texts
    assert 12 <= max(ended) - began < 60


async def test_absurd_numbers_and_a_catastrophic_regex_answer(isolated_cache):
    """A window from -1e308 to 1e308 is the whole trace; a pattern that backtracks for minutes in Python's re
    answers at once (RE2); a pattern that needs backtracking is one line."""
    async with serve(isolated_cache) as client:
        everything = await call(client, "events_in_range", trace=BERT, start_us=-1e308, end_us=1e308, limit=1)
        assert everything["page"]["total"] == 2060
        began = asyncio.get_running_loop().time()
        found = await call(client, "search_events", trace=BERT, name="^(a+)+$")
        assert found["page"]["total"] == 0 and asyncio.get_running_loop().time() - began < 10
        assert "linear time" in await failure(client, "search_events", trace=BERT, name="(a)\\1")


async def test_critical_with_what_if(isolated_cache):
    t = tracetui.load(BERT)
    whole = t.critical(what_if=["launch=0"])
    async with serve(isolated_cache) as client:
        got = await call(client, "critical", trace=BERT, what_if=["launch=0"], limit=5)
    assert got["path"] == whole["path"][:5] and got["what_if"] == whole["what_if"]
    assert got["page"]["total"] == len(whole["path"]) and got["page"]["left"] == len(whole["path"]) - 5
    assert got["length_us"] == whole["length_us"] and got["what_if"]["saving_us"] > 0


def test_the_command_line_starts_without_duckdb_or_mcp():
    """They load only for tracetui sql and tracetui mcp: every other command starts as fast as before."""
    import subprocess

    probe = "import sys, tui.cli; tui.cli.build_parser(); print([m for m in ('duckdb', 'mcp', 'pandas') if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT).stdout
    assert out.strip() == "[]"


async def test_the_device_tools_answer_as_the_api(isolated_cache):
    """GIVEN the server WHEN breakdown, queues and op_kernels are called THEN they answer what the API says."""
    ddp = str(SAMPLES / "a100-ddp-nccl.json.gz")
    t = tracetui.load(ddp)
    async with serve(isolated_cache) as client:
        assert await call(client, "breakdown", trace=ddp, by="stream") == t.breakdown(by="stream")
        assert await call(client, "breakdown", trace=ddp, step=5) == t.breakdown(step=5)
        assert await call(client, "breakdown", trace=ddp, idle_stats=True) == t.breakdown(idle_stats=True)
        assert await call(client, "queues", trace=ddp) == t.queues()
        assert await call(client, "op_kernels", trace=ddp, limit=5) == page(t.op_kernels(), "rows", 5, 0)
        assert await call(client, "sequences", trace=ddp, top=3) == t.sequences(top=3)
        assert "no ProfilerStep#99 in the trace" in await failure(client, "breakdown", trace=ddp, step=99)
        assert "by must be one of rank, stream" in await failure(client, "breakdown", trace=ddp, by="device")


def mixed_calls() -> list[tuple[str, dict]]:
    """Every tool on two traces (with what each refuses: code and memory on MOE), each call twice: 54 calls."""
    kinds = "SELECT kind, count(*) AS n, sum(dur_us) AS us FROM events GROUP BY kind ORDER BY kind"
    made: list[tuple[str, dict]] = [("diff", {"a": BERT, "b": MOE, "limit": 5}), ("diff", {"a": MOE, "b": BERT})]
    for trace in (BERT, MOE):
        made += [
            ("summary", {"trace": trace}),
            ("explain", {"trace": trace}),
            ("ops", {"trace": trace, "sort": "self_cpu", "limit": 10}),
            ("kernels", {"trace": trace, "limit": 5, "offset": 1}),
            ("code", {"trace": trace, "all_frames": True}),
            ("memory", {"trace": trace}),
            ("roofline", {"trace": trace, "limit": 5}),
            ("critical", {"trace": trace, "what_if": ["launch=0"], "limit": 10}),
            ("steps", {"trace": trace}),
            ("search_events", {"trace": trace, "name": "gemm|memcpy|mm", "limit": 20}),
            ("events_in_range", {"trace": trace, "start_us": 200.0, "end_us": 400.0, "limit": 30}),
            ("event", {"trace": trace, "id": 100}),
            ("sql", {"trace": trace, "query": kinds}),
        ]
    return made + made


async def answers(client: Client, made: list[tuple[str, dict]], at_once: bool) -> list[tuple[bool, object]]:
    """Each call's answer (is it an error, and its structured content or its text), made at once or one by one."""

    async def one(tool: str, args: dict) -> tuple[bool, object]:
        result = await client.call_tool(tool, args)
        return result.is_error, _text(result) if result.is_error else result.structured_content

    if at_once:
        return list(await asyncio.gather(*(one(tool, args) for tool, args in made)))
    return [await one(tool, args) for tool, args in made]


async def test_many_calls_at_once_answer_as_each_call_made_alone_cold_then_warm(tmp_path):
    """GIVEN every tool called on two traces, each call alone, one after another (a server of its own)
    WHEN the same 54 calls are made at once on an empty cache, then again on a new server over that cache
    THEN no call fails that succeeded alone, and every answer is the one it gave alone (errors included)."""
    made = mixed_calls()
    async with serve(tmp_path / "alone") as client:
        alone = await answers(client, made, at_once=False)
    refused = {made[k][0] + " " + Path(made[k][1].get("trace", "")).name for k, (err, _) in enumerate(alone) if err}
    assert refused == {"code b300-moe-small.json.gz", "memory b300-moe-small.json.gz"}  # as the API refuses them
    cache = tmp_path / "shared"
    for _ in ("cold", "warm"):
        async with serve(cache) as client:
            got = await answers(client, made, at_once=True)
        assert [k for k, (g, a) in enumerate(zip(got, alone, strict=True)) if g != a] == []
    assert not [p for p in cache.rglob(".*") if not p.name.startswith(".tracetui-")], "temporary files left"


HTA = SHARED / "hta-2022-11-v100-ddp-memory-216k" / "df_index_resolver.json.gz"


@pytest.mark.slow
@pytest.mark.skipif(not HTA.exists(), reason="needs ../shared/traces (the 51 MB HTA trace)")
async def test_calls_at_once_on_the_51_mb_trace_while_it_loads_answer_as_the_api_alone(tmp_path):
    """GIVEN 36 calls on the 51 MB HTA trace and BERT made at once on an empty cache (so every HTA call first
    waits for its one load) THEN each answers what the API answers alone, on a cache-less load."""
    kinds = "SELECT kind, count(*) AS n FROM events GROUP BY kind ORDER BY kind"
    menu = {
        "summary": ({}, lambda t: t.summary()),
        "ops": ({"limit": 20}, lambda t: page(t.ops(), "rows", 20, 0)),
        "kernels": ({"sort": "count"}, lambda t: page(t.kernels(sort="count"), "rows", 50, 0)),
        "critical": ({"limit": 20}, lambda t: page(t.critical(), "path", 20, 0)),
        "sql": ({"query": kinds}, lambda t: t.sql(kinds)["rows"]),
        "search_events": ({"name": "nccl|gemm"}, lambda t: t.events(name="nccl|gemm", limit=50)),
    }
    alone = {str(p): tracetui.load(p, cache=False) for p in (HTA, BERT)}
    made = [(tool, trace) for _ in range(3) for trace in alone for tool in menu]
    async with serve(tmp_path / "cache") as client:
        got = await asyncio.gather(*(call(client, tool, trace=trace, **menu[tool][0]) for tool, trace in made))
    for (tool, trace), answer in zip(made, got, strict=True):
        want = menu[tool][1](alone[trace])
        part = answer["rows"] if tool == "sql" else answer["events"] if tool == "search_events" else answer
        assert part == want, f"{tool} on {Path(trace).name}"


async def test_bad_arguments_are_one_line_naming_the_argument_and_what_it_takes(isolated_cache):
    async with serve(isolated_cache) as client:
        assert await failure(client, "ops", trace=BERT, limit="ten") == (
            "ops: bad argument limit='ten': Input should be a valid integer, unable to parse string as an integer "
            "(limit takes int, default 50)"
        )
        assert await failure(client, "summary") == "summary: missing argument trace (trace takes str)"
        assert await failure(client, "kernels", trace=BERT, limt=5) == (
            "kernels takes no argument 'limt'; it takes trace, sort, limit, offset"
        )
        assert (await failure(client, "sumary", trace=BERT)).startswith(
            "no tool named 'sumary'; the tools: allocations, breakdown, code, "
        )
        assert await failure(client, "kernels", trace=BERT, sort="fastest") == (
            "unknown sort key 'fastest'; choose from total, count, avg, min, max, std, latency, latency_p95, name"
        )
        assert await failure(client, "diff", a=BERT, b=" ") == (
            "diff: b is empty; give the path of a .json or .json.gz trace, or of a folder of traces, as the server "
            "sees it"
        )
        from tui.sql import TABLES

        assert (await failure(client, "sql", trace=BERT, query="SELECT * FROM nothing")).endswith(
            f"(this trace's tables: {', '.join(TABLES)})"
        )
        relative = "traces/nope.json"
        assert await failure(client, "summary", trace=relative) == (
            f"{relative}: no such file (a relative path is read from the server's folder, {ROOT}: give an absolute path)"
        )


async def test_an_unexpected_failure_is_one_line_for_the_agent_and_one_line_in_the_log(monkeypatch, caplog):
    """GIVEN a tool that fails as no caller could have caused (a bug) WHEN it is called THEN the agent reads one
    line saying so and the server's log gets one line, its traceback only with --debug."""
    from tui.cli.mcp.server import build_server

    monkeypatch.setattr(tracetui.Trace, "summary", lambda self: 1 / 0)
    for debug in (False, True):
        caplog.clear()
        async with Client(build_server(debug=debug)) as client:
            text = await failure(client, "summary", trace=BERT)
            assert (await call(client, "kernels", trace=BERT, limit=1))["rows"]  # still serving
        assert text == (
            "summary failed unexpectedly (ZeroDivisionError: division by zero); this is a bug in tracetui, not in "
            "the call (started with --debug, the server logs its traceback)"
        )
        logged = [r for r in caplog.records if r.levelno >= logging.WARNING]
        assert [r.getMessage() for r in logged] == [f"summary failed: {text}"]
        assert (logged[0].exc_info is not None) is debug


def test_the_servers_pipes_carry_only_the_protocol(tmp_path):
    """While serving, a stray print (or a child process) writes to stderr, never into the answers; lines come in
    whole however the pipe cuts them, and an answer longer than the pipe holds goes out whole."""
    script = """
import os, sys, anyio
from tui.cli.mcp import stdio
async def main(wire_in, wire_out):
    print("stray print", flush=True)
    os.system("echo child process")
    lines = [line async for line in wire_in]
    await wire_out.write("".join(f"{len(line)} {line!r}\\n" for line in lines))
    await wire_out.write("x" * 300_000 + "\\n")
with stdio.claimed() as (wire_in, wire_out):
    anyio.run(main, wire_in, wire_out)
print("after", flush=True)
"""
    proc = subprocess.Popen(
        [sys.executable, "-c", script], cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    out, err = proc.communicate(b'{"a": 1}\n{"b": "\xc3\xa9"}\nno newline at the end', timeout=60)
    assert proc.returncode == 0, err
    lines = out.decode().splitlines()
    assert lines[:3] == ["9 '{\"a\": 1}\\n'", '11 \'{"b": "é"}\\n\'', "21 'no newline at the end'"]
    assert lines[3] == "x" * 300_000 and lines[4:] == ["after"]  # fd 1 is the wire again once served
    assert err.decode().splitlines()[:2] == ["stray print", "child process"]


async def test_of_the_calls_waiting_the_quickest_goes_next_and_a_long_wait_moves_a_call_up():
    """GIVEN one worker, busy WHEN a call expected to be long and one expected to be quick wait THEN the quick one
    goes first; and a long call that has waited longer than it is expected to run goes before a newcomer."""
    import threading

    from tui.cli.mcp.turns import Turns

    turns = Turns(1)
    turns.took.update({("critical", "t"): 5.0, ("summary", "t"): 0.01, ("sql", "t"): 0.2})
    ran: list[str] = []

    async def wave(waits: list[tuple[str, float]]) -> None:
        gate = threading.Event()
        busy = asyncio.create_task(turns.run(("open", "t"), gate.wait))
        await asyncio.sleep(0.05)
        calls = []
        for tool, pause in waits:
            calls.append(asyncio.create_task(turns.run((tool, "t"), lambda tool=tool: ran.append(tool))))
            await asyncio.sleep(pause)
        gate.set()
        await asyncio.gather(busy, *calls)

    await wave([("critical", 0), ("summary", 0)])
    assert ran == ["summary", "critical"]
    ran.clear()
    await wave([("sql", 0.5), ("summary", 0)])  # sql (0.2 s expected) has waited 0.5 s when summary comes
    assert ran == ["sql", "summary"]
    assert turns.free == 1 and not turns.waiting


async def test_a_call_cancelled_while_it_waits_gives_its_turn_on():
    import threading

    from tui.cli.mcp.turns import Turns

    turns = Turns(1)
    gate = threading.Event()
    busy = asyncio.create_task(turns.run(("open", "t"), gate.wait))
    await asyncio.sleep(0.05)
    gone = asyncio.create_task(turns.run(("summary", "t"), lambda: "never"))
    kept = asyncio.create_task(turns.run(("ops", "t"), lambda: "ran"))
    await asyncio.sleep(0.05)
    gone.cancel()
    gate.set()
    assert await kept == "ran" and await busy is True
    with pytest.raises(asyncio.CancelledError):
        await gone
    assert turns.free == 1 and not turns.waiting
    # a call given its turn but cancelled before it ran passes the turn on too
    turns.free = 0
    waiter = asyncio.create_task(turns._wait(("summary", "t")))
    await asyncio.sleep(0.01)
    turns._next()  # the turn is given (the waiter has not run yet)
    waiter.cancel()
    await asyncio.gather(waiter, return_exceptions=True)
    assert turns.free == 1 and not turns.waiting


def test_a_rank_file_rewritten_in_place_is_not_served_stale(tmp_path):
    """A folder whose rank file is rewritten in place (the folder's own stat unchanged, the file's size and
    mtime put back) is opened again: the open-trace key holds each file's identity."""
    from tui.cli.mcp.traces import Traces

    folder = tmp_path / "job"
    shutil.copytree(SAMPLES / "hta-2rank", folder)
    rank1 = folder / "sampled_rank-1.json.gz"
    traces = Traces(cache=True)
    first = traces.get(str(folder))
    assert traces.get(str(folder)) is first  # kept open
    folder_st, st = folder.stat(), rank1.stat()
    other = (folder / "sampled_rank-0.json.gz").read_bytes()  # rank 0's events, cut to rank 1's size
    data = other[: st.st_size] + b"\0" * max(0, st.st_size - len(other))
    with open(rank1, "r+b") as f:  # in place: the same inode, the same size
        f.write(bytes(data))
    os.utime(rank1, ns=(st.st_atime_ns, st.st_mtime_ns))
    os.utime(folder, ns=(folder_st.st_atime_ns, folder_st.st_mtime_ns))
    assert (rank1.stat().st_size, rank1.stat().st_mtime_ns) == (st.st_size, st.st_mtime_ns)
    again = traces.get(str(folder))
    assert again is not first and again.results.trace.n != first.results.trace.n
