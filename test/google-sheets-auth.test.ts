/**
 * Service-account auth with a locally generated key: the client signs its own JWT with the
 * spreadsheets scope (no token endpoint exists here, so any token call would fail the test),
 * and check() explains a missing share, a bad key and a missing key file. Also the cell limit.
 */
import { generateKeyPairSync } from 'node:crypto';
import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, afterAll, describe, expect, it } from 'vitest';
import { googleSheetsConnector } from '../connectors/google-sheets/index.js';
import { deliver } from './fake-sheets/deliver.js';
import { startFakeSheets, type FakeSheets } from './fake-sheets/index.js';
import { change, sheetsContext, student } from './fake-sheets/context.js';

const EMAIL = 'bridge@school-project.iam.gserviceaccount.com';
const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const publicKeyPem = publicKey.export({ type: 'spki', format: 'pem' }) as string;
let dir: string;
let keyFile: string;
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sheets-auth-'));
  keyFile = join(dir, 'key.json');
  await writeFile(keyFile, JSON.stringify({
    type: 'service_account', client_email: EMAIL, private_key_id: 'k1',
    private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }),
    token_uri: 'http://127.0.0.1:9/never-called',
  }));
});
afterAll(() => rm(dir, { recursive: true, force: true }));
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

async function setup(options: { sharedWith?: string[]; cellLimit?: number } = {}) {
  const fake: FakeSheets = await startFakeSheets({ serviceAccounts: [{ email: EMAIL, publicKeyPem }], ...options });
  fake.createSpreadsheet('s1');
  cleanups.push(() => fake.close());
  const connect = (file: string) => {
    const { ctx, close } = sheetsContext({ spreadsheetId: 's1', credentialsFile: file, rootUrl: fake.rootUrl });
    cleanups.push(close);
    return ctx;
  };
  return { fake, connect };
}

describe('google-sheets service-account auth', () => {
  it('signs requests locally and writes rows', async () => {
    const { fake, connect } = await setup();
    const ctx = connect(keyFile);
    expect(await googleSheetsConnector.check(ctx)).toEqual({ ok: true });
    expect(await deliver(ctx, [change(1, 'created', student(1))])).toEqual([{ status: 'done' }]);
    expect(fake.values('s1', 'Students')).toHaveLength(2);
  });

  it('names the e-mail to share the spreadsheet with when it is not shared', async () => {
    const { connect } = await setup({ sharedWith: [] });
    const ctx = connect(keyFile);
    const result = await googleSheetsConnector.check(ctx);
    expect(result).toMatchObject({ ok: false, reason: expect.stringContaining(`share the spreadsheet with ${EMAIL}`) });
    expect((await deliver(ctx, [change(1, 'created', student(1))]))[0]).toMatchObject({ status: 'dead', error: { code: 'sheets.forbidden' } });
  });

  it('reports a bad key and a missing key file', async () => {
    const { connect } = await setup();
    const bad = join(dir, 'bad.json');
    await writeFile(bad, JSON.stringify({ type: 'service_account', client_email: EMAIL, private_key: 'not a key' }));
    expect(await googleSheetsConnector.check(connect(bad))).toMatchObject({ ok: false, reason: expect.stringContaining('sheets.credentials') });
    expect(await googleSheetsConnector.check(connect(join(dir, 'missing.json')))).toMatchObject({ ok: false, reason: expect.stringContaining('cannot read the service-account key') });
  });

  it('retries while the key file is missing or not a key, and delivers once a key is put in its place', async () => {
    const { fake, connect } = await setup();
    const later = join(dir, 'later.json');
    const ctx = connect(later);
    expect((await deliver(ctx, [change(1, 'created', student(1))]))[0]).toMatchObject({ status: 'retry', error: { code: 'sheets.credentials', message: expect.stringContaining('cannot read the service-account key') } });
    await writeFile(later, JSON.stringify({ type: 'authorized_user' }));
    expect((await deliver(ctx, [change(1, 'created', student(1))]))[0]).toMatchObject({ status: 'retry', error: { code: 'sheets.credentials', message: expect.stringContaining('is not a service-account JSON key') } });
    await copyFile(keyFile, later);
    expect((await deliver(ctx, [change(1, 'created', student(1))]))[0]).toMatchObject({ status: 'done' });
    expect(fake.values('s1', 'Students')).toHaveLength(2);
  });

  it('makes the workbook cell limit a dead, clearly worded outcome', async () => {
    const { connect } = await setup({ cellLimit: 30_000 });
    const ctx = connect(keyFile);
    const out = await deliver(ctx, [change(1, 'created', student(1))]);
    expect(out[0]).toMatchObject({ status: 'dead', error: { code: 'sheets.cell_limit', message: expect.stringContaining('cell limit') } });
  });
});
