// The person's approval of `run_process_capture` through the official MCP TypeScript SDK v2
// client (`@modelcontextprotocol/client`): its `elicitation/create` handler is asked by the
// server in the 2025 era (`legacy`: a request before the answer) and through the SDK's
// `input_required` rounds in 2026-07-28 (`auto`). A person who accepts sees the program and
// its crash comes back (SIGSEGV in `inner`, called from `middle`); a person who declines gets
// an error and nothing is recorded. REA_BIN and REA_CRASH_DIR (the crashing programs of
// test_trace_crash.py) come from tests/sdk_clients.rs.
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";

const BIN = process.env.REA_BIN;
const DIR = process.env.REA_CRASH_DIR;

const MODES = [
  { name: "legacy", mode: "legacy", version: "2025-11-25" },
  { name: "auto", mode: "auto", version: "2026-07-28" },
];

/** A client whose person answers every elicitation with `action`, and what it was shown. */
async function personAnswering(mode, action) {
  const transport = new StdioClientTransport({
    command: BIN,
    args: ["serve", "--store", "memory", "--root", DIR],
    stderr: "inherit",
  });
  const client = new Client(
    { name: "rea-node-sdk-v2-approval-test", version: "1.0.0" },
    { versionNegotiation: { mode }, capabilities: { elicitation: { form: {} } } },
  );
  const shown = [];
  client.setRequestHandler("elicitation/create", async (request) => {
    shown.push(request.params.message);
    assert.ok("run" in request.params.requestedSchema.properties, JSON.stringify(request.params));
    return action === "accept" ? { action, content: { run: true } } : { action };
  });
  await client.connect(transport);
  return { client, shown };
}

/** `run_process_capture` of `name` in a session of its own: the call's result and the session. */
async function capture(client, name) {
  const opened = await client.callTool({
    name: "open_binary",
    arguments: { path: join(DIR, name), new_session: true },
  });
  assert.equal(opened.isError, false, JSON.stringify(opened));
  const { session, current_document: program } = opened.structuredContent;
  const run = await client.callTool({ name: "run_process_capture", arguments: { program, session } });
  return { run, session };
}

for (const { name, mode, version } of MODES) {
  test(`v2 (${name}): a person who accepts sees the program, and its crash is traced to code`, async () => {
    const { client, shown } = await personAnswering(mode, "accept");
    try {
      assert.equal(client.getNegotiatedProtocolVersion(), version);
      const { run } = await capture(client, "two_deep");
      assert.equal(run.isError, false, JSON.stringify(run));
      assert.equal(shown.length, 1, "the person was asked once");
      assert.ok(shown[0].includes(`Program: "${join(DIR, "two_deep")}"`), shown[0]);
      const result = run.structuredContent;
      assert.equal(result.capture.exit.signal, "SIGSEGV", JSON.stringify(result.capture.exit));
      assert.match(result.capture.approval.approved_by, /^the person, asked through MCP/);
      assert.equal(result.fault.procedure.name, "inner", JSON.stringify(result.fault));
      assert.ok(result.fault.callers.some((caller) => caller.name === "middle"), JSON.stringify(result.fault));
    } finally {
      await client.close();
    }
  });

  test(`v2 (${name}): a person who declines: an error, and nothing runs or is recorded`, async () => {
    const { client, shown } = await personAnswering(mode, "decline");
    try {
      const { run, session } = await capture(client, "null_write");
      assert.equal(run.isError, true, JSON.stringify(run));
      assert.match(run.content[0].text, /decline/);
      assert.equal(shown.length, 1);
      const ledger = await client.callTool({ name: "list_evidence", arguments: { session } });
      const operations = ledger.structuredContent.evidence.map((record) => record.operation);
      assert.ok(!operations.includes("run_process_capture"), JSON.stringify(operations));
    } finally {
      await client.close();
    }
  });
}
