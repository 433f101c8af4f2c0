/**
 * How the console words things for people who are not engineers, and shows times: always local, in
 * the configured zone, as `YYYY-MM-DD HH:MM`. Pure.
 */
const formats = new Map<string, Intl.DateTimeFormat>();
const format = (timeZone: string, style: 'minute' | 'day' | 'hour') => {
  const key = `${timeZone}\u0000${style}`;
  let f = formats.get(key);
  if (!f) {
    const parts: Intl.DateTimeFormatOptions = style === 'day'
      ? { year: 'numeric', month: '2-digit', day: '2-digit' }
      : style === 'hour' ? { hour: '2-digit', hourCycle: 'h23' } : { year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' };
    f = new Intl.DateTimeFormat('sv-SE', { timeZone, ...parts });
    formats.set(key, f);
  }
  return f;
};

/** Epoch ms as local `YYYY-MM-DD HH:MM:SS`; a dash when unknown. */
export const localTime = (ms: number | undefined, timeZone: string): string => (ms === undefined || !Number.isFinite(ms) ? '—' : format(timeZone, 'minute').format(ms));
/** The local calendar day of an instant, `YYYY-MM-DD`. */
export const localDay = (ms: number, timeZone: string): string => format(timeZone, 'day').format(ms);
/** The local hour of an instant, `HH`. */
export const localHour = (ms: number, timeZone: string): string => format(timeZone, 'hour').format(ms);

/** A duration in plain units. */
export function duration(ms: number | undefined): string {
  if (ms === undefined) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${(ms / 60_000).toFixed(1)} min`;
}

/** Where a record stands with one connector. */
export type TrailState = 'done' | 'queued' | 'in-flight' | 'retrying' | 'dead' | 'waiting' | 'unknown';

export const STATE_WORDS: Record<TrailState, string> = {
  done: 'delivered',
  queued: 'queued, not tried yet',
  'in-flight': 'being delivered now',
  retrying: 'waiting to retry',
  dead: 'failed for good — needs you',
  waiting: 'waiting for an earlier change of the same record',
  unknown: 'no delivery on record (older than the history kept)',
};

export const OUTCOME_WORDS = { done: 'delivered', retry: 'failed, will retry', dead: 'failed for good' } as const;
