import { afterEach, beforeEach, expect } from 'vitest';
import { createSandbox, type Sandbox } from '../../sandbox/index.js';
import { testClock, type TestClock } from './clock.js';
import { SPEC_FIELDS } from './sandbox.js';

/**
 * The sandbox's API v2 over real HTTP, shape by shape against the tables of docs/upstream.md (SPEC_FIELDS is
 * written from the document) and the quirks it lists. `useSandbox()` gives each test a started sandbox
 * of STUDENTS students, stopped after it.
 */
export const DATE_TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;
export const STUDENTS = 40;

/** The sandbox of the running test, and the clock it runs on; new for each test. */
export let sandbox: Sandbox;
export let clock: TestClock;
/** The bearer `call` sends unless told otherwise: a token the sandbox issued before the test. */
let token: string;

export type Json = Record<string, any>;

export interface CallInit {
  body?: RequestInit['body'];
  /** The bearer token to send; null sends none. */
  token?: string | null;
  headers?: Record<string, string>;
}

export async function call(method: string, path: string, init: CallInit = {}) {
  const headers: Record<string, string> = { ...init.headers };
  const bearer = init.token === undefined ? token : init.token;
  if (bearer !== null) headers.authorization = `Bearer ${bearer}`;
  const response = await fetch(`${sandbox.url}${path}`, { method, headers, ...(init.body === undefined ? {} : { body: init.body }) });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, json: text ? (JSON.parse(text) as Json) : undefined };
}

/** The token `call` sends by default in the running test. */
export const defaultToken = (): string => token;

export function form(fields: Record<string, string>): FormData {
  const data = new FormData();
  for (const [key, value] of Object.entries(fields)) data.set(key, value);
  return data;
}

export function expectUser(user: Json, role: string | string[], flags: 'int' | 'string'): void {
  expect(Object.keys(user)).toEqual(expect.arrayContaining([...SPEC_FIELDS.user]));
  expect(typeof user.id).toBe('number');
  expect(typeof user.login).toBe('string');
  expect(user.login.length).toBeGreaterThan(0);
  expect([role].flat()).toContain(user.systemRole);
  for (const key of ['name', 'firstName', 'lastName', 'fullname']) expect(user[key] === null || typeof user[key] === 'string').toBe(true);
  expect(flags === 'int' ? [0, 1] : ['0', '1']).toContain(user.isArchived);
  expect(user.photo).toBeNull();
  expect(user.language).toMatch(/^[a-z]{2}_[A-Z]{2}$/);
  expect([0, 1, null]).toContain(user.tosAccepted);
  expect(user.type === null || Number.isInteger(user.type)).toBe(true);
  if (user.type === 0) expect(user.typeName).toBe('normal');
  if (user.createdAt !== null) expect(user.createdAt).toMatch(DATE_TIME);
  expect(user.updatedAt).toMatch(DATE_TIME);
  expectAdditionalData(user.additionalData);
}

function expectAdditionalData(data: Json): void {
  expect(Object.keys(data)).toEqual([...SPEC_FIELDS.additionalData]);
  for (const key of SPEC_FIELDS.alwaysNull) expect(data[key]).toBeNull();
  expect(data.id === null || Number.isInteger(data.id)).toBe(true);
  for (const key of ['phone', 'mobile', 'email', 'skype', 'street', 'zipCode', 'city']) {
    expect(data[key] === null || typeof data[key] === 'string').toBe(true);
  }
}

export function expectAllNull(data: Json): void {
  expect(Object.keys(data)).toEqual([...SPEC_FIELDS.additionalData]);
  for (const key of SPEC_FIELDS.additionalData) expect(data[key], key).toBeNull();
}

export function expectAscending(items: Json[]): void {
  for (let i = 1; i < items.length; i++) expect(items[i]!.id).toBeGreaterThan(items[i - 1]!.id);
}

/**
 * Registers the sandbox's hooks in the calling test file: call it once, at the file's top, before
 * hooks of its own that use the sandbox (test/support-hooks.test.ts says why not on import).
 */
export function useSandbox(): void {
  beforeEach(async () => {
    clock = testClock(Date.UTC(2026, 10, 22, 9, 0, 0));
    sandbox = createSandbox({ students: STUDENTS, seed: 7, clock, staticToken: 'static-token' });
    await sandbox.start();
    token = sandbox.control.issueToken().access_token;
  });
  afterEach(async () => {
    await sandbox.stop();
  });
}
