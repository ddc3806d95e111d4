// Drives the built `rea serve` with the official MCP TypeScript SDK v2 client
// (`@modelcontextprotocol/client`) over stdio, in each of its version-negotiation modes:
// `legacy` (the default: the 2025 `initialize` handshake), `auto` (probes `server/discover` on a
// sibling process and, since the server answers it, stays on 2026-07-28) and
// `{ pin: "2026-07-28" }` (modern without fallback). REA_BIN, REA_CATALOG, REA_LS, REA_LIBC and
// REA_CAPTURE come from tests/sdk_clients.rs.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client, ProtocolError, UriTemplate } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { resources, twoSessions } from "../flows.mjs";

const BIN = process.env.REA_BIN;
const CATALOG = process.env.REA_CATALOG;
const MODERN = "2026-07-28";
const SIX = [
  "investigate_feature",
  "compare_application_versions",
  "verify_reconstruction",
  "trace_crash",
  "audit_residual_unknowns",
  "prepare_bounded_process_capture",
];

const MODES = [
  { name: "legacy", mode: "legacy", era: "legacy", version: "2025-11-25" },
  { name: "auto", mode: "auto", era: "modern", version: MODERN },
  { name: `pin ${MODERN}`, mode: { pin: MODERN }, era: "modern", version: MODERN },
];

/** A client connected to `rea serve ARGS` in `mode`, checked to have negotiated `version`. */
async function connected({ mode, era, version }, args = []) {
  const transport = new StdioClientTransport({ command: BIN, args: ["serve", "--store", "memory", ...args], stderr: "inherit" });
  const client = new Client(
    { name: "rea-node-sdk-v2-test", version: "1.0.0" },
    { versionNegotiation: { mode } },
  );
  await client.connect(transport);
  assert.equal(client.getNegotiatedProtocolVersion(), version);
  assert.equal(client.getProtocolEra(), era);
  assert.equal(client.getServerVersion()?.name, "rea");
  return client;
}

for (const negotiation of MODES) {
  test(`v2 (${negotiation.name}): lists, gets, completes and hears list_changed`, async () => {
    const promptFile = join(mkdtempSync(join(tmpdir(), "rea-node-v2-")), "prompts.json");
    writeFileSync(promptFile, "[]");
    const client = await connected(negotiation, [
      "--open", CATALOG, "--prompt-file", promptFile, "--prompt-poll-ms", "50",
    ]);
    try {
      const capabilities = client.getServerCapabilities();
      assert.ok(capabilities.prompts.listChanged);
      assert.ok(capabilities.completions);
      assert.ok(capabilities.resources);

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
        argument: { name: "procedure", value: "0x1000040" },
        context: { arguments: { document: "Notes" } },
      });
      assert.deepEqual(procedures.completion.values, ["0x100004000"]);

      // 2025: an unsolicited notification; 2026: one on a subscriptions/listen stream, which
      // reaches the same handler.
      let heard;
      const changed = new Promise((resolve) => { heard = resolve; });
      client.setNotificationHandler("notifications/prompts/list_changed", () => heard(true));
      let subscription;
      if (negotiation.era === "modern") {
        subscription = await client.listen({ promptsListChanged: true });
        assert.equal(subscription.honoredFilter.promptsListChanged, true);
      }
      writeFileSync(promptFile, JSON.stringify([{
        name: "triage_sample",
        title: "Triage a sample",
        description: "First look at an unknown sample.",
        arguments: [{ name: "document", description: "Document.", family: "document" }],
        workflow: ["list_documents"],
      }]));
      let timer;
      const arrived = await Promise.race([
        changed,
        new Promise((resolve) => { timer = setTimeout(() => resolve(false), 10000); }),
      ]);
      clearTimeout(timer);
      assert.equal(arrived, true, "notifications/prompts/list_changed arrived");
      await subscription?.close();
      const after = await client.listPrompts({}, { cacheMode: "refresh" });
      assert.deepEqual(after.prompts.map((p) => p.name), [...SIX, "triage_sample"]);

      await assert.rejects(
        client.getPrompt({ name: "no_such_prompt", arguments: {} }),
        (error) => error instanceof ProtocolError && error.code === -32602,
      );
    } finally {
      await client.close();
    }
  });

  test(`v2 (${negotiation.name}): two binary sessions at once, one closed`, async () => {
    const client = await connected(negotiation);
    try {
      await twoSessions(client, { http: false });
    } finally {
      await client.close();
    }
  });

  test(`v2 (${negotiation.name}): resource templates complete and every kind reads`, async () => {
    const client = await connected(negotiation);
    try {
      await resources(client, UriTemplate, { era: negotiation.era, http: false });
    } finally {
      await client.close();
    }
  });
}
