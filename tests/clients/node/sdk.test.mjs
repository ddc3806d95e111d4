// Drives the built `rea serve` with the official MCP TypeScript SDK client over stdio.
// REA_BIN (the binary) and REA_CATALOG (a catalog fixture) come from tests/sdk_clients.rs.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { McpError, PromptListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

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
    args: ["serve", "--open", CATALOG, "--prompt-file", promptFile, "--prompt-poll-ms", "50"],
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
