// The investigation workflow end to end through the official MCP TypeScript SDK client (v1,
// `@modelcontextprotocol/sdk`, 2025-11-25) over stdio, with the angr provider: the built
// `rea serve --provider angr` opens a C program compiled at test time
// (tests/adapters/programs/report.c), finds its usage string, follows `xrefs_to` from it to
// the procedure that prints it (`main`), decompiles that procedure through angr, disassembles
// it through `native`, and every step cites an Evidence record of its own, readable both with
// `get_evidence` and as the `resource_link` its result carries.
//
// Run by tests/sdk_clients.rs with REA_BIN (the server), REA_ANGR_DIR (adapters/angr, its
// environment installed) and REA_ANGR_BINARY (the compiled program).
import { test } from "node:test";
import assert from "node:assert/strict";
import { basename } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const BIN = process.env.REA_BIN;
const ANGR_DIR = process.env.REA_ANGR_DIR;
const BINARY = process.env.REA_ANGR_BINARY;

const USAGE = "usage: report NAME";
// The adapter starts and builds angr's CFG on the first call that needs it: the decompiler
// gets the bound the tool allows it, and the client waits a little longer than that.
const DECOMPILE_SECS = 240;
const REQUEST_MS = (DECOMPILE_SECS + 60) * 1000;

test("the TypeScript SDK client follows the usage string to main, decompiles it with angr and disassembles it", async () => {
  const transport = new StdioClientTransport({
    command: BIN,
    args: ["serve", "--store", "memory", "--provider", "angr", "--angr-dir", ANGR_DIR],
    stderr: "inherit",
  });
  const client = new Client({ name: "rea-node-sdk-angr", version: "1.0.0" });
  await client.connect(transport);
  try {
    const call = async (name, args) => {
      const result = await client.callTool({ name, arguments: args }, undefined, {
        timeout: REQUEST_MS,
      });
      assert.notEqual(result.isError, true, `${name}: ${JSON.stringify(result.content)}`);
      return result;
    };
    const opened = (await call("open_binary", { path: BINARY })).structuredContent;
    const session = opened.session;
    assert.match(session, /^bs_/);
    assert.equal(opened.current_document, basename(BINARY));
    assert.equal(opened.documents[0].format, "elf");

    const providers = (await call("list_providers", {})).structuredContent;
    assert.deepEqual(providers.providers.map((provider) => provider.id), ["native", "angr"]);

    // Each observing step appends its own record and links it; `cited` maps each Evidence ID
    // to the operation and provider that must have made it and the link the result carried.
    const cited = new Map();
    const cite = (operation, provider, result) => {
      const id = result.structuredContent.evidence_id;
      assert.match(id, /^ev-\d{12}$/, `${operation} cites an Evidence ID`);
      assert.ok(!cited.has(id), `${operation} appends its own record, not ${cited.get(id)?.operation}'s`);
      const links = result.content.filter((block) => block.type === "resource_link");
      assert.deepEqual(links.map((link) => link.name), [id], `${operation} links its one record`);
      assert.equal(links[0].uri, `rea://session/${session}/evidence/${id}`);
      assert.equal(links[0].mimeType, "application/json");
      cited.set(id, { operation, provider, uri: links[0].uri });
      return result.structuredContent;
    };

    const strings = cite("search_strings", "native", await call("search_strings", { contains: "usage:" }));
    assert.deepEqual(strings.strings.map((string) => string.text), [USAGE]);
    const usage = strings.strings[0];
    assert.match(usage.address, /^0x[0-9a-f]+$/);

    const xrefs = cite("xrefs_to", "native", await call("xrefs_to", { address: usage.address }));
    assert.equal(xrefs.target.address, usage.address);
    const users = xrefs.references.filter((reference) => reference.procedure);
    assert.equal(users.length, 1, `one instruction refers to the usage string: ${JSON.stringify(xrefs)}`);
    const [user] = users;
    assert.equal(user.procedure.name, "main");
    const main = user.procedure.address;

    const decompiled = cite(
      "decompile",
      "angr",
      await call("decompile", { provider: "angr", procedure: main, timeout_secs: DECOMPILE_SECS }),
    );
    assert.equal(decompiled.procedure.address, main);
    assert.equal(decompiled.procedure.name, "main");
    assert.equal(decompiled.evidence_kind, "decompiler_output");
    assert.equal(decompiled.complete, true, JSON.stringify(decompiled));
    for (const expected of [USAGE, "make_report", "classify"]) {
      assert.ok(decompiled.code.includes(expected), `${expected} in the pseudo-C of main:\n${decompiled.code}`);
    }

    const code = cite("disassemble", "native", await call("disassemble", { procedure: main, limit: 1000 }));
    assert.equal(code.procedure.address, main);
    assert.equal(code.instructions[0].address, main);
    const referring = code.instructions.find((instruction) => instruction.address === user.from);
    assert.ok(referring, `the disassembly of main holds ${user.from}, which refers to the string`);
    assert.equal(referring.target, usage.address);
    const called = code.instructions
      .filter((instruction) => instruction.mnemonic === "call")
      .map((instruction) => instruction.target_name);
    for (const callee of ["classify", "make_report"]) {
      assert.ok(called.includes(callee), `main calls ${callee}: ${called}`);
    }

    assert.equal(cited.size, 4);
    for (const [id, { operation, provider, uri }] of cited) {
      const record = (await call("get_evidence", { id })).structuredContent;
      assert.equal(record.id, id);
      assert.equal(record.operation, operation);
      assert.equal(record.provider, provider, `${operation} was answered by ${provider}`);
      assert.equal(record.document, basename(BINARY));
      if (operation === "decompile") {
        assert.equal(record.result.evidence_kind, "decompiler_output");
        assert.equal(record.result.code, decompiled.code);
      }
      const read = await client.readResource({ uri });
      assert.equal(read.contents.length, 1);
      const linked = JSON.parse(read.contents[0].text);
      assert.equal(linked.id, id);
      assert.equal(linked.operation, operation);
      assert.deepEqual(linked.result, record.result);
      assert.equal(linked.result.evidence_id, undefined);
    }
  } finally {
    await client.close();
  }
});
