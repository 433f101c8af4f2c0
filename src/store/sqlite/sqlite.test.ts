import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll } from 'vitest';
import { describeStoreConformance } from '../conformance.js';
import { describeHistoryConformance } from '../conformance-history.js';
import { createSqliteStore } from './sqlite-store.js';

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

const sqlite = {
  async open(options = {}) {
    const dir = await mkdtemp(path.join(tmpdir(), 'sb-sqlite-'));
    dirs.push(dir);
    return createSqliteStore({ dir, log: pino({ level: 'silent' }), ...options });
  },
};

describeStoreConformance('sqlite', sqlite);
describeHistoryConformance('sqlite', sqlite);
