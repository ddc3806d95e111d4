// `decompile` as MCP tasks (docs/CONTRACT.md section 18) through the official MCP TypeScript SDK
// client (v1, `@modelcontextprotocol/sdk`, 2025-11-25, its experimental tasks API:
// `client.experimental.tasks.callToolStream`, `getTask`, `getTaskResult`, `cancelTask`), on a
// real binary with the angr provider, over stdio, on a SQLite store:
// one task cancelled while angr builds its CFG, one to completion with angr's pseudo-C, and then
// one cut by a SIGKILL of the server; after a restart on the same store a new client finds the
// completed task with its result and the cut one `failed`, saying the server restarted.
//
// Run by tests/sdk_clients.rs with REA_BIN (the server), REA_ANGR_DIR (adapters/angr, its
// environment installed), REA_ANGR_BINARY (the compiled program) and REA_STORE (a SQLite file
// in a temporary folder).
import { test } from "node:test";
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";

const BIN = process.env.REA_BIN;
const ANGR_DIR = process.env.REA_ANGR_DIR;
const BINARY = process.env.REA_ANGR_BINARY;
const STORE = process.env.REA_STORE;

// The adapter starts and builds angr's CFG on the first call that needs it.
const DECOMPILE_SECS = 240;
const REQUEST_MS = (DECOMPILE_SECS + 60) * 1000;
const TTL_MS = 600_000;

async function connect() {
  const transport = new StdioClientTransport({
    command: BIN,
    args: ["serve", "--store", STORE, "--provider", "angr", "--angr-dir", ANGR_DIR],
    stderr: "inherit",
  });
  const client = new Client({ name: "rea-node-sdk-tasks", version: "1.0.0" });
  await client.connect(transport);
  return { client, transport };
}

async function call(client, name, args) {
  const result = await client.callTool({ name, arguments: args }, undefined, { timeout: REQUEST_MS });
  assert.notEqual(result.isError, true, `${name}: ${JSON.stringify(result.content)}`);
  return result.structuredContent;
}

/// Starts `decompile` of `procedure` as a task and answers its stream and its created task.
async function startTask(client, procedure) {
  const stream = client.experimental.tasks.callToolStream(
    { name: "decompile", arguments: { provider: "angr", procedure, timeout_secs: DECOMPILE_SECS } },
    undefined,
    { task: { ttl: TTL_MS }, timeout: REQUEST_MS },
  );
  const first = await stream.next();
  assert.equal(first.value?.type, "taskCreated", JSON.stringify(first.value));
  const task = first.value.task;
  assert.match(task.taskId, /\S/);
  assert.equal(task.status, "working");
  return { stream, task };
}

/// The rest of a task's stream: its statuses and its last message.
async function drain(stream) {
  const statuses = [];
  let last;
  for await (const message of stream) {
    if (message.type === "taskStatus") statuses.push(message.task.status);
    last = message;
  }
  return { statuses, last };
}

/// Opens the program in the server of `client`.
async function open(client) {
  const opened = await call(client, "open_binary", { path: BINARY });
  assert.match(opened.session, /^bs_/);
}

test("decompile runs as a task: cut by a SIGKILL, cancelled, completed, and found after restarts", async () => {
  // 1. Cut by a SIGKILL while the adapter starts and builds angr's CFG.
  let { client, transport } = await connect();
  let cutId;
  try {
    await open(client);
    const tools = await client.listTools();
    const decompile = tools.tools.find((tool) => tool.name === "decompile");
    assert.equal(decompile.execution?.taskSupport, "optional", JSON.stringify(decompile));
    const cut = await startTask(client, "main");
    cutId = cut.task.taskId;
    process.kill(transport.pid, "SIGKILL");
    await drain(cut.stream).catch(() => {});
  } finally {
    await client.close().catch(() => {});
  }

  // 2. A new server on the same store: the cut task failed, saying the server restarted; one
  // task cancelled while the CFG is built again; one to completion.
  ({ client, transport } = await connect());
  let completedId;
  try {
    const lost = await client.experimental.tasks.getTask(cutId);
    assert.equal(lost.status, "failed", JSON.stringify(lost));
    assert.match(lost.statusMessage, /restart/i);

    await open(client);
    const cancelled = await startTask(client, "main");
    const answer = await client.experimental.tasks.cancelTask(cancelled.task.taskId);
    assert.equal(answer.status, "cancelled", JSON.stringify(answer));
    const afterCancel = await drain(cancelled.stream);
    assert.equal(afterCancel.last?.type, "error", JSON.stringify(afterCancel.last));
    assert.equal((await client.experimental.tasks.getTask(cancelled.task.taskId)).status, "cancelled");

    const done = await startTask(client, "main");
    const finished = await drain(done.stream);
    assert.equal(finished.last?.type, "result", JSON.stringify(finished.last));
    const decompiled = finished.last.result.structuredContent;
    assert.equal(decompiled.procedure.name, "main");
    assert.equal(decompiled.evidence_kind, "decompiler_output");
    assert.match(decompiled.code, /usage: report NAME/);
    assert.equal((await client.experimental.tasks.getTask(done.task.taskId)).status, "completed");
    completedId = done.task.taskId;
    process.kill(transport.pid, "SIGKILL");
  } finally {
    await client.close().catch(() => {});
  }

  // 3. After a second SIGKILL and restart, the completed task still answers its result.
  ({ client, transport } = await connect());
  try {
    const kept = await client.experimental.tasks.getTask(completedId);
    assert.equal(kept.status, "completed", JSON.stringify(kept));
    const result = await client.experimental.tasks.getTaskResult(completedId, CallToolResultSchema);
    assert.equal(result.structuredContent.procedure.name, "main");
    assert.match(result.structuredContent.code, /usage: report NAME/);
  } finally {
    await client.close();
  }
});
