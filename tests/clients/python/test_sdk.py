"""Drives the built `rea serve` with the official MCP Python SDK client over stdio.

Run by tests/sdk_clients.rs with REA_BIN, REA_CATALOG, REA_LS, REA_LIBC and REA_CAPTURE set,
once per mode: `auto` (the default: probes `server/discover` and, since the server answers it,
stays on 2026-07-28), `2026-07-28` (modern without a probe) and `legacy` (the `initialize`
handshake). On 2026-07-28 prompt-list changes arrive on a `subscriptions/listen` stream; on
2025-11-25 through the message handler. In each mode three servers are driven: one with the
catalog fixture and a prompt file, one holding two binary sessions (REA_LS and REA_LIBC) of
which one is closed, and one whose resources are listed, completed and read.

With a URL after the mode, the last two flows run against that Streamable HTTP server (the
SDK's streamable HTTP client transport), where no session handle is ever completed.
"""

import asyncio
import json
import os
import re
import sys
import tempfile

import anyio
from mcp import Client, MCPError, StdioServerParameters, types
from mcp.client.subscriptions import PromptsListChanged
from mcp.shared.uri_template import UriTemplate

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


LS = os.environ["REA_LS"]
LIBC = os.environ["REA_LIBC"]
with open(os.environ["REA_CAPTURE"]) as capture_file:
    CAPTURE = json.load(capture_file)
HELLO_SHA256 = "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"
HANDLE = re.compile(r"bs_[A-Za-z0-9_-]{22}")

TEMPLATES = [
    "rea://session/{session}/evidence/{evidence_id}",
    "rea://session/{session}/unknown/{unknown_id}",
    "rea://session/{session}/document/{document}/procedure/{procedure}",
    "rea://session/{session}/inventory/{manifest_id}/occurrence/{occurrence_id}",
    "rea://session/{session}/capture/{capture_id}",
]
STATIC = [
    "rea://schema/artifact-inventory-v1",
    "rea://schema/process-capture-v4",
    "rea://schema/catalog-v1",
    "rea://guide/templates",
]


def served(mode: str, url: str | None) -> Client:
    """A client of `rea serve` with no binary open: a server of its own over stdio, or the
    Streamable HTTP server at `url`."""
    if url is not None:
        return Client(url, mode=mode)
    return Client(StdioServerParameters(command=os.environ["REA_BIN"], args=["serve", "--store", "memory"]), mode=mode)


async def call(client: Client, name: str, arguments: dict) -> types.CallToolResult:
    """A tool call that must succeed."""
    result = await client.call_tool(name, arguments)
    assert not result.is_error, (name, result.content)
    assert isinstance(result.structured_content, dict), (name, result)
    return result


async def prompt_values(client: Client, argument: str, value: str, context: dict) -> types.Completion:
    """The completion of a trace_crash argument, with `context.arguments`."""
    done = await client.complete(
        types.PromptReference(type="ref/prompt", name="trace_crash"),
        {"name": argument, "value": value},
        context,
    )
    return done.completion


async def variable_values(client: Client, template: str, variable: str, value: str, context: dict) -> list:
    """The values completing `variable` of `template`, the other variables in `context`."""
    done = await client.complete(
        types.ResourceTemplateReference(type="ref/resource", uri=template),
        {"name": variable, "value": value},
        context,
    )
    return done.completion.values


async def read_json(client: Client, uri: str):
    """The one JSON content of a resource read."""
    read = await client.read_resource(uri)
    assert len(read.contents) == 1, read
    assert read.contents[0].uri == uri, read
    assert read.contents[0].mime_type == "application/json", read
    return json.loads(read.contents[0].text)


