import { pino } from 'pino';
import { Agent } from 'undici';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { BridgeError } from '../src/errors.js';
import { createMetricsRegistry } from '../src/metrics.js';
import { createPoller, type Poller } from '../src/poll/poller.js';
import { recordingOutbox, type RecordingOutbox } from './support/poll.js';
import type { ChangeRecord } from '../src/records.js';
import { createSandbox, type Sandbox } from '../sandbox/index.js';
import type { Store } from '../src/store/index.js';
import { createSqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { createUpstreamClient } from '../src/upstream/index.js';
import { tempDir } from './support/temp.js';

/**
 * Poll scenarios against the sandbox over loopback HTTP: the real upstream client, a real store in a
 * temp dir, and the records the cycles enqueued, taken out of the store in delivery order.
 */
const log = pino({ level: 'silent' });
const STUDENTS = 12;

let sandbox: Sandbox;
let dispatcher: Agent;
let store: Store;
let outbox: RecordingOutbox;
let poller: Poller;
let dir: { dir: string; cleanup(): Promise<void> };

async function openStore(): Promise<void> {
  store = createSqliteStore({ dir: dir.dir, log });
  await store.start();
  outbox = recordingOutbox(store);
  const upstream = createUpstreamClient({
    baseUrl: sandbox.url, auth: { clientId: 'sandbox-client', clientSecret: 'sandbox-secret' }, dispatcher, log,
    retry: { maxAttempts: 1 },
  });
  poller = createPoller({ store, upstream, outbox, log, metrics: createMetricsRegistry(), poll: { initial: 'emit', maxDeleteRatio: 0.2 }, applyChunk: 4 });
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
  firstRecords = (await outbox.records()) as ChangeRecord[];
});

afterEach(async () => {
  await closeStore();
  await sandbox.stop();
  await dispatcher.close();
  await dir.cleanup();
});

let firstRecords: ChangeRecord[] = [];
/** The records enqueued since the first cycle's (taken out of the store as they would be delivered). */
const since = async (before: number) => ((await outbox.records()) as ChangeRecord[]).slice(before);
const summary = (records: ChangeRecord[]) => records.map((r) => `${r.stream} ${r.op} ${r.key}`).sort();

