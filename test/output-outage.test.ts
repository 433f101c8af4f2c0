import { readFile, readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readCsv, separatorOf } from '../connectors/accounting/csv-read.js';
import { startAccountingReceiver } from './accounting-receiver.js';
import { eventually } from './support/net.js';
import { buildDiskShim, powerCut, sendEvent, startDaemon } from './support/outage.js';
import { tempDir } from './support/temp.js';

/**
 * A connector's own files on a disk whose fsyncs fail for a while (the preloaded shim, on their
 * directory only): the `file` connector's output and the `accounting` connector's ledger. An append
 * whose sync failed is written again once the disk syncs again, not taken for written because it is
 * still in the page cache. A power cut afterwards loses none of the records delivered and leaves no
 * line that does not parse.
 */
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Deliveries of a connector not done yet, from /metrics. */
async function depth(url: string, connector: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`schoolbridge_outbox_depth{connector="${connector}"}`));
  return Number(line?.split(' ').at(-1) ?? NaN);
}

interface Output {
  connector: Record<string, unknown> & { name: string };
  /** The directory of the connector's files: the shim fails the syncs of what is under it. */
  dir: string;
  /** The files appended to, among those in `dir`. */
  file: RegExp;
  /** The record ids in one of the files; a line that does not parse gives `unparsable: …`. */
  ids(text: string): string[];
}

/**
 * Five events delivered; one whose append's fsync fails; the disk syncs again and it is delivered;
 * five more; kill -9 and a power cut; then the eleven records are in the file, each once.
 */
async function syncFailsUnder(dir: string, output: Output): Promise<void> {
  const out = output.dir;
  const flag = path.join(dir, 'syncs-fail');
  const diskLog = path.join(dir, 'disk.log');
  const { url, child } = await startDaemon(dir, {
    store: { driver: 'sqlite', dir: path.join(dir, 'store') },
    env: { LD_PRELOAD: await buildDiskShim(dir), SB_FULL_DIR: out, SB_FULL_FLAG: flag, SB_FULL_MODE: 'sync', SB_DISK_LOG: diskLog },
    config: { connectors: [output.connector], delivery: { backoff: { baseMs: 100, maxMs: 400 } } },
    cleanup: (fn) => cleanups.push(fn),
  });
  const delivered = () => eventually(async () => ((await depth(url, output.connector.name)) === 0 ? true : undefined), 30_000, 'the outbox to deliver everything');
  const sendMore = async (count: number) => {
    for (let i = 0; i < count; i++) expect((await sendEvent(url)).status).toBe(200);
    await delivered();
  };
  await sendMore(5);

  await writeFile(flag, '');
  expect((await sendEvent(url)).status).toBe(200);
  // Its append was written, and the sync that was to make it count failed.
  const failedSync = (line: string) => line.startsWith(`S ${out}/`) && line.split(' ')[2] === 'fail';
  await eventually(async () => ((await readFile(diskLog, 'utf8')).split('\n').some(failedSync) ? true : undefined), 30_000, 'a failed sync of the output');
  await rm(flag);
  await delivered();
  await sendMore(5);
  child.kill('SIGKILL');
  await new Promise((resolve) => child.once('exit', resolve));

  expect(await powerCut(diskLog)).toBeGreaterThan(0);
  const files = (await readdir(out)).filter((name) => output.file.test(name));
  expect(files.length).toBeGreaterThan(0);
  const ids: string[] = [];
  for (const name of files) ids.push(...output.ids(await readFile(path.join(out, name), 'utf8')));
  expect(ids.filter((id) => id.startsWith('unparsable'))).toEqual([]);
  expect(new Set(ids).size).toBe(ids.length);
  expect(ids).toHaveLength(11);
}

describe("a connector's files on a disk whose fsyncs fail", () => {
  it('file: appends again what a failed sync may have left off the disk', async () => {
    const dir = await tempDir('schoolbridge-output-');
    cleanups.push(() => dir.cleanup());
    const out = path.join(dir.dir, 'out');
    await syncFailsUnder(dir.dir, {
      connector: { name: 'files', type: 'file', streams: ['events'], dir: out },
      dir: out,
      file: /^events\.jsonl$/,
      ids: (text) => text.split('\n').filter((line) => line !== '').map((line) => {
        try {
          return (JSON.parse(line) as { id: string }).id;
        } catch {
          return `unparsable: ${JSON.stringify(line.slice(0, 40))}`;
        }
      }),
    });
  });

  it('accounting: writes again the ledger row a failed sync may have left off the disk', async () => {
    const dir = await tempDir('schoolbridge-ledger-');
    cleanups.push(() => dir.cleanup());
    const receiver = await startAccountingReceiver();
    cleanups.push(() => receiver.close());
    const out = path.join(dir.dir, 'ledger');
    await syncFailsUnder(dir.dir, {
      connector: { name: 'books', type: 'accounting', url: receiver.url, secret: 'books-secret', ledgerDir: out },
      dir: out,
      // One file per day the events were received on.
      file: /^ledger-\d{4}-\d{2}-\d{2}\.csv$/,
      ids: (text) => {
        const { rows, completeLength } = readCsv(text, separatorOf(text));
        const recordIds = rows.slice(1).map((row) => row[0] ?? '');
        return [
          ...recordIds.map((id) => (/^[\w.:-]+$/.test(id) ? id : `unparsable: ${JSON.stringify(id.slice(0, 40))}`)),
          ...(completeLength < text.length ? ['unparsable: a torn last row'] : []),
        ];
      },
    });
  });
});
