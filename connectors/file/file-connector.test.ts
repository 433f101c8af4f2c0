import { appendFile, mkdir, mkdtemp, readdir, readFile, readlink, realpath, rename, rm, rmdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { Agent } from 'undici';
import { releaseCache } from '../../src/connectors/cache.js';
import { StoredRecord } from '../../src/connectors/stored-record.js';
import type { ConnectorContext } from '../../src/connectors/types.js';
import { createMetricsRegistry } from '../../src/metrics.js';
import { ROSTER_COLUMNS, type AnyRecord, type RosterRow } from '../../src/records.js';
import { TEST_NOW_MS, testClock } from '../../test/support/clock.js';
import { change, roster } from '../../test/support/outbox.js';
import { fileConnector } from './index.js';
import { JsonlFile, readId } from './jsonl-file.js';
import { fileConfigSchema, type FileConfig } from './schema.js';

let dir: string;
const dispatcher = new Agent();

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'schoolbridge-file-'));
});
/** The caches of the contexts a test made: let go after it, as the outbox does at stop, so no file stays open. */
const caches: Map<string, unknown>[] = [];
afterEach(async () => {
  await Promise.all(caches.splice(0).map(releaseCache));
  await rm(dir, { recursive: true, force: true });
});

/** A fresh context is what a restarted process has: no cache. */
function context(outDir = path.join(dir, 'out'), csv: unknown = undefined): ConnectorContext<FileConfig> {
  const config = fileConfigSchema.parse({ name: 'files', type: 'file', streams: ['students', 'users', 'roster'], dir: outDir, csv });
  const cache = new Map<string, unknown>();
  caches.push(cache);
  return { config, dispatcher, clock: testClock(TEST_NOW_MS, { sleep: 'timers' }), log: pino({ level: 'silent' }), signal: new AbortController().signal, metrics: createMetricsRegistry(), cache };
}

/** Delivers records made in memory, as the outbox would hand them over: with JSON.stringify's text. */
const deliver = (ctx: ConnectorContext<FileConfig>, records: readonly AnyRecord[]) =>
  fileConnector.deliver(ctx, records.map((record) => StoredRecord.of(record)));

const readLines = async (stream: string) =>
  (await readFile(path.join(dir, 'out', `${stream}.jsonl`), 'utf8')).split('\n').filter(Boolean).map((l) => JSON.parse(l) as { id: string });

const row = (patch: Partial<RosterRow>): RosterRow => ({
  studentId: 1, userId: 10, login: 'anna', firstName: 'Anna', lastName: 'Kowalska', fullname: 'Anna Kowalska', email: null,
  phone: 'ffdfff', mobile: null, street: 'Kwiatowa 4/5 ', zipCode: '01-123 ', city: 'Łódź', language: 'pl', isActive: 1,
  isAdult: 0, isArchived: 1, parentUserId: null, parentFirstName: null, parentLastName: null, parentEmail: null,
  parentPhone: null, parentMobile: null, ...patch,
});

