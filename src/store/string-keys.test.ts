import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, describe, vi } from 'vitest';
import { testDatabase } from '../../test/support/pg-database.js';
import { inProcessSqliteStore } from '../../test/support/sqlite-in-process.js';
import type { SnapshotStream } from './index.js';
import { harness, streamCases } from './conformance.js';
import { createPgStore } from './postgres/pg-store.js';

/**
 * Keys that are strings, on both engines: the registry gets `codes`, a stream of string keys
 * (test/support/codes-stream.ts), and the stream cases of the conformance suite run for it, its
 * snapshot table and the columns every stream's keys share (a created change's row, a range's
 * bounds) included. Among its keys are "0123" and "10": kept as the text they are.
 */
// The factory imports codes-stream itself: vi.mock is hoisted above the file's imports, and a module
// those imports load may ask for the registry before a top-level import would be initialized.
vi.mock('../streams/registry.js', async (original) => (await import('../../test/support/codes-stream.js')).withCodes(original));

const CODES = ['codes' as SnapshotStream];
const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

describe('string keys on sqlite', () => {
  streamCases(harness({
    async open() {
      const dir = await mkdtemp(path.join(tmpdir(), 'sb-keys-'));
      dirs.push(dir);
      return inProcessSqliteStore(path.join(dir, 'schoolbridge.db'));
    },
  }), CODES);
});

describe('string keys on postgres', () => {
  streamCases(harness({ open: async () => createPgStore({ url: await testDatabase('keys'), log: pino({ level: 'silent' }) }) }), CODES);
});
