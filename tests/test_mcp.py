"""`tracetui mcp`, driven by the MCP SDK's own client over stdio, as an agent drives it."""

from __future__ import annotations

import sys
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from conftest import ROOT, SAMPLES

import tracetui
from tui.cli.mcp.traces import page

pytest.importorskip("mcp")
pytest.importorskip("duckdb")
from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402
from mcp.types import CallToolResult, TextContent  # noqa: E402

BERT = str(SAMPLES / "h100-bert-small.json.gz")
TOOLS = {
    "summary", "explain", "ops", "kernels", "code", "memory", "roofline", "critical", "diff", "steps",
    "search_events", "events_in_range", "event", "sql",
    "breakdown", "queues", "op_kernels",
}  # fmt: skip


@asynccontextmanager
async def serve(cache: Path):
    """The server as an agent starts it (tracetui mcp), its cache in the test's."""
    env = {"TRACETUI_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT)}
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
            tool.description and "trace" in tool.input_schema["properties"] or name == "diff"
            for name, tool in listed.items()
        )
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
            client, "sql", trace=BERT, query="SELECT kind, count(*) AS n FROM events GROUP BY kind ORDER BY n DESC"
        )
        assert answer["rows"] == t.sql("SELECT kind, count(*) AS n FROM events GROUP BY kind ORDER BY n DESC")["rows"]


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
            assert "disabled by configuration" in text or "locked" in text, text
        assert (await call(client, "sql", trace=BERT, query="SELECT count(*) AS n FROM events"))["rows"] == [
            {"n": 2060}
        ]
    assert not target.exists() and not (tmp_path / "x.db").exists()
    assert {p.name for p in tmp_path.iterdir()} == set()  # nothing written beside the trace or anywhere asked


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
        assert await call(client, "queues", trace=ddp) == t.queues()
        assert await call(client, "op_kernels", trace=ddp, limit=5) == page(t.op_kernels(), "rows", 5, 0)
        assert "no ProfilerStep#99 in the trace" in await failure(client, "breakdown", trace=ddp, step=99)
        assert "by must be one of rank, stream" in await failure(client, "breakdown", trace=ddp, by="device")
