"""trace_crash from crash to code with the official MCP Python SDK client, whose person answers
the capture's approval (MCP elicitation).

Run by tests/sdk_clients.rs with REA_BIN and REA_CRASH_DIR set (a directory of crashing C
programs the test compiled: null_write, aborts, overflow, divides, two_deep), once per mode:
`auto` (2026-07-28: the server answers `input_required`, the SDK calls the elicitation
callback and retries with the answer) and `legacy` (2025-11-25: the server sends
`elicitation/create` before it answers). With a URL after the mode, the same flow runs against
that Streamable HTTP server (started with `--root REA_CRASH_DIR`).

For each program: render trace_crash, run it with run_process_capture (approved by the
callback, which checks that the person is shown the program), check how it ended and where it
faulted, complete trace_crash's `capture` argument to the capture's Evidence ID, and follow
the workflow to the faulting procedure's callers. Then a person who declines: nothing runs.
"""

import asyncio
import json
import os
import sys

from mcp import Client, StdioServerParameters, types

MODERN = "2026-07-28"
EXPECTED_VERSION = {"auto": MODERN, "legacy": "2025-11-25"}
DIR = os.path.realpath(os.environ["REA_CRASH_DIR"])

# program, signal, faulting procedure (None: no fault address), callers that must be listed
CASES = [
    ("null_write", "SIGSEGV", "write_null", ["main"]),
    ("aborts", "SIGABRT", None, []),
    ("overflow", "SIGSEGV", "recurse", []),
    ("divides", "SIGFPE", "divide", ["main"]),
    ("two_deep", "SIGSEGV", "inner", ["middle"]),
]


def structured(result):
    assert not result.is_error, result
    return result.structured_content or json.loads(result.content[0].text)


class Person:
    """Answers each elicitation with `action` and keeps what it was shown."""

    def __init__(self, action: str) -> None:
        self.action = action
        self.shown: list[str] = []

    async def __call__(self, context, params):
        self.shown.append(params.message)
        assert "run" in params.requested_schema["properties"], params
        content = {"run": True} if self.action == "accept" else None
        return types.ElicitResult(action=self.action, content=content)


def served(url: str | None):
    if url:
        return url
    return StdioServerParameters(command=os.environ["REA_BIN"], args=["serve", "--store", "memory", "--root", DIR])


async def run(mode: str, url: str | None) -> None:
    person = Person("accept")
    async with Client(served(url), mode=mode, elicitation_callback=person) as client:
        assert client.protocol_version == EXPECTED_VERSION[mode], client.protocol_version
        for name, signal, procedure, callers in CASES:
            path = os.path.join(DIR, name)
            opened = structured(await client.call_tool("open_binary", {"path": path, "new_session": True}))
            document = opened["current_document"]
            # A 2026 request stands alone: every call names its session.
            session = opened["session"]

            prompt = await client.get_prompt(
                "trace_crash", {"symptom": f"{name} crashed", "document": document, "session": session}
            )
            text = " ".join(m.content.text for m in prompt.messages if m.content.type == "text")
            assert "run_process_capture" in text and "never authorizes a run" in text, text

            shown_before = len(person.shown)
            result = structured(await client.call_tool("run_process_capture", {"program": document, "session": session}))
            assert len(person.shown) == shown_before + 1, "the person was asked once"
            assert f'Program: "{path}"' in person.shown[-1], person.shown[-1]
            capture = result["capture"]
            assert capture["exit"].get("signal") == signal, (name, capture["exit"], result.get("stderr_head"))
            assert capture["approval"]["approved_by"].startswith("the person, asked through MCP"), capture["approval"]
            if procedure is None:
                assert result.get("fault") is None, (name, result.get("fault"))
            else:
                fault = result["fault"]
                assert fault["signal"] == signal, (name, fault)
                assert fault["procedure"]["name"] == procedure, (name, fault)
                on_stack = [p["name"] for p in fault.get("callers", [])]
                for caller in callers:
                    assert caller in on_stack, (name, caller, on_stack)

            # The capture is offered to trace_crash, and the workflow reaches the callers.
            reference = types.PromptReference(type="ref/prompt", name="trace_crash")
            completion = await client.complete(
                reference, {"name": "capture", "value": ""}, {"document": document, "session": session}
            )
            evidence = [c["evidence_id"] for c in [result] if "evidence_id" in c]
            offered = completion.completion.values
            assert evidence and evidence[0] in offered, (evidence, offered)
            if procedure is not None:
                found = structured(await client.call_tool("callers", {"procedure": procedure, "session": session}))
                listed = json.dumps(found)
                for caller in callers:
                    assert caller in listed, (name, caller, found)
            structured(await client.call_tool("close_binary", {"session": session}))
            print(f"python sdk trace_crash ({mode}{' http' if url else ''}): {name} -> {signal} in {procedure}")

    # A person who declines: an error, and nothing is recorded.
    person = Person("decline")
    async with Client(served(url), mode=mode, elicitation_callback=person) as client:
        opened = structured(
            await client.call_tool("open_binary", {"path": os.path.join(DIR, "null_write"), "new_session": True})
        )
        session = opened["session"]
        declined = await client.call_tool("run_process_capture", {"program": "null_write", "session": session})
        assert declined.is_error, declined
        assert "decline" in declined.content[0].text, declined.content[0].text
        assert len(person.shown) == 1
        ledger = structured(await client.call_tool("list_evidence", {"session": session}))
        assert not any(e.get("operation") == "run_process_capture" for e in ledger["evidence"]), ledger
        structured(await client.call_tool("close_binary", {"session": session}))
    print(f"python sdk trace_crash ({mode}{' http' if url else ''}): ok")


if __name__ == "__main__":
    asyncio.run(run(sys.argv[1] if len(sys.argv) > 1 else "auto", sys.argv[2] if len(sys.argv) > 2 else None))
