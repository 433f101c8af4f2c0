import { open, readFile, readdir, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { csvHeader, toCsvRow, type CsvFormat } from '../../src/csv.js';
import { BridgeError } from '../../src/errors.js';
import { syncDir, truncateDurably } from '../../src/files/durable.js';
import { makeDir } from '../../src/files/make-dir.js';
import { readCsv, separatorOf } from './csv-read.js';
import type { FeedBodyV1 } from './feed.js';
import { LEDGER_COLUMNS, LEDGER_FILE, LEDGER_LABELS, ledgerFileName, ledgerRow } from './ledger-row.js';

/**
 * The daily ledger: `<dir>/ledger-YYYY-MM-DD.csv`, one row per invoice version, each record id once.
 *
 * The ledger files are their own index: the set of written ids is read back from them on first use,
 * so nothing else has to agree with them after a crash. A crash can leave the last row half-written;
 * that tail was never acknowledged, so it is cut off when the files are read, and the redelivery
 * writes the row whole. Every append is fsync'd before it counts, and one that fails is cut off the
 * file again before the files are read back: after a failed fsync its row may be read back from the
 * page cache and yet never reach the disk. Appends run one at a time (the outbox may deliver several
 * invoices at once) so the check for an id and its append cannot interleave.
 *
 * A new file is written in the connector's CSV format; rows appended to a file that exists keep
 * that file's separator (whatever format wrote its header), so no file ever mixes two.
 */
export interface Ledger {
  /** Appends the row of `body` (its invoice as `invoiceText`) unless its record id is already in the ledger. */
  append(body: FeedBodyV1, invoiceText: string): Promise<'written' | 'already'>;
  /** The record ids in the ledger (reads the files on first use). */
  ids(): Promise<ReadonlySet<string>>;
}

export interface LedgerOptions {
  dir: string;
  timeZone: string;
  log: Logger;
  format: CsvFormat;
}

export function createLedger({ dir, timeZone, log, format }: LedgerOptions): Ledger {
  let written: Set<string> | undefined;
  let queue: Promise<unknown> = Promise.resolve();
  /** A failed append that could not be cut off its file yet: done before the files are read again. */
  let uncut: Cut | undefined;

  const serial = <T>(work: () => Promise<T>): Promise<T> => {
    const next = queue.then(work, work);
    queue = next.catch(() => {});
    return next;
  };
  const load = async (): Promise<Set<string>> => {
    try {
      if (uncut) {
        await truncateDurably(uncut.path, uncut.size);
        uncut = undefined;
      }
      return (written ??= await readWrittenIds(dir, log));
    } catch (error) {
      if (error instanceof BridgeError) throw error;
      throw new BridgeError('accounting.ledger_read', `cannot read the ledger in ${dir}: ${(error as Error).message}`, {
        retryable: true, cause: error,
      });
    }
  };

  return {
    ids: () => serial(load),
    append: (body, invoiceText) =>
      serial(async () => {
        const ids = await load();
        if (ids.has(body.recordId)) return 'already';
        try {
          await appendRow(join(dir, ledgerFileName(body.receivedAt, timeZone)), ledgerRow(body, invoiceText), format);
        } catch (error) {
          // A failed append may have left part of a row: read the files again before the next one.
          written = undefined;
          uncut = (error as { uncut?: Cut }).uncut;
          throw new BridgeError('accounting.ledger_write', `cannot append to the ledger in ${dir}: ${(error as Error).message}`, {
            retryable: true, cause: error,
          });
        }
        ids.add(body.recordId);
        return 'written';
      }),
  };
}

/**
 * Appends one row (and the header first, to a new file), fsync'd; a new file's directory entry too.
 * To a file that exists, in that file's separator.
 */
async function appendRow(path: string, values: readonly string[], format: CsvFormat): Promise<void> {
  const file = await open(path, 'a+');
  let size: number | undefined;
  try {
    size = (await file.stat()).size;
    const text = size === 0
      ? csvHeader(LEDGER_COLUMNS, format, LEDGER_LABELS) + toCsvRow(values, format)
      : toCsvRow(values, { ...format, separator: separatorOf(await firstLine(file)) });
    await file.writeFile(text, 'utf8');
    await file.sync();
    if (size === 0) await syncDir(join(path, '..'));
  } catch (error) {
    if (size !== undefined) {
      const cut: Cut = { path, size };
      await truncateDurably(path, size).catch(() => Object.assign(error as object, { uncut: cut }));
    }
    throw error;
  } finally {
    await file.close();
  }
}

/** A file to cut back to the bytes it had before an append that failed. */
interface Cut {
  path: string;
  size: number;
}

/** The start of a file: enough to hold its header row. */
async function firstLine(file: FileHandle): Promise<string> {
  const { buffer, bytesRead } = await file.read({ buffer: Buffer.alloc(4096), position: 0 });
  return buffer.subarray(0, bytesRead).toString('utf8');
}

/** Reads every ledger file's record ids, cutting off a torn last row where a crash left one. */
async function readWrittenIds(dir: string, log: Logger): Promise<Set<string>> {
  await makeDir(dir);
  const ids = new Set<string>();
  const names = (await readdir(dir)).filter((name) => LEDGER_FILE.test(name)).sort();
  for (const name of names) {
    const path = join(dir, name);
    const raw = await readFile(path);
    const text = raw.toString('utf8');
    const { rows, completeLength } = readCsv(text, separatorOf(text));
    if (completeLength < text.length) await cutTornTail(path, raw, text.slice(0, completeLength), log);
    const [header, ...body] = rows;
    const column = Math.max(0, header?.findIndex((name) => name === 'recordId' || name === LEDGER_LABELS.recordId) ?? 0);
    for (const row of body) {
      const id = row[column];
      if (id) ids.add(id);
    }
  }
  return ids;
}

async function cutTornTail(path: string, raw: Buffer, complete: string, log: Logger): Promise<void> {
  const keep = Buffer.from(complete, 'utf8');
  // Only cut what we can prove is a prefix of the file byte for byte (a file someone else edited may not be UTF-8).
  if (!raw.subarray(0, keep.length).equals(keep)) {
    throw new BridgeError('accounting.ledger_corrupt', `${path} is not a ledger file this version can read; move it away`);
  }
  log.warn({ file: path, cutBytes: raw.length - keep.length }, 'cutting the torn last row a crash left in the ledger');
  await truncateDurably(path, keep.length);
}
