// Drives the built `rea serve` with the official MCP TypeScript SDK client (v1,
// `@modelcontextprotocol/sdk`, 2025-11-25) over stdio. REA_BIN (the binary), REA_CATALOG (a
// catalog fixture), REA_LS, REA_LIBC and REA_CAPTURE come from tests/sdk_clients.rs.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { McpError, PromptListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { UriTemplate } from "@modelcontextprotocol/sdk/shared/uriTemplate.js";
import { resources, twoSessions } from "../flows.mjs";

const BIN = process.env.REA_BIN;
const CATALOG = process.env.REA_CATALOG;
const SIX = [
  "investigate_feature",
  "compare_application_versions",
  "verify_reconstruction",
  "trace_crash",
  "audit_residual_unknowns",
  "prepare_bounded_process_capture",
];

const extraPrompt = [{
  name: "triage_sample",
  title: "Triage a sample",
  description: "First look at an unknown sample.",
  arguments: [{ name: "document", description: "Document (completed from Document).", family: "document" }],
  workflow: ["list_documents", "get_evidence"],
}];

test("the TypeScript SDK client lists, gets, completes and hears list_changed", async () => {
  const promptFile = join(mkdtempSync(join(tmpdir(), "rea-node-")), "prompts.json");
  writeFileSync(promptFile, "[]");
  const transport = new StdioClientTransport({
    command: BIN,
    args: ["serve", "--store", "memory", "--open", CATALOG, "--prompt-file", promptFile, "--prompt-poll-ms", "50"],
    stderr: "inherit",
  });
  const client = new Client({ name: "rea-node-sdk-test", version: "1.0.0" });
  await client.connect(transport);
  try {
    assert.ok(client.getServerCapabilities().prompts.listChanged);
    assert.ok(client.getServerCapabilities().completions);

    const { prompts } = await client.listPrompts();
    assert.deepEqual(prompts.map((p) => p.name), SIX);

    for (const prompt of prompts) {
      const args = {};
      for (const argument of prompt.arguments ?? []) {
        if (argument.required) args[argument.name] = `a ${argument.name}`;
      }
      const got = await client.getPrompt({ name: prompt.name, arguments: args });
      assert.equal(got.messages.length, 1);
      assert.equal(got.messages[0].role, "user");
      assert.match(got.messages[0].content.text, /Observations/);
    }

    const documents = await client.complete({
      ref: { type: "ref/prompt", name: "investigate_feature" },
      argument: { name: "document", value: "no" },
    });
    assert.deepEqual(documents.completion, { values: ["Notes", "NotesHelper"], total: 2, hasMore: false });

    const procedures = await client.complete({
      ref: { type: "ref/prompt", name: "trace_crash" },
      argument: { name: "procedure", value: "" },
      context: { arguments: { document: "Notes" } },
    });
    assert.deepEqual(procedures.completion.values, [
      "-[NotesSearch runQuery:]",
      "0x100003f20",
      "0x100003f80",
      "0x100004000",
      "0x100004100",
      "0x100004200",
      "main",
    ]);

    const changed = new Promise((resolve) => {
      client.setNotificationHandler(PromptListChangedNotificationSchema, () => resolve(true));
    });
    writeFileSync(promptFile, JSON.stringify(extraPrompt));
    let timer;
    const heard = await Promise.race([
      changed,
      new Promise((resolve) => { timer = setTimeout(() => resolve(false), 10000); }),
    ]);
    clearTimeout(timer);
    assert.equal(heard, true, "notifications/prompts/list_changed arrived");
    const after = await client.listPrompts();
    assert.deepEqual(after.prompts.map((p) => p.name), [...SIX, "triage_sample"]);

    await assert.rejects(
      client.getPrompt({ name: "no_such_prompt", arguments: {} }),
      (error) => error instanceof McpError && error.code === -32602,
    );
  } finally {
    await client.close();
  }
});

// The workflow of investigate_feature on a real system binary: from a string to the procedure
// that uses it, to its callers, to its disassembly, every step citing an Evidence record.
const SYSTEM_BINARY = "/bin/ls";

test("the TypeScript SDK client follows a string to its procedure, callers and code", {
  skip: existsSync(SYSTEM_BINARY) ? false : `${SYSTEM_BINARY} is not present`,
}, async () => {
  const transport = new StdioClientTransport({ command: BIN, args: ["serve", "--store", "memory"], stderr: "inherit" });
  const client = new Client({ name: "rea-node-sdk-investigation", version: "1.0.0" });
  await client.connect(transport);
  try {
    const call = async (name, args) => {
      const result = await client.callTool({ name, arguments: args });
      assert.notEqual(result.isError, true, `${name}: ${JSON.stringify(result.content)}`);
      return result.structuredContent;
    };
    const cited = new Set();
    const cite = (result) => {
      assert.match(result.evidence_id, /^ev-\d{12}$/);
      assert.ok(!cited.has(result.evidence_id), "each step appends its own record");
      cited.add(result.evidence_id);
      return result;
    };

    await call("open_binary", { path: SYSTEM_BINARY });
    const strings = cite(await call("search_strings", { contains: "Usage: %s" }));
    assert.ok(strings.strings.length >= 1, "ls prints its usage line");
    const usage = strings.strings[0];

    const xrefs = cite(await call("xrefs_to", { address: usage.address }));
    assert.equal(xrefs.target.address, usage.address);
    const users = xrefs.references.filter((reference) => reference.procedure);
    assert.ok(users.length >= 1, `a procedure refers to ${usage.address}`);
    const user = users[0].procedure.address;

    const callers = cite(await call("callers", { procedure: user }));
    assert.equal(callers.procedure.address, user);
    assert.ok(Array.isArray(callers.callers));

    const code = cite(await call("disassemble", { procedure: user, limit: 400 }));
    const referring = code.instructions.find((instruction) => instruction.address === users[0].from);
    assert.ok(referring, `the disassembly of ${user} holds the referring instruction ${users[0].from}`);

    // Every cited record is retained and names the step that observed it.
    for (const id of cited) {
      const record = await call("get_evidence", { id });
      assert.equal(record.id, id);
    }
    assert.equal(cited.size, 4);
  } finally {
    await client.close();
  }
});

async function served() {
  const transport = new StdioClientTransport({ command: BIN, args: ["serve", "--store", "memory"], stderr: "inherit" });
  const client = new Client({ name: "rea-node-sdk-sessions", version: "1.0.0" });
  await client.connect(transport);
  assert.equal(client.getServerVersion().name, "rea");
  return client;
}

test("the TypeScript SDK client keeps two binary sessions and closes one", async () => {
  const client = await served();
  try {
    await twoSessions(client, { http: false });
  } finally {
    await client.close();
  }
});

test("the TypeScript SDK client completes every resource template and reads every kind", async () => {
  const client = await served();
  try {
    await resources(client, UriTemplate, { era: "legacy", http: false });
  } finally {
    await client.close();
  }
});
