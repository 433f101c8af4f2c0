/**
 * `npm run bench:console`: the operator console's pages and JSON endpoints with 100,000 students in
 * the store (SQLite), 20,000 delivery attempts, 2,000 dead deliveries and 30 days of runs. Prints
 * the median time of each over 7 requests (app.inject: the handler and rendering, no socket) and
 * its size; the bar is 200 ms and 100 KB.
 *
 *   STUDENTS=200000 npm run bench:console
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { createApp } from '../src/app.js';
import { configSchema } from '../src/config/index.js';
import { openStore, type Claimed, type Settlement } from '../src/store/index.js';

const STUDENTS = Number(process.env.STUDENTS ?? 100_000);
const TOKEN = 'bench-console-token-0123456789abcdef';
const FIRST = ['Anna', 'Maria', 'Katarzyna', 'Małgorzata', 'Agnieszka', 'Piotr', 'Krzysztof', 'Andrzej', 'Tomasz', 'Łukasz', 'Paweł', 'Zofia'];
const LAST = ['Nowak', 'Kowalska', 'Wiśniewski', 'Wójcik', 'Kowalczyk', 'Kamiński', 'Lewandowska', 'Zieliński', 'Szymańska', 'Woźniak', 'Dąbrowski', 'Kozłowska'];

function student(key: number): string {
  const first = FIRST[key % FIRST.length]!;
  const last = LAST[Math.floor(key / FIRST.length) % LAST.length]!;
  return JSON.stringify({ id: key, studentNumber: `S${key}`, user: { id: 1_000_000 + key, login: `s${key}`, firstName: first, lastName: `${last}${key % 97}`, additionalData: { email: `s${key}@example.com`, street: 'Kwiatowa 4/5 ' } } });
}

function freshRows(from: number, to: number) {
  const keys: number[] = [];
  const parts: Buffer[] = [];
  for (let key = from; key < to; key++) {
    keys.push(key);
    parts.push(Buffer.from(`${key.toString(16).padStart(12, '0')}${student(key)}`));
  }
  const ends: number[] = [];
  let end = 0;
  for (const part of parts) ends.push((end += part.length));
  const bytes = Buffer.concat(parts);
  return { keys, hashes: keys.map((k) => `h${k}`), bytes: new Uint8Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length)), ends };
}

const dir = await mkdtemp(path.join(tmpdir(), 'schoolbridge-console-'));
const log = pino({ level: 'silent' });
try {
  const now = Date.now();
  const store = openStore({ driver: 'sqlite', dir, poolSize: 10 }, log);
  await store.start();
  await store.snapshot.begin('students', 'fresh');
  for (let i = 1; i <= STUDENTS; i += 10_000) await store.snapshot.stageFresh('students', freshRows(i, Math.min(i + 10_000, STUDENTS + 1)));
  await store.snapshot.applyFresh('students', { state: {}, created: { detectedAt: new Date(now).toISOString(), connectors: ['files', 'hook'], now } });
  const settled = (c: Claimed, status: 'done' | 'dead'): Settlement => (status === 'done'
    ? { id: c.delivery.id, fence: c.delivery.fence, connector: c.delivery.connector, at: now, status, durationMs: 3, ...(c.delivery.range ? { range: c.delivery.range } : {}) }
    : { id: c.delivery.id, fence: c.delivery.fence, connector: c.delivery.connector, at: now, status, runAt: now, attempts: 1, lastError: 'webhook.rejected: the receiver answered 422: {"error":"bad"}', httpStatus: 422, ...(c.delivery.range ? { range: c.delivery.range } : {}) });
  for (let done = 0; done < 20_000;) {
    const batch = await store.outbox.claim({ connector: 'files', limit: 500, now, leaseMs: 60_000 });
    await store.outbox.settle(batch.map((c) => settled(c, 'done')));
    done += batch.length;
  }
  for (let dead = 0; dead < 2000;) {
    const batch = await store.outbox.claim({ connector: 'hook', limit: 500, now, leaseMs: 60_000 });
    await store.outbox.settle(batch.map((c) => settled(c, 'dead')));
    dead += batch.length;
  }
  for (let i = 0; i < 30 * 24; i++) {
    await store.history.recordRun({ kind: 'poll', trigger: 'schedule', startedAt: now - i * 3_600_000, durationMs: 4000, outcome: 'ok', counts: { students: { fetched: STUDENTS, updated: 3 } } });
  }
  while (await store.people.refresh('students', 5000));

  const config = configSchema.parse({
    upstream: { baseUrl: 'sandbox', clientSecret: 'bench' },
    sandbox: { students: 1 },
    server: { port: 0, adminToken: TOKEN },
    webhooks: { reconcileOnStart: false },
    poll: { onStart: false },
    connectors: [
      { name: 'files', type: 'file', streams: ['students'], dir: path.join(dir, 'out') },
      { name: 'hook', type: 'webhook', streams: ['students'], url: 'http://127.0.0.1:9/hook', secret: 'x' },
    ],
  });
  const app = await createApp({ config, log, mode: 'oneshot', store });
  app.outbox.holdDeliveries();
  await app.start();
  const rows: string[][] = [['', 'median ms', 'KB']];
  for (const url of ['/', '/api/problems', '/console/problems', '/api/runs', '/console/runs', '/api/records?query=nowak4', '/console/records?query=s77777%40example.com', '/api/records?query=1077777']) {
    const times: number[] = [];
    let bytes = 0;
    for (let i = 0; i < 7; i++) {
      const started = performance.now();
      const answer = await app.http.inject({ url, headers: { authorization: `Bearer ${TOKEN}` } });
      times.push(performance.now() - started);
      if (answer.statusCode !== 200) throw new Error(`${url}: ${answer.statusCode}`);
      bytes = answer.rawPayload.length;
    }
    times.sort((a, b) => a - b);
    rows.push([url, times[3]!.toFixed(1), (bytes / 1024).toFixed(1)]);
  }
  await app.stop();
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  process.stdout.write(`${STUDENTS} students, 20000 attempts, 2000 dead deliveries, 720 runs (sqlite)\n`);
  for (const row of rows) process.stdout.write(`${row.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ')}\n`);
} finally {
  await rm(dir, { recursive: true, force: true });
}
