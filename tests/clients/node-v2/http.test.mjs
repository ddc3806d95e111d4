// The TypeScript SDK v2 client's Streamable HTTP transport against `rea serve --http`, in each
// version-negotiation mode: `legacy` (2025-11-25: `initialize`, then an `Mcp-Session-Id`),
// `auto` (probes with `server/discover` and stays on 2026-07-28) and `{ pin: "2026-07-28" }`
// (stateless POSTs). tests/sdk_clients.rs starts the server and passes its URL in REA_HTTP_URL;
// the flows are the stdio ones (../flows.mjs), except that over HTTP no handle is completed.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Client, StreamableHTTPClientTransport, UriTemplate } from "@modelcontextprotocol/client";
import { resources, twoSessions } from "../flows.mjs";

const URL_ = new URL(process.env.REA_HTTP_URL);
const MODERN = "2026-07-28";
const MODES = [
  { name: "legacy", mode: "legacy", era: "legacy", version: "2025-11-25" },
  { name: "auto", mode: "auto", era: "modern", version: MODERN },
  { name: `pin ${MODERN}`, mode: { pin: MODERN }, era: "modern", version: MODERN },
];

async function connected({ mode, era, version }) {
  const client = new Client(
    { name: "rea-node-sdk-v2-http-test", version: "1.0.0" },
    { versionNegotiation: { mode } },
  );
  await client.connect(new StreamableHTTPClientTransport(URL_));
  assert.equal(client.getNegotiatedProtocolVersion(), version);
  assert.equal(client.getProtocolEra(), era);
  assert.equal(client.getServerVersion()?.name, "rea");
  return client;
}

for (const negotiation of MODES) {
  test(`v2 over HTTP (${negotiation.name}): two binary sessions at once, one closed`, async () => {
    const client = await connected(negotiation);
    try {
      await twoSessions(client, { http: true });
    } finally {
      await client.close();
    }
  });

  test(`v2 over HTTP (${negotiation.name}): resource templates complete and every kind reads`, async () => {
    const client = await connected(negotiation);
    try {
      await resources(client, UriTemplate, { era: negotiation.era, http: true });
    } finally {
      await client.close();
    }
  });
}
