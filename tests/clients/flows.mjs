// The flows both TypeScript SDK clients (v1 `@modelcontextprotocol/sdk`, v2
// `@modelcontextprotocol/client`) run against the built `rea serve`: two binary sessions at once,
// and the resources. The SDKs' client APIs agree on what is used here (callTool, complete,
// getPrompt, listResources, listResourceTemplates, readResource, and errors carrying `code`), so
// each test file passes its connected client, its SDK's UriTemplate class, the era it
// negotiated ("legacy" for 2025-11-25, "modern" for 2026-07-28) and whether it speaks Streamable
// HTTP (where the server never lists or completes session handles: a handle is a bearer token,
// and an HTTP server has many clients) or stdio (where the `session` argument completes the
// handles of the one client).
//
// Paths come from tests/sdk_clients.rs: REA_LS (a stripped system executable, /bin/ls) and
// REA_LIBC (the system C library), REA_CAPTURE (a valid Process Capture v4).
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";

export const LS = process.env.REA_LS;
export const LIBC = process.env.REA_LIBC;
const CAPTURE = JSON.parse(readFileSync(process.env.REA_CAPTURE, "utf8"));

const HANDLE = /^bs_[A-Za-z0-9_-]{22}$/;
const HELLO_SHA256 = "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03";

/** The templates `resources/templates/list` answers, in order. */
export const TEMPLATES = [
  "rea://session/{session}/evidence/{evidence_id}",
  "rea://session/{session}/unknown/{unknown_id}",
  "rea://session/{session}/document/{document}/procedure/{procedure}",
  "rea://session/{session}/inventory/{manifest_id}/occurrence/{occurrence_id}",
  "rea://session/{session}/capture/{capture_id}",
];

/** The static resources `resources/list` answers, in order. */
export const STATIC = [
  "rea://schema/artifact-inventory-v1",
  "rea://schema/process-capture-v4",
  "rea://schema/catalog-v1",
  "rea://guide/templates",
];

/** A tool call that must succeed: its structured content (and the whole result). */
async function call(client, name, args) {
  const result = await client.callTool({ name, arguments: args });
  assert.notEqual(result.isError, true, `${name}: ${JSON.stringify(result.content)}`);
  assert.ok(result.structuredContent, `${name} answers structured content`);
  return result;
}

/** The completion of a trace_crash argument, with `context.arguments`. */
async function promptCompletion(client, argument, value, context) {
  const answer = await client.complete({
    ref: { type: "ref/prompt", name: "trace_crash" },
    argument: { name: argument, value },
    context: { arguments: context },
  });
  return answer.completion;
}

/** The values completing `variable` of `template`, the other variables in `context`. */
async function variableValues(client, template, variable, value, context) {
  const answer = await client.complete({
    ref: { type: "ref/resource", uri: template },
    argument: { name: variable, value },
    context: { arguments: context },
  });
  return answer.completion.values;
}

/** The one JSON content of a resource read. */
async function readJson(client, uri) {
  const read = await client.readResource({ uri });
  assert.equal(read.contents.length, 1, uri);
  assert.equal(read.contents[0].uri, uri);
  assert.equal(read.contents[0].mimeType, "application/json");
  return JSON.parse(read.contents[0].text);
}

/**
 * Opens REA_LS and REA_LIBC in two sessions of one server, completes a procedure in each
 * through `context.arguments.session`, renders trace_crash for each, closes the first and checks
 * that the second still answers while the first is gone.
 */