async def two_sessions(mode: str, url: str | None) -> None:
    """Opens REA_LS and REA_LIBC in two sessions, completes and renders in each, closes one.
    Over HTTP the server never completes session handles (each is a bearer token)."""
    async with served(mode, url) as client:
        ls = (await call(client, "open_binary", {"path": LS})).structured_content
        libc = (await call(client, "open_binary", {"path": LIBC})).structured_content
        assert HANDLE.fullmatch(ls["session"]) and HANDLE.fullmatch(libc["session"]), (ls, libc)
        assert ls["session"] != libc["session"]
        assert (ls["label"], ls["current_document"]) == (LS, os.path.basename(LS)), ls
        assert (libc["label"], libc["current_document"]) == (LIBC, os.path.basename(LIBC)), libc
        assert "replaced" not in libc, libc

        # The same prefix completes from each session's own binary.
        in_ls = await prompt_values(client, "procedure", "mall", {"session": ls["session"]})
        in_libc = await prompt_values(client, "procedure", "mall", {"session": libc["session"]})
        for name in ["malloc", "malloc_trim", "malloc_usable_size", "mallopt"]:
            assert name in in_libc.values, (name, in_libc)
            assert name not in in_ls.values, (name, in_ls)
        assert "malloc@plt" in in_ls.values, in_ls
        assert all(value.startswith("mall") for value in in_ls.values), in_ls
        documents = await prompt_values(client, "document", "", {"session": libc["session"]})
        assert documents.values == [os.path.basename(LIBC)], documents
        handles = await prompt_values(client, "session", "bs_", {})
        assert handles.values == ([] if url else sorted([ls["session"], libc["session"]])), handles

        # trace_crash renders for each session, with that session in its data block.
        for session, procedure in [(ls["session"], "malloc@plt"), (libc["session"], "malloc")]:
            arguments = {"symptom": "SIGSEGV in malloc", "procedure": procedure, "session": session}
            got = await client.get_prompt("trace_crash", arguments)
            text = got.messages[0].content.text
            block = json.dumps(arguments, sort_keys=True, separators=(",", ":"))
            assert block in text, (block, text)
            assert "A binary is open in this session." in text, text

        # Closing the ls session leaves libc's answering as before.
        closed = (await call(client, "close_binary", {"session": ls["session"]})).structured_content
        assert (closed["session"], closed["label"]) == (ls["session"], LS), closed
        still = await prompt_values(client, "procedure", "mall", {"session": libc["session"]})
        assert still.values == in_libc.values, still
        listed = (await call(client, "list_documents", {"session": libc["session"]})).structured_content
        assert [d["name"] for d in listed["documents"]] == [os.path.basename(LIBC)], listed
        gone_values = await prompt_values(client, "procedure", "mall", {"session": ls["session"]})
        assert gone_values.values == [], gone_values
        left = await prompt_values(client, "session", "", {})
        assert left.values == ([] if url else [libc["session"]]), left
        gone = await client.call_tool("list_documents", {"session": ls["session"]})
        assert gone.is_error, gone
        assert f'no binary session "{ls["session"]}" is open' in gone.content[0].text, gone
        try:
            await client.get_prompt("trace_crash", {"symptom": "x", "session": ls["session"]})
        except MCPError as error:
            assert error.code == -32602 and ls["session"] in error.message, error
        else:
            raise AssertionError("a prompt rendered for a closed session")
        await call(client, "close_binary", {"session": libc["session"]})


