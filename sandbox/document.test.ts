import { Memory } from 'lowdb';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { SandboxDocument } from './document.js';
import { createSandbox } from './sandbox.js';
import { startReceiver, type Receiver } from '../test/support/sandbox.js';
import type { Sandbox, SandboxOptions } from './types.js';

/** The sandbox's school kept in a document (an in-memory lowdb adapter here; a JSON file in the daemon). */
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function started(document: Memory<SandboxDocument>, options: SandboxOptions = {}): Promise<Sandbox> {
  const sandbox = createSandbox({ students: 6, seed: 3, retryTimeScale: 0.00001, document, ...options });
  cleanups.push(() => sandbox.stop());
  await sandbox.start();
  return sandbox;
}

async function listed(sandbox: Sandbox): Promise<string> {
  const token = sandbox.control.issueToken().access_token;
  const get = (path: string) => fetch(`${sandbox.url}${path}`, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.text());
  return `${await get('/api/v2/students')}\n${await get('/api/v2/users')}\n${await get('/api/v2/groups')}\n${await get('/api/v2/webhooks')}`;
}

describe('the sandbox document', () => {
  it('a sandbox started again continues the same school: changes, registrations, invoices, next ids', async () => {
    const document = new Memory<SandboxDocument>();
    const first = await started(document);
    const control = first.control;
    const created = control.createStudent();
    control.updateStudent(control.students()[0]!.id, { lastName: 'Nowak' });
    control.deleteStudent(control.students()[1]!.id);
    control.updateGroup(control.groups()[0]!.id, { name: 'Angielski A1 — wtorki' });
    const group = control.createGroup({ name: 'Włoski A1' });
    const token = control.issueToken().access_token;
    await fetch(`${first.url}/api/v2/webhook`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: new URLSearchParams({ event: 'invoice.created', callbackUrl: 'http://127.0.0.1:9/hook' }) });
    const invoice = control.createInvoice();
    const before = await listed(first);
    await first.stop();

    const second = await started(document);
    expect(await listed(second)).toBe(before);
    expect(second.control.invoices()).toEqual(control.invoices());
    expect(second.control.createInvoice().id).toBe(invoice.id + 1);
    expect(second.control.createStudent().id).toBe(created.id + 1);
    expect(second.control.createGroup().id).toBe(group.id + 1);
  });

  it('the random generator goes on from where it was: a restart does not replay the same activity', async () => {
    const document = new Memory<SandboxDocument>();
    const first = await started(document);
    const made = first.control.createStudent();
    await first.stop();
    const second = await started(document);
    const next = second.control.createStudent();
    expect([next.user.firstName, next.user.lastName]).not.toEqual([made.user.firstName, made.user.lastName]);
  });

  it('a delivery cut short by a stop is made by the next sandbox', async () => {
    let status = 500;
    const receiver: Receiver = await startReceiver(() => status);
    cleanups.push(() => receiver.close());
    const document = new Memory<SandboxDocument>();
    const first = await started(document, { retryTimeScale: 1 });
    const token = first.control.issueToken().access_token;
    await fetch(`${first.url}/api/v2/webhook`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: new URLSearchParams({ event: 'invoice.created', callbackUrl: receiver.url }) });
    const failed = first.control.waitFor('delivery', (attempt) => attempt.outcome === 'retry');
    const invoice = first.control.createInvoice();
    await failed;
    await first.stop();

    status = 200;
    const second = createSandbox({ students: 6, seed: 3, retryTimeScale: 0.00001, document });
    cleanups.push(() => second.stop());
    const delivered = second.control.waitFor('delivery', (attempt) => attempt.outcome === 'delivered');
    await second.start();
    const attempt = await delivered;
    expect(attempt.attempt).toBe(2);
    expect(JSON.parse(attempt.body)).toEqual({ event: 'invoice.created', object: invoice });
  });

  it('another seed or size starts a new school', async () => {
    const document = new Memory<SandboxDocument>();
    const first = await started(document);
    first.control.createStudent();
    await first.stop();
    const bigger = await started(document, { students: 7 });
    expect(bigger.control.students()).toHaveLength(7);
    await expect(document.read()).resolves.toMatchObject({ students: 7 });
  });

  it('says once a minute, not at each change, that it cannot save its school', async () => {
    const warnings: string[] = [];
    const log = pino({ level: 'warn' }, { write: (line: string) => void warnings.push(line) });
    let failing = true;
    const document = new Memory<SandboxDocument>();
    const write = document.write.bind(document);
    document.write = async (value) => {
      if (failing) throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
      return write(value);
    };
    const sandbox = await started(document, { log });
    for (let i = 0; i < 5; i++) {
      sandbox.control.createStudent();
      await new Promise((resolve) => setImmediate(resolve));
    }
    await expect.poll(() => warnings.length).toBe(1);
    failing = false;
    sandbox.control.createStudent();
    await expect.poll(async () => (await document.read())?.school.students.length).toBeGreaterThan(6);
    expect(warnings).toHaveLength(1);
    expect(JSON.parse(warnings[0]!)).toMatchObject({ msg: 'the sandbox could not save its school; it tries again at each change' });
  });

  it('a document that is not a saved school stops the start, and is kept as it was', async () => {
    const saved = async (value: unknown) => {
      const document = new Memory<SandboxDocument>();
      await document.write(value as SandboxDocument);
      const sandbox = createSandbox({ students: 6, seed: 3, document });
      cleanups.push(() => sandbox.stop());
      const error = await sandbox.start().then(() => undefined, (e: unknown) => e as { code?: string; message?: string });
      await expect(document.read()).resolves.toEqual(value);
      return error;
    };
    const ends = 'move its file away to start a new school';
    expect(await saved([1, 2])).toMatchObject({ code: 'sandbox.document_unreadable', message: `the sandbox's saved school cannot be restored (not a JSON object); ${ends}` });
    expect(await saved({})).toMatchObject({ message: `the sandbox's saved school cannot be restored (its format is missing, and this version reads 1); ${ends}` });
    expect(await saved({ format: 2, seed: 3, students: 6 })).toMatchObject({ message: expect.stringContaining('its format is 2') as unknown });
    expect(await saved({ format: 1, seed: 3, students: 6, random: 1, school: 'x' })).toMatchObject({
      message: `the sandbox's saved school cannot be restored (school, invoices, webhooks, deliveries missing or of the wrong type); ${ends}`,
    });
    const whole = new Memory<SandboxDocument>();
    await (await started(whole)).stop();
    const good = (await whole.read())!;
    expect(await saved({ ...good, school: { ...good.school, students: null } })).toMatchObject({ message: expect.stringContaining('(school.students missing or of the wrong type)') as unknown });
    expect(await saved({ ...good, webhooks: 'zzz' })).toMatchObject({ message: expect.stringContaining('(webhooks missing or of the wrong type)') as unknown });
  });
});
