import { pino } from 'pino';
import { Agent } from 'undici';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { BridgeError } from '../src/errors.js';
import { createMetricsRegistry } from '../src/metrics.js';
import { createPoller, type Poller } from '../src/poll/poller.js';
import { snapshotCollection } from '../src/poll/snapshot.js';
import { memoryOutbox, type MemoryOutbox } from '../src/poll/testing.js';
import type { ChangeRecord } from '../src/records.js';
import { createSandbox, type Sandbox } from '../src/sandbox/index.js';
import { createStore, type Store } from '../src/store/index.js';
import { createUpstreamClient } from '../src/upstream/index.js';
import { tempDir } from './support/temp.js';

/**
 * Poll scenarios against the sandbox over loopback HTTP (issue 7, "Done when"): the real upstream
 * client, a real store in a temp dir, and an outbox twin that commits its entries with the snapshot.
 */
const log = pino({ level: 'silent' });
const STUDENTS = 12;

let sandbox: Sandbox;
let dispatcher: Agent;
let store: Store;
let outbox: MemoryOutbox;
let poller: Poller;
let dir: { dir: string; cleanup(): Promise<void> };

async function openStore(): Promise<void> {
  store = createStore({ dir: dir.dir, log });
  await store.start();
  outbox = memoryOutbox(store);
  const upstream = createUpstreamClient({
    baseUrl: sandbox.url, auth: { clientId: 'sandbox-client', clientSecret: 'sandbox-secret' }, dispatcher, log,
    retry: { maxAttempts: 1 },
  });
  poller = createPoller({ store, upstream, outbox, log, metrics: createMetricsRegistry(), poll: { initial: 'emit', maxDeleteRatio: 0.2 }, chunkSize: 4 });
  await poller.start();
}

async function closeStore(): Promise<void> {
  await poller.stop();
  await store.stop();
}

beforeEach(async () => {
  dir = await tempDir('schoolbridge-poll-');
  sandbox = createSandbox({ students: STUDENTS, seed: 7, log });
  await sandbox.start();
  dispatcher = new Agent();
  await openStore();
  const first = await poller.runCycle();
  expect(first.outcome).toBe('ok');
  // Its created changes go into the outbox after the cycle (poll/backlog.ts): all of them, now.
  await poller.flushBacklog();
});

afterEach(async () => {
  await closeStore();
  await sandbox.stop();
  await dispatcher.close();
  await dir.cleanup();
});

const since = (before: number) => outbox.records().slice(before) as ChangeRecord[];
const summary = (records: ChangeRecord[]) => records.map((r) => `${r.stream} ${r.op} ${r.key}`).sort();

