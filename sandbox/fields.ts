import type { ErrorAnswer } from './http-errors.js';
import { invalidParameter, missingParameter } from './http-errors.js';

/**
 * Reading request parameters the way the service does: form fields (multipart or urlencoded; JSON is
 * accepted too, leniently) and query parameters, with 400 answers that name the parameter.
 */
export type Fields = Record<string, string>;

export function fieldsOf(body: unknown): Fields {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return {};
  const fields: Fields = {};
  for (const [key, value] of Object.entries(body as Record<string, unknown>)) {
    if (value === null || value === undefined) continue;
    fields[key] = typeof value === 'object' ? JSON.stringify(value) : String(value);
  }
  return fields;
}

export type Read<T> = { ok: true; value: T } | { ok: false; answer: ErrorAnswer };

export function requiredId(source: Fields, name = 'id'): Read<number> {
  const text = source[name];
  if (text === undefined || text === '') return { ok: false, answer: missingParameter(name) };
  if (!/^\d{1,15}$/.test(text.trim())) return { ok: false, answer: invalidParameter(name) };
  return { ok: true, value: Number(text.trim()) };
}

export function requiredText(source: Fields, name: string): Read<string> {
  const text = source[name];
  if (text === undefined || text.trim() === '') return { ok: false, answer: missingParameter(name) };
  return { ok: true, value: text };
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/u;

/** An optional e-mail: absent is fine, present must look like an address. */
export function optionalEmail(source: Fields, name = 'email'): Read<string | undefined> {
  const text = source[name];
  if (text === undefined) return { ok: true, value: undefined };
  if (!EMAIL.test(text.trim())) return { ok: false, answer: invalidParameter(name) };
  return { ok: true, value: text.trim() };
}

/** An optional text that, when present, must not be blank. */
export function optionalText(source: Fields, name: string): Read<string | undefined> {
  const text = source[name];
  if (text === undefined) return { ok: true, value: undefined };
  if (text.trim() === '') return { ok: false, answer: invalidParameter(name) };
  return { ok: true, value: text };
}

/** Runs readers in order and returns the first failure, or all values. */
export function readAll<T extends Record<string, Read<unknown>>>(reads: T): Read<{ [K in keyof T]: T[K] extends Read<infer V> ? V : never }> {
  const values: Record<string, unknown> = {};
  for (const [key, read] of Object.entries(reads)) {
    if (!read.ok) return read;
    values[key] = read.value;
  }
  return { ok: true, value: values as { [K in keyof T]: T[K] extends Read<infer V> ? V : never } };
}
