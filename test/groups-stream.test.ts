import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createApp, type App } from '../src/app.js';
import { awaitDeliveries } from '../src/cli/context.js';
import { configSchema } from '../src/config/schema.js';
import type { ChangeRecord } from '../src/records.js';
import { tempDir } from './support/temp.js';

/**
 * The `groups` stream end to end on SQLite: the sandbox's GET /api/v2/groups, changed through its
 * /_sandbox/groups endpoints over HTTP, read by the poll, kept in the snapshot, enqueued in the outbox
 * and appended by the `file` connector to groups.jsonl. And which configs poll it: one whose
 * connectors take it, or that lists it in poll.streams; not one that never names it.
 */
const log = pino({ level: 'silent' });
let dir: { dir: string; cleanup(): Promise<void> };
let app: App | undefined;

function config(connectorStreams: string[], poll: Record<string, unknown> = {}) {
  return configSchema.parse({
    upstream: { baseUrl: 'sandbox' },
    sandbox: { students: 4, seed: 5 },
    server: { port: 0 },
    webhooks: { reconcileOnStart: false },
    poll,
    store: { dir: path.join(dir.dir, 'store') },
    connectors: [{ name: 'files', type: 'file', streams: connectorStreams, dir: path.join(dir.dir, 'out') }],
  });
}

async function start(connectorStreams: string[], poll: Record<string, unknown> = {}): Promise<App> {
  app = await createApp({ config: config(connectorStreams, poll), log, mode: 'oneshot' });
  await app.start();
  return app;
}

const jsonl = async (file: string): Promise<ChangeRecord[]> =>
  (await readFile(path.join(dir.dir, 'out', file), 'utf8').catch(() => '')).split('\n').filter(Boolean).map((line) => JSON.parse(line) as ChangeRecord);

/** A change through the sandbox's control API over HTTP, as a developer makes one. */
async function control(method: string, url: string, body?: unknown): Promise<unknown> {
  const response = await fetch(`${app!.sandbox!.url}${url}`, {
    method, ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  expect(response.status).toBe(200);
  return response.json();
}

beforeEach(async () => {
  dir = await tempDir('schoolbridge-groups-');
});

afterEach(async () => {
  await app?.stop();
  app = undefined;
  await dir.cleanup();
});

describe('the groups stream', () => {
  it('flows from the sandbox through the poll, the snapshot and the outbox to groups.jsonl', async () => {
    const app = await start(['groups']);
    const groups = app.sandbox!.control.groups();
    expect(groups.length).toBeGreaterThanOrEqual(3);

    expect((await app.poll.sync()).streams.groups).toMatchObject({ fetched: groups.length, created: groups.length });
    await awaitDeliveries(app);
    const created = await jsonl('groups.jsonl');
    expect(created.map((r) => [r.op, r.key])).toEqual(groups.map((g) => ['created', g.id]));
    expect(created[0]).toMatchObject({ stream: 'groups', id: expect.stringMatching(new RegExp(`^groups:${groups[0]!.id}:[0-9a-f]{12}$`)), record: groups[0] });

    const renamed = groups[1]!;
    await control('PATCH', `/_sandbox/groups/${renamed.id}`, { name: 'Niemiecki A2 — soboty' });
    await control('DELETE', `/_sandbox/groups/${groups[2]!.id}`);
    expect((await app.poll.sync()).streams.groups).toMatchObject({ updated: 1, deleted: 1, created: 0 });
    await awaitDeliveries(app);
    const [update, deletion] = (await jsonl('groups.jsonl')).slice(groups.length);
    expect(update).toMatchObject({ stream: 'groups', op: 'updated', key: renamed.id, record: { name: 'Niemiecki A2 — soboty' }, previous: { name: renamed.name } });
    expect(update!.changes).toContainEqual({ path: 'name', from: renamed.name, to: 'Niemiecki A2 — soboty' });
    expect(deletion).toMatchObject({ stream: 'groups', op: 'deleted', key: groups[2]!.id, record: null });
    const [row] = await app.store.snapshot.rows('groups', [renamed.id]);
    expect(JSON.parse(row!.body)).toMatchObject({ id: renamed.id, name: 'Niemiecki A2 — soboty' });
    expect(await app.store.snapshot.size('groups')).toBe(groups.length - 1);
  });

  it('is not polled for a config whose connectors take the other streams, which behaves as before', async () => {
    const app = await start(['students', 'users', 'invoices', 'roster']);
    const result = await app.poll.sync();
    expect(Object.keys(result.streams)).toEqual(['students', 'users']);
    await awaitDeliveries(app);
    expect(app.sandbox!.control.requestCount('GET', '/api/v2/groups')).toBe(0);
    expect(await app.store.snapshot.size('groups')).toBe(0);
    expect(await jsonl('groups.jsonl')).toEqual([]);
  });

  it('is polled when poll.streams lists it, though no connector takes it', async () => {
    const app = await start(['students'], { streams: ['groups'] });
    const result = await app.poll.sync();
    expect(Object.keys(result.streams)).toEqual(['students', 'users', 'groups']);
    expect(await app.store.snapshot.size('groups')).toBe(app.sandbox!.control.groups().length);
    await awaitDeliveries(app);
    expect(await jsonl('groups.jsonl')).toEqual([]);
  });
});