describe('poll against the sandbox', () => {
  it('the first cycle emits every student and user as created', () => {
    const records = outbox.records() as ChangeRecord[];
    expect(records.filter((r) => r.stream === 'students' && r.op === 'created')).toHaveLength(STUDENTS);
    expect(records.filter((r) => r.stream === 'users' && r.op === 'created')).toHaveLength(sandbox.control.users().length);
    expect(JSON.stringify(records)).not.toContain('oneTimePassword');
  });

  it('a rename is one students update and one users update, with from/to', async () => {
    const student = sandbox.control.students()[3]!;
    const before = outbox.records().length;
    sandbox.control.updateStudent(student.id, { lastName: 'Nowak-Zielińska' });
    await poller.runCycle();
    const records = since(before);
    expect(summary(records)).toEqual([`students updated ${student.id}`, `users updated ${student.user.id}`]);
    const change = records.find((r) => r.stream === 'students')!;
    expect(change.changes).toContainEqual({ path: 'user.lastName', from: student.user.lastName, to: 'Nowak-Zielińska' });
    expect(change.id).toMatch(new RegExp(`^students:${student.id}:[0-9a-f]{12}$`));
    expect((change.record as any).user.lastName).toBe('Nowak-Zielińska');
    expect((change.previous as any).user.lastName).toBe(student.user.lastName);
  });

  it('archiving shows as user.isArchived 0 → 1', async () => {
    const student = sandbox.control.students().find((s) => s.user.isArchived === 0)!;
    const before = outbox.records().length;
    sandbox.control.archiveUser(student.user.id);
    await poller.runCycle();
    const change = since(before).find((r) => r.stream === 'students')!;
    expect(change.op).toBe('updated');
    expect(change.changes).toContainEqual({ path: 'user.isArchived', from: 0, to: 1 });
    expect(since(before).find((r) => r.stream === 'users')?.changes).toContainEqual({ path: 'isArchived', from: 0, to: 1 });
  });

  it('a new student: one students created, two users created', async () => {
    const before = outbox.records().length;
    const created = sandbox.control.createStudent({ firstName: 'Zofia', lastName: 'Wójcik', email: 'zofia@example.pl' });
    await poller.runCycle();
    expect(summary(since(before))).toEqual(
      [`students created ${created.id}`, `users created ${created.user.id}`, `users created ${created.user.parentUser!.id}`].sort(),
    );
  });

  it('a deleted parent user: one users deleted, and the student loses its parentUser', async () => {
    const student = sandbox.control.students().find((s) => s.user.parentUser)!;
    const parentId = student.user.parentUser!.id;
    const before = outbox.records().length;
    sandbox.control.deleteUser(parentId);
    const result = await poller.runCycle();
    expect(result.streams.users.deleted).toBe(1);
    const records = since(before);
    expect(records.find((r) => r.stream === 'users')).toMatchObject({ op: 'deleted', key: parentId, record: null });
    expect(records.find((r) => r.stream === 'students')?.changes.map((c) => c.path)).toContain('user.parentUser');
  });

  it('flags arriving as strings produce no change', async () => {
    const raw = (await (await fetch(`${sandbox.url}/api/v2/students`, { headers: { authorization: `Bearer ${sandbox.control.issueToken().access_token}` } })).json()) as any;
    const stringify = (u: any): any => u && { ...u, isArchived: String(u.isArchived), parentUser: stringify(u.parentUser) };
    raw.data.students = raw.data.students.map((s: any) => ({ ...s, isAdult: String(s.isAdult), isActive: String(s.isActive), user: stringify(s.user) }));
    expect(raw.data.students[0].isActive).toMatch(/^[01]$/);
    sandbox.control.injectFault({ route: 'GET /api/v2/students', kind: 'body', body: raw });
    const before = outbox.records().length;
    const result = await poller.runCycle();
    expect(result.outcome).toBe('ok');
    expect(since(before)).toEqual([]);
  });

  it('an empty list aborts, keeps the snapshot, and the next good cycle goes on', async () => {
    const snapshot = [...store.entries(snapshotCollection('students'))];
    sandbox.control.injectFault({ route: 'GET /api/v2/students', kind: 'emptyList' });
    const before = outbox.records().length;
    expect(await poller.runCycle()).toMatchObject({ outcome: 'aborted', reason: 'empty_list' });
    expect(poller.readiness().ok).toBe(false);
    expect([...store.entries(snapshotCollection('students'))]).toEqual(snapshot);
    expect(outbox.records()).toHaveLength(before);
    expect((await poller.runCycle()).outcome).toBe('ok');
    expect(poller.readiness().ok).toBe(true);
    expect(outbox.records()).toHaveLength(before);
  });

  it.each(['truncatedJson', 'malformedJson'] as const)('a %s answer never reaches the diff', async (kind) => {
    const student = sandbox.control.students()[0]!;
    sandbox.control.updateStudent(student.id, { city: 'Gdańsk' });
    sandbox.control.injectFault({ route: 'GET /api/v2/users', kind, times: 'always' });
    const before = outbox.records().length;
    const result = await poller.runCycle();
    expect(result).toMatchObject({ outcome: 'failed' });
    expect(result.reason).toMatch(/^upstream\./);
    expect(outbox.records()).toHaveLength(before);
    sandbox.control.clearFaults();
    expect((await poller.runCycle()).streams.students.updated).toBe(1);
  });

  it('a failed write between diff and commit, a restart, a clean re-run: the same ids, none lost', async () => {
    const students = sandbox.control.students();
    for (const s of students.slice(0, 6)) sandbox.control.updateStudent(s.id, { phone: `+48 600 000 ${s.id}` });
    sandbox.control.createStudent({ firstName: 'Jan', lastName: 'Łęcki', email: 'jan@example.pl' });
    const expected = (await poller.runCycle({ dryRun: true })).changes!.map((c) => c.id).sort();
    expect(expected.length).toBeGreaterThan(8);

    const before = outbox.records().length;
    const realCommit = store.commit.bind(store);
    let calls = 0;
    vi.spyOn(store, 'commit').mockImplementation((ops) => {
      calls += 1;
      return calls === 2 ? Promise.reject(new BridgeError('store.unavailable', 'injected write failure', { retryable: true })) : realCommit(ops);
    });
    expect(await poller.runCycle()).toMatchObject({ outcome: 'failed', reason: 'store.unavailable' });
    vi.restoreAllMocks();

    await closeStore(); // what was durable survives; the rest is detected again
    await openStore();
    expect((await poller.runCycle()).outcome).toBe('ok');
    expect(outbox.records().slice(before).map((r) => r.id).sort()).toEqual(expected);
    expect((await poller.runCycle()).streams).toMatchObject({ students: { created: 0, updated: 0 }, users: { created: 0, updated: 0 } });
  });
});