describe('file connector', () => {
  it('appends one JSON line per record to <dir>/<stream>.jsonl, id first', async () => {
    const records = [change('students', 1), change('users', 2), change('students', 3)];
    expect(await deliver(context(), records)).toEqual([{ status: 'done' }, { status: 'done' }, { status: 'done' }]);
    expect(await readLines('students')).toEqual([records[0], records[2]]);
    expect(await readLines('users')).toEqual([records[1]]);
    const raw = await readFile(path.join(dir, 'out', 'users.jsonl'), 'utf8');
    expect(raw.startsWith(`{"id":${JSON.stringify(records[1]!.id)},`)).toBe(true);
  });

  it('writes the stored JSON text as the line, byte for byte, not the record serialized again', async () => {
    // A number spelt 1.50, spaces after separators and \u escapes: JSON.stringify of the parsed record
    // writes each of them differently, so only the stored text itself matches. "Żółta" is raw UTF-8.
    const id = 'students:9:000000000001';
    const json = `{"id":"${id}", "stream":"students", "key":9, "fee":1.50, "city":"\\u0141\\u00f3d\\u017a", "street":"Żółta 1"}`;
    const stored = new StoredRecord(id, 'students', json);
    expect(JSON.stringify(stored.record)).not.toBe(json);
    expect(await fileConnector.deliver(context(), [stored])).toEqual([{ status: 'done' }]);
    expect(await readFile(path.join(dir, 'out', 'students.jsonl'))).toEqual(Buffer.from(`${json}\n`, 'utf8'));
  });

  it('writes a record held as UTF-8 bytes as they are, beside records held as text, in order', async () => {
    const bytes = Buffer.from('{"id":"users:2:000000000002", "city":"Żółta"}');
    const records = [StoredRecord.of(change('users', 1)), new StoredRecord('users:2:000000000002', 'users', bytes), StoredRecord.of(change('users', 3))];
    expect(await fileConnector.deliver(context(), records)).toEqual([{ status: 'done' }, { status: 'done' }, { status: 'done' }]);
    const lines = (await readFile(path.join(dir, 'out', 'users.jsonl'))).toString('utf8').split('\n');
    expect(lines.slice(0, 3)).toEqual([records[0]!.json, bytes.toString('utf8'), records[2]!.json]);
    expect(records[1]!.record).toEqual({ id: 'users:2:000000000002', city: 'Żółta' });
  });

  it('never writes a record id twice: not in one process, not after a restart', async () => {
    const a = change('students', 1);
    const b = change('students', 2);
    const ctx = context();
    await deliver(ctx, [a, a]);
    await deliver(ctx, [a, b]);
    await deliver(context(), [a, b, change('students', 3)]);
    expect((await readLines('students')).map((r) => r.id)).toEqual([a.id, b.id, expect.stringMatching(/^students:3:/)]);
  });

  it('keeps its files open between deliveries and closes them when its cache is let go', async () => {
    // Descriptors of this process open on the connector's files (Linux: /proc/self/fd).
    const openOn = async () => {
      const out = await realpath(path.join(dir, 'out'));
      const targets = await Promise.all((await readdir('/proc/self/fd')).map((fd) => readlink(`/proc/self/fd/${fd}`).catch(() => '')));
      return targets.filter((target) => target.startsWith(`${out}${path.sep}`)).map((target) => path.basename(target)).sort();
    };
    const ctx = context();
    const first = change('students', 1);
    await deliver(ctx, [first, change('users', 2)]);
    expect(await openOn()).toEqual(['students.jsonl', 'users.jsonl']);
    await releaseCache(ctx.cache);
    expect(await openOn()).toEqual([]);
    // The next delivery opens what it writes again, and still writes each id once.
    const again = change('students', 3);
    await deliver(ctx, [first, again]);
    expect(await openOn()).toEqual(['students.jsonl']);
    expect((await readLines('students')).map((r) => r.id)).toEqual([first.id, again.id]);
    await releaseCache(ctx.cache);
  });

  it('writes to the file at its path after its directory was deleted while running, made again', async () => {
    const ctx = context();
    const before = change('students', 1);
    await deliver(ctx, [before]);
    await rm(path.join(dir, 'out'), { recursive: true });
    const after = change('students', 2);
    expect(await deliver(ctx, [before, after])).toEqual([{ status: 'done' }, { status: 'done' }]);
    // What was deleted is the operator's; what came after is in the file there is now, each once.
    expect((await readLines('students')).map((r) => r.id)).toEqual([before.id, after.id]);
    await deliver(ctx, [after]);
    expect((await readLines('students')).map((r) => r.id)).toEqual([before.id, after.id]);
  });

  it('starts a new file where the old one was moved away while running, and leaves the old one be', async () => {
    const ctx = context();
    const first = change('students', 1);
    await deliver(ctx, [first]);
    const moved = path.join(dir, 'out', 'students.1.jsonl');
    await rename(path.join(dir, 'out', 'students.jsonl'), moved);
    const second = change('students', 2);
    expect(await deliver(ctx, [second])).toEqual([{ status: 'done' }]);
    expect((await readLines('students')).map((r) => r.id)).toEqual([second.id]);
    expect((await readFile(moved, 'utf8')).split('\n').filter(Boolean).map((l) => readId(l))).toEqual([first.id]);
  });

  it('cuts a torn last line left by a crash before appending', async () => {
    const a = change('students', 1);
    await deliver(context(), [a]);
    await appendFile(path.join(dir, 'out', 'students.jsonl'), '{"id":"students:2:torn","stre');
    const b = change('students', 2);
    expect(await deliver(context(), [b])).toEqual([{ status: 'done' }]);
    expect((await readLines('students')).map((r) => r.id)).toEqual([a.id, b.id]);
  });

  it('reads ids of lines not written by us too', () => {
    expect(readId('{"id":"a\\"b","x":1}')).toBe('a"b');
    expect(readId('{"x":1,"id":"later"}')).toBe('later');
    expect(readId('not json')).toBeUndefined();
    expect(readId('{"id":5}')).toBeUndefined();
  });

  it('a write that fails is a retry', async () => {
    await writeFile(path.join(dir, 'blocked'), 'a file where the directory should be');
    const [outcome] = await deliver(context(path.join(dir, 'blocked', 'sub')), [change('students', 1)]);
    expect(outcome).toMatchObject({ status: 'retry', error: { code: 'file.write_failed', retryable: true } });
    expect(await fileConnector.check(context(path.join(dir, 'blocked', 'sub')))).toMatchObject({ ok: false, reason: expect.stringContaining('a file takes its path') });
    expect(await fileConnector.check(context())).toEqual({ ok: true });

    // One stream's file cannot be written: only its records are retried, and the check says so
    // (the directory is writable, as a full disk's is) until that file takes a write.
    await mkdir(path.join(dir, 'out', 'students.jsonl'));
    const ctx = context();
    const outcomes = await deliver(ctx, [change('students', 1), change('users', 2)]);
    expect(outcomes).toMatchObject([{ status: 'retry', error: { code: 'file.write_failed' } }, { status: 'done' }]);
    const failing = await fileConnector.check(ctx);
    expect(failing.ok === false && failing.reason).toMatch(/^cannot write .*students\.jsonl: .*EISDIR.*; deliveries wait until it can be written/);
    expect(await deliver(ctx, [change('users', 3)])).toEqual([{ status: 'done' }]);
    expect((await fileConnector.check(ctx)).ok).toBe(false);
    await rmdir(path.join(dir, 'out', 'students.jsonl'));
    expect(await deliver(ctx, [change('students', 1)])).toEqual([{ status: 'done' }]);
    expect(await fileConnector.check(ctx)).toEqual({ ok: true });
  });

  it('writes the records of an append that failed the next time, and the others not again', async () => {
    const file = path.join(dir, 'students.jsonl');
    const jsonl = new JsonlFile(file);
    const [a, b] = [change('students', 1), change('students', 2)].map((r) => StoredRecord.of(r));
    expect(await jsonl.append([a!])).toBe(1);
    // The file cannot be opened for the next append: a directory stands where it was.
    await jsonl.close();
    await rename(file, `${file}.kept`);
    await mkdir(file);
    await expect(jsonl.append([a!, b!])).rejects.toThrow();
    await rmdir(file);
    await rename(`${file}.kept`, file);
    expect(await jsonl.append([a!, b!])).toBe(1);
    await jsonl.close();
    expect((await readFile(file, 'utf8')).split('\n').filter(Boolean).map((l) => readId(l))).toEqual([a!.id, b!.id]);
  });

  it('writes a roster export as roster-YYYY-MM-DD.csv: RFC 4180, UTF-8, header row, atomically', async () => {
    const rows = [row({}), row({ studentId: 2, lastName: 'Nowak, "Jr."', street: 'Długa 1\nm. 2', email: 'zażółć@gęślą.pl' })];
    const machine = { bom: false, separator: ',', header: 'keys', formulas: 'keep' };
    expect(await deliver(context(undefined, machine), [roster('2026-11-22', rows)])).toEqual([{ status: 'done' }]);
    const text = await readFile(path.join(dir, 'out', 'roster-2026-11-22.csv'), 'utf8');
    const lines = text.split('\r\n');
    expect(lines[0]).toBe(ROSTER_COLUMNS.join(','));
    expect(lines[1]).toBe('1,10,anna,Anna,Kowalska,Anna Kowalska,,ffdfff,,Kwiatowa 4/5 ,01-123 ,Łódź,pl,1,0,1,,,,,,');
    expect(text).toContain('"Nowak, ""Jr."""');
    expect(text).toContain('"Długa 1\nm. 2"');
    expect(text.endsWith('\r\n')).toBe(true);
    expect(await readdir(path.join(dir, 'out'))).toEqual(['roster-2026-11-22.csv']);

    await deliver(context(undefined, machine), [roster('2026-11-22', rows)]);
    expect(await readFile(path.join(dir, 'out', 'roster-2026-11-22.csv'), 'utf8')).toBe(text);
  });

  it('a roster record without a usable date is dead', async () => {
    const [outcome] = await deliver(context(), [roster('../../etc', [])]);
    expect(outcome).toMatchObject({ status: 'dead', error: { code: 'file.bad_record' } });
  });
});
