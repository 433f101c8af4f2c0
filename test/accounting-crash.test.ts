import { spawn, type ChildProcess } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readLedgerRows } from './support/ledger.js';
import { startAccountingReceiver } from './accounting-receiver.js';
import { eventually } from './support/net.js';
import { freshStoreAt, type StoreAt } from './support/store-at.js';
import { ENGINES } from './support/stores.js';
import { tempDir } from './support/temp.js';
import { typeScriptArgs } from './support/typescript.js';

const VERSIONS = 40;
const children: ChildProcess[] = [];
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function startChild(store: StoreAt, ledgerDir: string, url: string): { child: ChildProcess; exited: Promise<unknown> } {
  const args = [store.engine, store.where, ledgerDir, url, String(VERSIONS)];
  const child = spawn(process.execPath, typeScriptArgs('test/fixtures/accounting-crash-child.ts', ...args), {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  children.push(child);
  return { child, exited: new Promise((resolve) => child.on('exit', resolve)) };
}

async function ledgerIds(ledgerDir: string): Promise<string[]> {
  const names = (await readdir(ledgerDir).catch(() => [] as string[])).filter((name) => name.startsWith('ledger-'));
  const ids: string[] = [];
  for (const name of names) {
    const rows = await readLedgerRows(join(ledgerDir, name));
    ids.push(...rows.map((row) => row.recordId!));
  }
  return ids;
}

describe.each(ENGINES)('accounting ledger under kill -9 on %s', (engine) => {
  it('every version reaches the receiver and the ledger exactly once across crashes mid-delivery', async () => {
    const receiver = await startAccountingReceiver();
    const { dir, cleanup } = await tempDir('accounting-crash-');
    const { at: store, cleanup: dropStore } = await freshStoreAt(engine);
    cleanups.push(cleanup, dropStore, () => receiver.close());
    const ledgerDir = join(dir, 'ledger');

    // Kill while requests, ledger appends and outbox commits are in flight (4 deliveries at a time).
    for (const killAfter of [3, 14, 25]) {
      const { child, exited } = startChild(store, ledgerDir, receiver.url);
      await receiver.waitForRequests(killAfter);
      child.kill('SIGKILL');
      await exited;
    }
    expect(receiver.accepted.size).toBeLessThan(VERSIONS);

    const { child, exited } = startChild(store, ledgerDir, receiver.url);
    // The child's files are outside this process: poll them (test/support eventually), no fixed sleeps.
    await eventually(async () => ((await ledgerIds(ledgerDir)).length >= VERSIONS ? true : undefined), 30_000, 'a complete ledger');
    child.kill('SIGKILL');
    await exited;

    const ids = await ledgerIds(ledgerDir);
    expect(new Set(ids).size).toBe(VERSIONS);
    expect(ids).toHaveLength(VERSIONS);
    expect(receiver.accepted.size).toBe(VERSIONS);
    // Redeliveries after a crash reuse the record id as Idempotency-Key: extra requests, never extra invoices.
    const keys = new Set(receiver.requests.map((r) => r.headers['idempotency-key']));
    expect(keys.size).toBe(VERSIONS);
  });
});
