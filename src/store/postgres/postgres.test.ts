import pg from 'pg';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { testDatabase } from '../../../test/support/pg-database.js';
import { describeStoreConformance, event } from '../conformance.js';
import { createPgStore } from './pg-store.js';
import { SCHEMA_VERSION } from './schema.js';

const log = pino({ level: 'silent' });
let last = '';

describeStoreConformance('postgres', {
  async open() {
    last = await testDatabase('conf');
    return createPgStore({ url: last, log });
  },
  async second() {
    return createPgStore({ url: last, log });
  },
});

describe('postgres schema', () => {
  it('is created once when several replicas start on an empty database at the same moment', async () => {
    const url = await testDatabase('migrate');
    const stores = [1, 2, 3, 4].map(() => createPgStore({ url, log }));
    try {
      await Promise.all(stores.map((store) => store.start()));
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        const { rows } = await client.query<{ version: number }>('SELECT version FROM schoolbridge.migrations ORDER BY version');
        expect(rows.map((r) => r.version)).toEqual(Array.from({ length: SCHEMA_VERSION }, (_, i) => i + 1));
      } finally {
        await client.end();
      }
      expect(await stores[3]!.inbox.accept(event('one'), [])).toBe('stored');
      expect(await stores[0]!.inbox.accept(event('one'), [])).toBe('duplicate');
    } finally {
      await Promise.all(stores.map((store) => store.stop()));
    }
  });

  it('refuses a database whose schema is newer than this version knows', async () => {
    const url = await testDatabase('newer');
    const store = createPgStore({ url, log });
    await store.start();
    await store.stop();
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(`INSERT INTO schoolbridge.migrations (version) VALUES (${SCHEMA_VERSION + 1})`);
    await client.end();
    await expect(createPgStore({ url, log }).start()).rejects.toMatchObject({ code: 'store.schema_newer' });
  });
});
