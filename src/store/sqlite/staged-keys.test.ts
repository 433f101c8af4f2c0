import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { NOW, freshRows } from '../conformance/support.js';
import { PART_ROWS } from '../range-parts.js';
import { CHAIN_LENGTH } from '../tables.js';
import { createSqliteStore } from './sqlite-store.js';

const log = pino({ level: 'silent' });
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function opened(dir: string) {
  const store = createSqliteStore({ dir, log });
  await store.start();
  cleanups.push(() => store.stop());
  return store;
}

const rows = (n: number) => Array.from({ length: n }, (_, i) => ({ key: i + 1, chain: `c${String(i + 1).padStart(CHAIN_LENGTH - 1, '0')}`, json: `{"id":${i + 1}}` }));
const created = { detectedAt: 'T0', connectors: ['a'], now: NOW };

describe('the keys a fresh snapshot was staged with (staged-keys.ts)', () => {
  it('split its created range into parts, and when they are lost with a restart one range owes every row', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'sb-staged-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const n = 3 * PART_ROWS;
    const first = await opened(dir);
    await first.snapshot.begin('students', 'fresh');
    await first.snapshot.stageFresh('students', freshRows(rows(n)));
    await first.snapshot.applyFresh('students', { state: {}, created });
    expect((await first.outbox.ranges()).map((r) => r.part)).toEqual([0, 1, 2]);
    await first.snapshot.begin('users', 'fresh');
    await first.snapshot.stageFresh('users', freshRows(rows(n)));
    await first.stop();
    const second = await opened(dir);
    await second.snapshot.applyFresh('users', { state: {}, created });
    expect((await second.outbox.ranges()).filter((r) => r.stream === 'users').map((r) => [r.part, r.remaining, r.upto])).toEqual([[0, n, n]]);
  });
});
