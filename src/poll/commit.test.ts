import { copyFile, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { knownJson } from '../record-json.js';
import type { AnyRecord } from '../records.js';
import { createStore, type Op } from '../store/index.js';
import { changeJson, commitItems } from './commit.js';
import { CreatedChange } from './created-change.js';
import { deletedItem, diffRecord, newItem, type DiffContext, type DiffItem } from './diff.js';
import { snapshotCollection } from './snapshot.js';
import { testStudent } from './testing.js';
import { createYielder } from './yielder.js';

const ctx: DiffContext = { stream: 'students', detectedAt: '2026-03-01T10:00:00.000Z' };
const CHAIN = 'abcdefabcdef';

/** What commit.ts hands the store beside each change record, from the diff item's texts. */
const spliced = (item: DiffItem) =>
  changeJson(item.change!, item.stored === null ? null : item.stored.slice(CHAIN.length), item.previousJson ?? null);

describe('changeJson', () => {
  it('is the change record as JSON.stringify writes it, for created, updated and deleted', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1e6 }), fc.string(), fc.string(), (id, before, after) => {
        fc.pre(before !== after);
        const old = `${CHAIN}${JSON.stringify(testStudent(id, before))}`;
        const items = [
          diffRecord(ctx, testStudent(id, after), undefined)!,
          diffRecord(ctx, testStudent(id, after), old)!,
          deletedItem(ctx, String(id), old),
        ];
        for (const item of items) expect(spliced(item)).toBe(JSON.stringify(item.change));
      }),
    );
  });

  it('declines a shape it does not know (the store then serializes the value itself)', () => {
    const item = diffRecord(ctx, testStudent(1), undefined)!;
    expect(changeJson({ ...item.change!, extra: 1 } as never, item.stored!.slice(CHAIN.length), null)).toBeUndefined();
    expect(changeJson(item.change!, null, null)).toBeUndefined();
  });
});

describe('a first cycle\'s commit', () => {
  it('writes each created change with its record as the entry\'s text, and the log reads back the changes and entries committed', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'schoolbridge-commit-'));
    const crashed = await mkdtemp(path.join(tmpdir(), 'schoolbridge-commit-crashed-'));
    const log = pino({ level: 'silent' });
    try {
      const store = createStore({ dir, log });
      await store.start();
      // The outbox's layout in short: each record a value of its own, keyed by its id, with the text it has (as outbox.ts).
      const outbox = {
        enqueueOps: (records: readonly AnyRecord[]): Op[] => records.map((record) => ({ op: 'put', c: 'records', k: record.id, v: record, json: knownJson(record) })),
        notify: () => {},
      };
      const emit: DiffContext = { ...ctx, initial: 'emit' };
      const items = [1, 2, 3, 4, 5].map((id) => {
        // As the list worker makes them: the entry (chain + text as received, escapes kept) and its bytes.
        const text = JSON.stringify(testStudent(id, `Żółć "${id}"\t`)).replace('ł', '\\u0142');
        const stored = `${CHAIN}${text}`;
        return newItem(emit, String(id), stored, () => JSON.parse(text) as never, Buffer.from(stored));
      });
      expect(items.every((item) => item.change instanceof CreatedChange)).toBe(true);
      const deps = { store, outbox, chunkSize: 2, chunkBytes: 1 << 20, maxInFlight: 2 };
      await commitItems(deps as never, 'students', items, { first: [], last: [] }, createYielder(4), new AbortController().signal);
      // The log as a crash would leave it (every commit above is durable), then a checkpoint's documents.
      const segments = (await readdir(dir)).filter((f) => f.startsWith('wal-'));
      for (const file of segments) await copyFile(path.join(dir, file), path.join(crashed, file));
      // Each change went in as the text knownJson gives (the escapes as received), not re-serialized.
      const log0 = (await readFile(path.join(dir, segments[0]!))).toString('utf8');
      expect(log0.match(/\\u0142/g)).toHaveLength(10); // 5 records and their 5 snapshot entries
      await store.checkpoint();
      await store.stop();

      for (const from of [crashed, dir]) {
        const reopened = createStore({ dir: from, log });
        await reopened.start();
        for (const item of items) {
          // Plain records again: what JSON.stringify of the change reads back to.
          expect(reopened.get('records', item.change!.id)).toEqual(JSON.parse(JSON.stringify(item.change)));
          expect(reopened.get(snapshotCollection('students'), item.key)).toBe(item.stored);
        }
        expect(reopened.size('records')).toBe(5);
        await reopened.stop();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
      await rm(crashed, { recursive: true, force: true });
    }
  });
});

describe('a first cycle whose changes are deferred to the backlog', () => {
  it('commits only the entries, the first ops with the first chunk and the last with the last', async () => {
    const commits: Op[][] = [];
    const store = { commit: async (ops: Op[]) => void commits.push(ops) };
    const outbox = { enqueueOps: () => expect.unreachable('no change is enqueued in the commit'), notify: () => {} };
    const deferred: DiffContext = { ...ctx, initial: 'emit', deferCreated: true };
    const items = [1, 2, 3, 4, 5].map((id) => {
      const stored = `${CHAIN}${JSON.stringify(testStudent(id))}`;
      return newItem(deferred, String(id), stored, () => testStudent(id), Buffer.from(stored));
    });
    expect(items.every((item) => item.deferred && item.change === undefined)).toBe(true);
    const first: Op = { op: 'put', c: 'state', k: 'first', v: 1 };
    const last: Op = { op: 'put', c: 'state', k: 'last', v: 1 };
    const deps = { store, outbox, chunkSize: 2, chunkBytes: 1 << 20, maxInFlight: 2 };
    await commitItems(deps as never, 'students', items, { first: [first], last: [last] }, createYielder(4), new AbortController().signal);
    expect(commits.map((ops) => ops.map((op) => op.k))).toEqual([['1', '2', 'first'], ['3', '4'], ['5', 'last']]);
  });
});
