"""Drives the built `rea serve` with the official MCP Python SDK client over stdio.

Run by tests/sdk_clients.rs with REA_BIN and REA_CATALOG set, once per mode: `auto` (the
default: probes `server/discover` and, since the server answers it, stays on 2026-07-28),
`2026-07-28` (modern without a probe) and `legacy` (the `initialize` handshake). On 2026-07-28
prompt-list changes arrive on a `subscriptions/listen` stream; on 2025-11-25 through the
message handler.
"""

import asyncio
import json
import os
import sys
import tempfile

import anyio
from mcp import Client, MCPError, StdioServerParameters, types
from mcp.client.subscriptions import PromptsListChanged

MODERN = "2026-07-28"
EXPECTED_VERSION = {"auto": MODERN, MODERN: MODERN, "legacy": "2025-11-25"}

SIX = [
    "investigate_feature",
    "compare_application_versions",
    "verify_reconstruction",
    "trace_crash",
    "audit_residual_unknowns",
    "prepare_bounded_process_capture",
]

EXTRA = [
    {
        "name": "triage_sample",
        "title": "Triage a sample",
        "description": "First look at an unknown sample.",
        "arguments": [{"name": "document", "description": "Document.", "family": "document"}],
        "workflow": ["list_documents"],
    }
]


async def run(mode: str) -> None:
    folder = tempfile.mkdtemp(prefix="rea-python-")
    prompt_file = os.path.join(folder, "prompts.json")
    with open(prompt_file, "w") as f:
        f.write("[]")
    heard = anyio.Event()

    async def on_message(message) -> None:
        root = getattr(message, "root", message)
        if isinstance(root, types.PromptListChangedNotification):
            heard.set()

    server = StdioServerParameters(
        command=os.environ["REA_BIN"],
        args=["serve", "--open", os.environ["REA_CATALOG"], "--prompt-file", prompt_file,
              "--prompt-poll-ms", "50"],
    )
    async with Client(server, mode=mode, message_handler=on_message) as client:
        assert client.protocol_version == EXPECTED_VERSION[mode], client.protocol_version
        listed = await client.list_prompts()
        assert [p.name for p in listed.prompts] == SIX, listed

        for prompt in listed.prompts:
            arguments = {a.name: f"a {a.name}" for a in (prompt.arguments or []) if a.required}
            got = await client.get_prompt(prompt.name, arguments)
            assert len(got.messages) == 1 and got.messages[0].role == "user"
            assert "Observations" in got.messages[0].content.text

        done = await client.complete(
            types.PromptReference(type="ref/prompt", name="investigate_feature"),
            {"name": "document", "value": "NOTES"},
        )
        assert done.completion.values == ["Notes", "NotesHelper"], done
        assert done.completion.total == 2 and done.completion.has_more is False

        procedures = await client.complete(
            types.PromptReference(type="ref/prompt", name="trace_crash"),
            {"name": "procedure", "value": "0x1000040"},
            {"document": "Notes"},
        )
        assert procedures.completion.values == ["0x100004000"], procedures

        if client.protocol_version == MODERN:
            async with client.listen(prompts_list_changed=True) as stream:
                with open(prompt_file, "w") as f:
                    json.dump(EXTRA, f)
                with anyio.fail_after(10):
                    event = await stream.__anext__()
                assert isinstance(event, PromptsListChanged), event
        else:
            with open(prompt_file, "w") as f:
                json.dump(EXTRA, f)
            with anyio.fail_after(10):
                await heard.wait()
        after = await client.list_prompts()
        assert [p.name for p in after.prompts] == SIX + ["triage_sample"], after

        try:
            await client.get_prompt("no_such_prompt", {})
        except MCPError as error:
            assert error.code == -32602, error
        else:
            raise AssertionError("unknown prompt accepted")
    print(f"python sdk ({mode}): ok")


if __name__ == "__main__":
    asyncio.run(run(sys.argv[1] if len(sys.argv) > 1 else "auto"))
