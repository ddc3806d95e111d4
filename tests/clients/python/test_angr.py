"""Drives the built `rea serve --provider angr` with the official MCP Python SDK client over
stdio: the binary REA_ANGR_BINARY (a C program the test compiled) is open, both providers are
listed, completion of a procedure through `angr` answers empty while the adapter starts (which
the completion request itself begins) and names the program's functions once it is up, and
`decompile` returns pseudo-C recorded as decompiler output.

Run by tests/sdk_clients.rs with REA_BIN, REA_ANGR_DIR and REA_ANGR_BINARY set, once per mode
(`auto`: 2026-07-28 after a `server/discover` probe; `legacy`: the `initialize` handshake).
"""

import asyncio
import json
import os
import sys
import time

from mcp import Client, StdioServerParameters, types

MODERN = "2026-07-28"
EXPECTED_VERSION = {"auto": MODERN, "legacy": "2025-11-25"}

# How long the adapter may take to start and build angr's CFG of the test program.
READY_WITHIN_S = 120


def structured(result):
    assert not result.is_error, result
    return result.structured_content or json.loads(result.content[0].text)


async def run(mode: str) -> None:
    server = StdioServerParameters(
        command=os.environ["REA_BIN"],
        args=["serve", "--store", "memory", "--provider", "angr", "--angr-dir", os.environ["REA_ANGR_DIR"],
              "--open", os.environ["REA_ANGR_BINARY"]],
    )
    async with Client(server, mode=mode) as client:
        assert client.protocol_version == EXPECTED_VERSION[mode], client.protocol_version
        providers = structured(await client.call_tool("list_providers", {}))
        assert [p["id"] for p in providers["providers"]] == ["native", "angr"], providers

        # Completion never waits for the adapter: the first request starts it in the
        # background and answers empty; later ones are served by it.
        reference = types.PromptReference(type="ref/prompt", name="trace_crash")
        first = await client.complete(reference, {"name": "procedure", "value": "make_"},
                                      {"provider": "angr"})
        assert first.completion.values in ([], ["make_report"]), first
        deadline = time.monotonic() + READY_WITHIN_S
        values = first.completion.values
        attempts = 1
        while values != ["make_report"]:
            assert time.monotonic() < deadline, f"angr completion still {values} after {attempts} tries"
            await asyncio.sleep(0.5)
            done = await client.complete(reference, {"name": "procedure", "value": "make_"},
                                         {"provider": "angr"})
            values = done.completion.values
            attempts += 1
        print(f"python sdk angr ({mode}): completion served by angr after {attempts} requests")

        result = await client.call_tool("decompile", {"provider": "angr", "procedure": "make_report"})
        decompiled = structured(result)
        code = decompiled["code"]
        for call in ["malloc", "snprintf", "free", "report for %s: %d"]:
            assert call in code, (call, code)
        assert decompiled["evidence_kind"] == "decompiler_output", decompiled
        assert decompiled["procedure"]["name"] == "make_report", decompiled
        links = [c for c in result.content if c.type == "resource_link"]
        assert [link.name for link in links] == [decompiled["evidence_id"]], result.content
        record = await client.read_resource(links[0].uri)
        retained = json.loads(record.contents[0].text)
        assert retained["operation"] == "decompile", retained
        assert retained["result"]["code"] == code
    print(f"python sdk angr ({mode}): ok")


if __name__ == "__main__":
    asyncio.run(run(sys.argv[1] if len(sys.argv) > 1 else "auto"))
