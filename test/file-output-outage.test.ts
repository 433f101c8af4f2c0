import { readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually } from './support/net.js';
import { buildDiskShim, powerCut, sendEvent, startDaemon } from './support/outage.js';
import { tempDir } from './support/temp.js';

/**
 * The `file` connector's output on a disk whose fsyncs fail for a while (the preloaded shim, on the
 * output directory only): an append whose sync failed is written again once the disk syncs again,
 * not taken for written because its lines are still in the page cache. A power cut afterwards
 * loses none of the records delivered and leaves no line that does not parse.
 */
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Deliveries of the `files` connector not done yet, from /metrics. */
async function depth(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('schoolbridge_outbox_depth{connector="files"}'));
  return Number(line?.split(' ').at(-1) ?? NaN);
}

describe('the file connector on a disk whose fsyncs fail', () => {
  it('appends again what a failed sync may have left off the disk', async () => {
    const dir = await tempDir('schoolbridge-output-');
    cleanups.push(() => dir.cleanup());
    const out = path.join(dir.dir, 'out');
    const file = path.join(out, 'events.jsonl');
    const flag = path.join(dir.dir, 'syncs-fail');
    const diskLog = path.join(dir.dir, 'disk.log');
    const { url, child } = await startDaemon(dir.dir, {
      store: { driver: 'sqlite', dir: path.join(dir.dir, 'store') },
      env: { LD_PRELOAD: await buildDiskShim(dir.dir), SB_FULL_DIR: out, SB_FULL_FLAG: flag, SB_FULL_MODE: 'sync', SB_DISK_LOG: diskLog },
      config: { delivery: { backoff: { baseMs: 100, maxMs: 400 } } },
      cleanup: (fn) => cleanups.push(fn),
    });
    const delivered = () => eventually(async () => ((await depth(url)) === 0 ? true : undefined), 30_000, 'the outbox to deliver everything');
    const sendMore = async (count: number) => {
      for (let i = 0; i < count; i++) expect((await sendEvent(url)).status).toBe(200);
      await delivered();
    };
    await sendMore(5);

    await writeFile(flag, '');
    expect((await sendEvent(url)).status).toBe(200);
    // Its lines were appended, and the sync that was to make them count failed.
    const failedSync = `S ${file} fail`;
    await eventually(async () => ((await readFile(diskLog, 'utf8')).includes(failedSync) ? true : undefined), 30_000, 'a failed sync of the output');
    await rm(flag);
    await delivered();
    await sendMore(5);
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));

    expect(await powerCut(diskLog)).toBeGreaterThan(0);
    const lines = (await readFile(file, 'utf8')).split('\n').filter((line) => line !== '');
    const ids = lines.map((line) => {
      try {
        return (JSON.parse(line) as { id: string }).id;
      } catch {
        return `unparsable: ${JSON.stringify(line.slice(0, 40))}`;
      }
    });
    expect(ids.filter((id) => id.startsWith('unparsable'))).toEqual([]);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toHaveLength(11);
  });
});