async def resources(mode: str, url: str | None) -> None:
    """Lists resources and templates, completes a variable of each template and reads a
    resource of each kind, through URIs the SDK's UriTemplate expands."""
    era_code = -32002 if EXPECTED_VERSION[mode] == "2025-11-25" else -32602
    async with served(mode, url) as client:
        templates = await client.list_resource_templates()
        assert [t.uri_template for t in templates.resource_templates] == TEMPLATES, templates
        assert all(t.mime_type == "application/json" for t in templates.resource_templates)
        listed = await client.list_resources()
        assert [r.uri for r in listed.resources] == STATIC, listed
        schema = await client.read_resource("rea://schema/process-capture-v4")
        assert schema.contents[0].mime_type == "application/schema+json", schema
        assert len(schema.contents[0].text.encode()) == listed.resources[1].size
        assert "$schema" in json.loads(schema.contents[0].text)

        opened = (await call(client, "open_binary", {"path": LIBC})).structured_content
        session, document = opened["session"], opened["current_document"]
        evidence, unknown, procedure, occurrence, capture = (UriTemplate.parse(t) for t in TEMPLATES)
        handles = await variable_values(client, TEMPLATES[4], "session", "", {})
        assert handles == ([] if url else [session]), handles

        # An Evidence record; the observing call links it as a resource.
        segments = await call(client, "list_segments", {"session": session})
        evidence_id = segments.structured_content["evidence_id"]
        evidence_uri = evidence.expand({"session": session, "evidence_id": evidence_id})
        links = [c for c in segments.content if c.type == "resource_link"]
        assert [str(link.uri) for link in links] == [evidence_uri], segments.content
        ids = await variable_values(client, TEMPLATES[0], "evidence_id", "ev-", {"session": session})
        assert evidence_id in ids, ids
        record = await read_json(client, evidence_uri)
        assert (record["id"], record["operation"], record["document"]) == (
            evidence_id,
            "list_segments",
            document,
        ), record

        # An unknown with its revisions.
        first = (await call(client, "register_unknown", {"session": session, "question": "Who frees this?"}))
        first_id = first.structured_content["id"]
        head = await call(
            client,
            "refine_unknown",
            {"session": session, "id": first_id, "question": "Who frees it, precisely?"},
        )
        head_id = head.structured_content["id"]
        assert await variable_values(client, TEMPLATES[1], "unknown_id", "", {"session": session}) == [head_id]
        chain = await read_json(client, unknown.expand({"session": session, "unknown_id": head_id}))
        assert [r["id"] for r in chain["revisions"]] == [first_id, head_id], chain

        # A procedure dossier: the document completes in the session, the procedure within it.
        assert await variable_values(client, TEMPLATES[2], "document", "", {"session": session}) == [document]
        found = await variable_values(
            client, TEMPLATES[2], "procedure", "malloc_u", {"session": session, "document": document}
        )
        assert found == ["malloc_usable_size"], found
        dossier = await read_json(
            client, procedure.expand({"session": session, "document": document, "procedure": "malloc"})
        )
        info = dossier["procedure_info"]
        names = [info["name"]["name"], *(alias["name"] for alias in info.get("aliases", []))]
        assert "malloc" in names, info
        assert dossier["disassembly"]["instructions"][0]["address"] == info["address"], dossier
        assert isinstance(dossier["callers"]["callers"], list), dossier
        assert isinstance(dossier["callees"]["callees"], list), dossier

        # An occurrence of a retained inventory: the manifest completes, the occurrence within it.
        folder = tempfile.mkdtemp(prefix="rea-python-inventory-")
        with open(os.path.join(folder, "notes.txt"), "w") as f:
            f.write("hello\n")
        page = (await call(client, "inventory_artifacts", {"session": session, "path": folder})).structured_content
        manifest_id = page["manifest_id"]
        occurrence_id = page["occurrences"][0]["occurrence_id"]
        manifests = await variable_values(client, TEMPLATES[3], "manifest_id", "", {"session": session})
        assert manifests == [manifest_id], manifests
        occurrences = await variable_values(
            client, TEMPLATES[3], "occurrence_id", "", {"session": session, "manifest_id": manifest_id}
        )
        assert occurrences == [occurrence_id], occurrences
        read = await read_json(
            client,
            occurrence.expand({"session": session, "manifest_id": manifest_id, "occurrence_id": occurrence_id}),
        )
        assert read["manifest_id"] == manifest_id, read
        assert (read["occurrence"]["path"], read["occurrence"]["sha256"]) == ("notes.txt", HELLO_SHA256), read

        # A capture, read back as imported.
        imported = await call(client, "import_process_capture", {"session": session, "capture": CAPTURE})
        capture_id = imported.structured_content["evidence_id"]
        assert await variable_values(client, TEMPLATES[4], "capture_id", "", {"session": session}) == [capture_id]
        assert await read_json(client, capture.expand({"session": session, "capture_id": capture_id})) == CAPTURE

        # A part that does not resolve is an error naming it, with the era's code.
        for uri, part in [
            (evidence.expand({"session": "bs_gone", "evidence_id": evidence_id}), "bs_gone"),
            (capture.expand({"session": session, "capture_id": evidence_id}), "the capture_id part"),
        ]:
            try:
                await client.read_resource(uri)
            except MCPError as error:
                assert error.code == era_code and part in error.message, (uri, error.code, error.message)
            else:
                raise AssertionError(f"{uri} read")
        await call(client, "close_binary", {"session": session})


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
        args=["serve", "--store", "memory", "--open", os.environ["REA_CATALOG"], "--prompt-file", prompt_file,
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
    await two_sessions(mode, None)
    await resources(mode, None)
    print(f"python sdk ({mode}): ok")


async def run_http(mode: str, url: str) -> None:
    """The two-session and resources flows against the Streamable HTTP server at `url`."""
    await two_sessions(mode, url)
    await resources(mode, url)
    print(f"python sdk over HTTP ({mode}): ok")


if __name__ == "__main__":
    # `test_sdk.py MODE` drives servers of its own over stdio; `test_sdk.py MODE URL` the
    # Streamable HTTP server at URL.
    if len(sys.argv) > 2:
        asyncio.run(run_http(sys.argv[1], sys.argv[2]))
    else:
        asyncio.run(run(sys.argv[1] if len(sys.argv) > 1 else "auto"))
