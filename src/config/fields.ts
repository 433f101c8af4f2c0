import { z } from 'zod';

/**
 * Field builders shared by every config schema. Values that came through `${NAME}` expansion are
 * strings, so numbers and booleans also accept their string spelling; an empty string means "not set"
 * for optional secrets (README "Configuration" uses `${VAR:-}`).
 */
const NUMERIC = /^\s*-?\d+(\.\d+)?\s*$/;

export interface Bounds {
  min?: number;
  max?: number;
  /** Exclusive lower bound. */
  gt?: number;
}

function bounded(schema: z.ZodNumber, bounds: Bounds): z.ZodNumber {
  let out = schema;
  if (bounds.min !== undefined) out = out.min(bounds.min);
  if (bounds.max !== undefined) out = out.max(bounds.max);
  if (bounds.gt !== undefined) out = out.gt(bounds.gt);
  return out;
}

const fromString = (v: unknown) => (typeof v === 'string' && NUMERIC.test(v) ? Number(v) : v);

export const num = (bounds: Bounds = {}) => z.preprocess(fromString, bounded(z.number(), bounds));

export const int = (bounds: Bounds = {}) => z.preprocess(fromString, bounded(z.number().int(), bounds));

/** The longest a Node.js timer waits: a longer one fires after 1 ms. */
export const TIMER_MAX_MS = 2 ** 31 - 1;

/** Milliseconds a timer waits: a timeout, an interval. */
export const millis = (min = 1) =>
  z.preprocess(fromString, z.number().int().min(min).max(TIMER_MAX_MS, { message: `at most ${TIMER_MAX_MS} ms (about 24 days): a longer timer would fire at once` }));

export const bool = () =>
  z.preprocess((v) => (v === 'true' ? true : v === 'false' ? false : v), z.boolean());

/** An optional string where "" (an unset `${VAR:-}`) counts as absent. */
export const optionalString = () =>
  z.preprocess((v) => (v === '' || v === null ? undefined : v), z.string().optional());

export const httpUrl = () =>
  z.string().refine((v) => {
    try {
      const url = new URL(v);
      return url.protocol === 'http:' || url.protocol === 'https:';
    } catch {
      return false;
    }
  }, 'must be an http(s) URL');

/** An IANA timezone name that this Node.js knows (e.g. Europe/Warsaw). */
export const timezone = () =>
  z.string().refine((v) => {
    try {
      new Intl.DateTimeFormat('en', { timeZone: v });
      return true;
    } catch {
      return false;
    }
  }, 'not a known IANA timezone (e.g. Europe/Warsaw)');