export async function twoSessions(client, { http }) {
  const ls = (await call(client, "open_binary", { path: LS })).structuredContent;
  const libc = (await call(client, "open_binary", { path: LIBC })).structuredContent;
  assert.match(ls.session, HANDLE);
  assert.match(libc.session, HANDLE);
  assert.notEqual(ls.session, libc.session);
  assert.equal(ls.label, LS);
  assert.equal(ls.current_document, basename(LS));
  assert.equal(libc.label, LIBC);
  assert.equal(libc.current_document, basename(LIBC));
  assert.notEqual(libc.session, ls.session, "the second open took a new session");

  // The same prefix completes from each session's own binary: libc defines malloc and its
  // family; ls only calls malloc through its PLT.
  const inLs = await promptCompletion(client, "procedure", "mall", { session: ls.session });
  const inLibc = await promptCompletion(client, "procedure", "mall", { session: libc.session });
  for (const name of ["malloc", "malloc_trim", "malloc_usable_size", "mallopt"]) {
    assert.ok(inLibc.values.includes(name), `libc completes mall to ${name}: ${inLibc.values}`);
    assert.ok(!inLs.values.includes(name), `ls does not complete mall to ${name}: ${inLs.values}`);
  }
  assert.ok(inLs.values.includes("malloc@plt"), `ls completes mall to malloc@plt: ${inLs.values}`);
  assert.ok(inLs.values.every((value) => value.startsWith("mall")));
  assert.equal(inLibc.total, inLibc.values.length);
  const documents = await promptCompletion(client, "document", "", { session: libc.session });
  assert.deepEqual(documents.values, [basename(LIBC)]);
  const handles = await promptCompletion(client, "session", "bs_", {});
  assert.deepEqual(handles.values, http ? [] : [ls.session, libc.session].sort());

  // trace_crash renders for each session, with that session in its data block.
  for (const [session, procedure] of [[ls.session, "malloc@plt"], [libc.session, "malloc"]]) {
    const got = await client.getPrompt({
      name: "trace_crash",
      arguments: { symptom: "SIGSEGV in malloc", procedure, session },
    });
    assert.equal(got.messages.length, 1);
    const text = got.messages[0].content.text;
    assert.ok(
      text.includes(JSON.stringify({ procedure, session, symptom: "SIGSEGV in malloc" })),
      `the data block holds the arguments: ${text}`,
    );
    assert.match(text, /A binary is open in this session\./);
  }

  // Closing the ls session leaves libc's answering as before.
  const closed = (await call(client, "close_binary", { session: ls.session })).structuredContent;
  assert.equal(closed.session, ls.session);
  assert.equal(closed.label, LS);
  const still = await promptCompletion(client, "procedure", "mall", { session: libc.session });
  assert.deepEqual(still, inLibc);
  const listed = (await call(client, "list_documents", { session: libc.session })).structuredContent;
  assert.deepEqual(listed.documents.map((document) => document.name), [basename(LIBC)]);
  assert.deepEqual(
    (await promptCompletion(client, "procedure", "mall", { session: ls.session })).values,
    [],
    "a closed session completes nothing",
  );
  assert.deepEqual(
    (await promptCompletion(client, "session", "", {})).values,
    http ? [] : [libc.session],
  );
  const gone = await client.callTool({ name: "list_documents", arguments: { session: ls.session } });
  assert.equal(gone.isError, true);
  assert.match(gone.content[0].text, new RegExp(`no binary session "${ls.session}" is open`));
  await assert.rejects(
    client.getPrompt({ name: "trace_crash", arguments: { symptom: "x", session: ls.session } }),
    (error) => error.code === -32602 && error.message.includes(ls.session),
  );
  await call(client, "close_binary", { session: libc.session });
}

/**
 * Lists the resources and templates, reads a schema, then in a REA_LIBC session records one
 * resource of each template's kind, completes a variable of each template (the other variables
 * in `context.arguments`) and reads each resource through a URI the SDK's UriTemplate expands.
 */
