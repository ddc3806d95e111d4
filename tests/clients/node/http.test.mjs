// The TypeScript SDK v1 client's Streamable HTTP transport against `rea serve --http`
// (2025-11-25: `initialize`, then an `Mcp-Session-Id`). tests/sdk_clients.rs starts the server
// and passes its URL in REA_HTTP_URL; the flows are the stdio ones (../flows.mjs), except that
// over HTTP no handle is completed.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { UriTemplate } from "@modelcontextprotocol/sdk/shared/uriTemplate.js";
import { resources, twoSessions } from "../flows.mjs";

async function connected() {
  const transport = new StreamableHTTPClientTransport(new URL(process.env.REA_HTTP_URL));
  const client = new Client({ name: "rea-node-sdk-http-test", version: "1.0.0" });
  await client.connect(transport);
  assert.equal(client.getServerVersion().name, "rea");
  assert.ok(transport.sessionId, "the server named an MCP session");
  return client;
}

test("the TypeScript SDK client over HTTP keeps two binary sessions and closes one", async () => {
  const client = await connected();
  try {
    await twoSessions(client, { http: true });
  } finally {
    await client.close();
  }
});

test("the TypeScript SDK client over HTTP completes every resource template and reads every kind", async () => {
  const client = await connected();
  try {
    await resources(client, UriTemplate, { era: "legacy", http: true });
  } finally {
    await client.close();
  }
});