describe('poll against the sandbox', () => {
  it('the first cycle emits every student and user as created', () => {
    const records = firstRecords;
    expect(records.filter((r) => r.stream === 'students' && r.op === 'created')).toHaveLength(STUDENTS);
    expect(records.filter((r) => r.stream === 'users' && r.op === 'created')).toHaveLength(sandbox.control.users().length);
    expect(JSON.stringify(records)).not.toContain('oneTimePassword');
  });

  it('a rename is one students update and one users update, with from/to', async () => {
    const student = sandbox.control.students()[3]!;
    const before = firstRecords.length;
    sandbox.control.updateStudent(student.id, { lastName: 'Nowak-Zielińska' });
    await poller.runCycle();
    const records = await since(before);
    expect(summary(records)).toEqual([`students updated ${student.id}`, `users updated ${student.user.id}`]);
    const change = records.find((r) => r.stream === 'students')!;
    expect(change.changes).toContainEqual({ path: 'user.lastName', from: student.user.lastName, to: 'Nowak-Zielińska' });
    expect(change.id).toMatch(new RegExp(`^students:${student.id}:[0-9a-f]{12}$`));
    expect((change.record as any).user.lastName).toBe('Nowak-Zielińska');
    expect((change.previous as any).user.lastName).toBe(student.user.lastName);
  });

  it('archiving shows as user.isArchived 0 → 1', async () => {
    const student = sandbox.control.students().find((s) => s.user.isArchived === 0)!;
    const before = firstRecords.length;
    sandbox.control.archiveUser(student.user.id);
    await poller.runCycle();
    const change = (await since(before)).find((r) => r.stream === 'students')!;
    expect(change.op).toBe('updated');
    expect(change.changes).toContainEqual({ path: 'user.isArchived', from: 0, to: 1 });
    expect((await since(before)).find((r) => r.stream === 'users')?.changes).toContainEqual({ path: 'isArchived', from: 0, to: 1 });
  });

  it('a new student: one students created, two users created', async () => {
    const before = firstRecords.length;
    const created = sandbox.control.createStudent({ firstName: 'Zofia', lastName: 'Wójcik', email: 'zofia@example.pl' });
    await poller.runCycle();
    expect(summary(await since(before))).toEqual(
      [`students created ${created.id}`, `users created ${created.user.id}`, `users created ${created.user.parentUser!.id}`].sort(),
    );
  });

  it('a deleted parent user: one users deleted, and the student loses its parentUser', async () => {
    const student = sandbox.control.students().find((s) => s.user.parentUser)!;
    const parentId = student.user.parentUser!.id;
    const before = firstRecords.length;
    sandbox.control.deleteUser(parentId);
    const result = await poller.runCycle();
    expect(result.streams.users!.deleted).toBe(1);
    const records = await since(before);
    expect(records.find((r) => r.stream === 'users')).toMatchObject({ op: 'deleted', key: parentId, record: null });
    expect(records.find((r) => r.stream === 'students')?.changes.map((c) => c.path)).toContain('user.parentUser');
  });

  it('flags arriving as strings produce no change', async () => {
    const raw = (await (await fetch(`${sandbox.url}/api/v2/students`, { headers: { authorization: `Bearer ${sandbox.control.issueToken().access_token}` } })).json()) as any;
    const stringify = (u: any): any => u && { ...u, isArchived: String(u.isArchived), parentUser: stringify(u.parentUser) };
    raw.data.students = raw.data.students.map((s: any) => ({ ...s, isAdult: String(s.isAdult), isActive: String(s.isActive), user: stringify(s.user) }));
    expect(raw.data.students[0].isActive).toMatch(/^[01]$/);
    sandbox.control.injectFault({ route: 'GET /api/v2/students', kind: 'body', body: raw });
    const before = firstRecords.length;
    const result = await poller.runCycle();
    expect(result.outcome).toBe('ok');
    expect(await since(before)).toEqual([]);
  });

  it('an empty list aborts, keeps the snapshot, and the next good cycle goes on', async () => {
    const snapshot = await store.snapshot.scan('students', undefined, 1000);
    sandbox.control.injectFault({ route: 'GET /api/v2/students', kind: 'emptyList' });
    const before = firstRecords.length;
    expect(await poller.runCycle()).toMatchObject({ outcome: 'aborted', reason: 'empty_list' });
    expect(poller.readiness().ok).toBe(false);
    expect(await store.snapshot.scan('students', undefined, 1000)).toEqual(snapshot);
    expect(await since(before)).toEqual([]);
    expect((await poller.runCycle()).outcome).toBe('ok');
    expect(poller.readiness().ok).toBe(true);
    expect(await since(before)).toEqual([]);
  });

  it.each(['truncatedJson', 'malformedJson'] as const)('a %s answer never reaches the diff', async (kind) => {
    const student = sandbox.control.students()[0]!;
    sandbox.control.updateStudent(student.id, { city: 'Gdańsk' });
    sandbox.control.injectFault({ route: 'GET /api/v2/users', kind, times: 'always' });
    const before = firstRecords.length;
    const result = await poller.runCycle();
    expect(result).toMatchObject({ outcome: 'failed' });
    expect(result.reason).toMatch(/^upstream\./);
    expect(await since(before)).toEqual([]);
    sandbox.control.clearFaults();
    expect((await poller.runCycle()).streams.students!.updated).toBe(1);
  });

  it('a failed write between diff and commit, a restart, a clean re-run: the same ids, none lost', async () => {
    const students = sandbox.control.students();
    for (const s of students.slice(0, 6)) sandbox.control.updateStudent(s.id, { phone: `+48 600 000 ${s.id}` });
    sandbox.control.createStudent({ firstName: 'Jan', lastName: 'Łęcki', email: 'jan@example.pl' });
    const expected = (await poller.runCycle({ dryRun: true })).changes!.map((c) => c.id).sort();
    expect(expected.length).toBeGreaterThan(8);

    const realApply = store.snapshot.applyChanges.bind(store.snapshot);
    let calls = 0;
    vi.spyOn(store.snapshot, 'applyChanges').mockImplementation((stream, options) => {
      calls += 1;
      return calls === 2 ? Promise.reject(new BridgeError('store.unavailable', 'injected write failure', { retryable: true })) : realApply(stream, options);
    });
    expect(await poller.runCycle()).toMatchObject({ outcome: 'failed', reason: 'store.unavailable' });
    vi.restoreAllMocks();

    await closeStore(); // what was durable survives; the rest is detected again
    await openStore(); // a new twin: it takes what was enqueued since the first cycle's records were taken
    expect((await poller.runCycle()).outcome).toBe('ok');
    expect((await outbox.records()).map((r) => r.id).sort()).toEqual(expected);
    expect((await poller.runCycle()).streams).toMatchObject({ students: { created: 0, updated: 0 }, users: { created: 0, updated: 0 } });
  });
});