export async function resources(client, UriTemplate, { era, http }) {
  const { resourceTemplates } = await client.listResourceTemplates();
  assert.deepEqual(resourceTemplates.map((template) => template.uriTemplate), TEMPLATES);
  for (const template of resourceTemplates) assert.equal(template.mimeType, "application/json");
  const { resources: listed } = await client.listResources();
  assert.deepEqual(listed.map((resource) => resource.uri), STATIC);
  const schema = await client.readResource({ uri: "rea://schema/process-capture-v4" });
  assert.equal(schema.contents[0].mimeType, "application/schema+json");
  assert.equal(Buffer.byteLength(schema.contents[0].text), listed[1].size);
  assert.ok(JSON.parse(schema.contents[0].text).$schema);

  const opened = await call(client, "open_binary", { path: LIBC });
  const session = opened.structuredContent.session;
  const document = opened.structuredContent.current_document;
  const [evidence, unknown, procedure, occurrence, capture] = TEMPLATES.map(
    (template) => new UriTemplate(template),
  );

  // The session variable completes this client's open handle (over stdio only).
  assert.deepEqual(await variableValues(client, TEMPLATES[4], "session", "", {}), http ? [] : [session]);

  // An Evidence record; the observing call links it as a resource.
  const segments = await call(client, "list_segments", { session });
  const evidenceId = segments.structuredContent.evidence_id;
  const evidenceUri = evidence.expand({ session, evidence_id: evidenceId });
  const link = segments.content.find((content) => content.type === "resource_link");
  assert.equal(link?.uri, evidenceUri, `list_segments links its record: ${JSON.stringify(segments.content)}`);
  const ids = await variableValues(client, TEMPLATES[0], "evidence_id", "ev-", { session });
  assert.ok(ids.includes(evidenceId), `${evidenceId} in ${ids}`);
  const record = await readJson(client, evidenceUri);
  assert.equal(record.id, evidenceId);
  assert.equal(record.operation, "list_segments");
  assert.equal(record.document, document);

  // An unknown with its revisions.
  const first = (await call(client, "register_unknown", { session, question: "Who frees this?" }))
    .structuredContent.id;
  const head = (await call(client, "refine_unknown", { session, id: first, question: "Who frees it, precisely?" }))
    .structuredContent.id;
  assert.deepEqual(await variableValues(client, TEMPLATES[1], "unknown_id", "", { session }), [head]);
  const chain = await readJson(client, unknown.expand({ session, unknown_id: head }));
  assert.deepEqual(chain.revisions.map((revision) => revision.id), [first, head]);
  assert.equal(chain.revisions[1].question, "Who frees it, precisely?");

  // A procedure dossier: the document completes in the session, the procedure within it.
  assert.deepEqual(await variableValues(client, TEMPLATES[2], "document", "", { session }), [document]);
  const procedures = await variableValues(client, TEMPLATES[2], "procedure", "malloc_u", { session, document });
  assert.deepEqual(procedures, ["malloc_usable_size"]);
  const dossier = await readJson(client, procedure.expand({ session, document, procedure: "malloc" }));
  const info = dossier.procedure_info;
  const names = [info.name.name, ...(info.aliases ?? []).map((alias) => alias.name)];
  assert.ok(names.includes("malloc"), `the dossier is malloc's: ${JSON.stringify(info)}`);
  assert.ok(dossier.disassembly.instructions.length > 0, "the dossier disassembles malloc");
  assert.equal(dossier.disassembly.instructions[0].address, dossier.procedure_info.address);
  assert.ok(Array.isArray(dossier.callers.callers) && Array.isArray(dossier.callees.callees));

  // An occurrence of a retained inventory: the manifest completes, the occurrence within it.
  const dir = mkdtempSync(join(tmpdir(), "rea-sdk-inventory-"));
  writeFileSync(join(dir, "notes.txt"), "hello\n");
  const page = (await call(client, "inventory_artifacts", { session, path: dir })).structuredContent;
  const manifestId = page.manifest_id;
  const occurrenceId = page.occurrences[0].occurrence_id;
  assert.deepEqual(await variableValues(client, TEMPLATES[3], "manifest_id", "", { session }), [manifestId]);
  assert.deepEqual(
    await variableValues(client, TEMPLATES[3], "occurrence_id", "", { session, manifest_id: manifestId }),
    [occurrenceId],
  );
  const read = await readJson(
    client,
    occurrence.expand({ session, manifest_id: manifestId, occurrence_id: occurrenceId }),
  );
  assert.equal(read.manifest_id, manifestId);
  assert.equal(read.occurrence.path, "notes.txt");
  assert.equal(read.occurrence.sha256, HELLO_SHA256);

  // A capture, read back as imported.
  const captureId = (await call(client, "import_process_capture", { session, capture: CAPTURE }))
    .structuredContent.evidence_id;
  assert.deepEqual(await variableValues(client, TEMPLATES[4], "capture_id", "", { session }), [captureId]);
  assert.deepEqual(await readJson(client, capture.expand({ session, capture_id: captureId })), CAPTURE);

  // A part that does not resolve is an error naming it, with the era's code.
  const code = era === "modern" ? -32602 : -32002;
  for (const [uri, part] of [
    [evidence.expand({ session: "bs_gone", evidence_id: evidenceId }), "bs_gone"],
    [capture.expand({ session, capture_id: evidenceId }), "the capture_id part"],
  ]) {
    await assert.rejects(
      client.readResource({ uri }),
      // The server names the URI in `data.uri`; the v2 client then raises its
      // ResourceNotFoundError, which carries -32602 in both eras.
      (error) =>
        (error.code === code || (error.code === -32602 && error.constructor?.name === "ResourceNotFoundError")) &&
        error.message.includes(part) &&
        error.data?.uri === uri,
      uri,
    );
  }
  await call(client, "close_binary", { session });
}
