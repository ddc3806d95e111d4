// A raw stdio driver in Node, the runtime of Claude Desktop, the Inspector and the TypeScript
// SDK: `child_process` connects the server's stdin and stdout with Unix socket pairs. It sends
// the Document workload of `benches/e2e_stdio.rs` (12 rotating prefixes of the `document`
// argument of `investigate_feature`) after `initialize`: 1,000 warm-up round trips, 3,000
// sequential ones (p50, p99), then 3,000 requests written at once (requests per second).
//
//   node benches/drivers/node_stdio.mjs LABEL PROGRAM [ARGUMENTS...]
//   node benches/drivers/node_stdio.mjs rea target/release/rea serve --open catalog.json
//
// `cargo bench --bench e2e_stdio` writes the catalog (`target/tmp/e2e-bench/documents-10000.json`)
// and builds the floor and rmcp peers (`target/tmp/e2e-bench/peers/release/`).
import { spawn } from 'node:child_process';

const [label, program, ...args] = process.argv.slice(2);
if (!program) {
  console.error('usage: node_stdio.mjs LABEL PROGRAM [ARGUMENTS...]');
  process.exit(2);
}
const PREFIXES = ['', 'n', 'se', 'ind', 'Re', 'SYNC', 'cache9', 'Αρ', '文', 'cafe', 'ｆｕ', 'q'];
const child = spawn(program, args, { stdio: ['pipe', 'pipe', 'inherit'] });
const waiting = new Map();
let buffered = '';
child.stdout.setEncoding('utf8');
child.stdout.on('data', (chunk) => {
  buffered += chunk;
  let end;
  while ((end = buffered.indexOf('\n')) >= 0) {
    const message = JSON.parse(buffered.slice(0, end));
    buffered = buffered.slice(end + 1);
    const answered = waiting.get(message.id);
    if (answered) {
      waiting.delete(message.id);
      answered(message);
    }
  }
});
const send = (message) => child.stdin.write(JSON.stringify({ jsonrpc: '2.0', ...message }) + '\n');
const call = (id, method, params) =>
  new Promise((answered) => {
    waiting.set(id, answered);
    send({ id, method, params });
  });
const completion = (i) => ({
  ref: { type: 'ref/prompt', name: 'investigate_feature' },
  argument: { name: 'document', value: PREFIXES[i % PREFIXES.length] },
});

await call(0, 'initialize', {
  protocolVersion: '2025-11-25',
  capabilities: {},
  clientInfo: { name: 'node-stdio-driver', version: '0' },
});
send({ method: 'notifications/initialized' });
let id = 1;
for (let i = 0; i < 1000; i++) {
  const answer = await call(id++, 'completion/complete', completion(i));
  if (!Array.isArray(answer.result?.completion?.values)) throw new Error(JSON.stringify(answer));
}
const latencies = [];
for (let i = 0; i < 3000; i++) {
  const sent = process.hrtime.bigint();
  await call(id++, 'completion/complete', completion(i));
  latencies.push(Number(process.hrtime.bigint() - sent) / 1000);
}
latencies.sort((a, b) => a - b);
const started = process.hrtime.bigint();
const answers = [];
for (let i = 0; i < 3000; i++) answers.push(call(id++, 'completion/complete', completion(i)));
await Promise.all(answers);
const seconds = Number(process.hrtime.bigint() - started) / 1e9;
const p50 = latencies[latencies.length / 2].toFixed(0);
const p99 = latencies[Math.floor(latencies.length * 0.99)].toFixed(0);
console.log(`${label}: p50 ${p50} µs, p99 ${p99} µs, 3,000 in flight ${(3000 / seconds).toFixed(0)} req/s`);
child.stdin.end();
