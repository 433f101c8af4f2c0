/**
 * Wall-clock time in a zone (the accounting feed's dates, the status page's "today").
 *
 * The upstream writes date-times as `YYYY-MM-DD HH:MM:SS` with no zone: wall-clock time of the school
 * (docs/upstream.md "General conventions"; the service is Polish, so Europe/Warsaw by default). These pure
 * helpers turn such a wall-clock time into an instant and into ISO 8601 with the zone's offset.
 *
 * Wall-clock times that do not map to exactly one instant are resolved like Temporal's
 * `disambiguation: 'compatible'`: a time repeated when clocks go back is the earlier instant; a time
 * skipped when clocks go forward is shifted forward by the gap (02:30 → 03:30 in Warsaw).
 */
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/;
const DAY_MS = 86_400_000;

export interface WallTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

/** Parses `YYYY-MM-DD HH:MM:SS`; null for anything else, including impossible dates like `0000-00-00 00:00:00`. */
export function parseWallTime(value: unknown): WallTime | null {
  if (typeof value !== 'string') return null;
  const match = DATE_TIME.exec(value);
  if (!match) return null;
  const [year, month, day, hour, minute, second] = match.slice(1).map(Number) as [number, number, number, number, number, number];
  if (year < 1 || month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return null;
  // Date.UTC rolls Feb 30 over into March: a round trip tells a real calendar date from a rolled one.
  const probe = new Date(wallAsUtc({ year, month, day, hour, minute, second }));
  if (probe.getUTCMonth() + 1 !== month || probe.getUTCDate() !== day) return null;
  return { year, month, day, hour, minute, second };
}

/** The wall time read as if it were UTC (ms); years below 100 are not shifted to 19xx. */
function wallAsUtc(w: WallTime): number {
  const date = new Date(Date.UTC(2000, w.month - 1, w.day, w.hour, w.minute, w.second));
  date.setUTCFullYear(w.year);
  return date.getTime();
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let found = formatters.get(timeZone);
  if (!found) {
    found = new Intl.DateTimeFormat('en-US', {
      timeZone, hourCycle: 'h23', era: 'short', year: 'numeric', month: 'numeric', day: 'numeric',
      hour: 'numeric', minute: 'numeric', second: 'numeric',
    });
    formatters.set(timeZone, found);
  }
  return found;
}

/** The wall-clock time in `timeZone` at instant `ms`. */
export function wallTimeAt(ms: number, timeZone: string): WallTime {
  const parts: Record<string, string> = {};
  for (const part of formatter(timeZone).formatToParts(new Date(ms))) parts[part.type] = part.value;
  const year = Number(parts.year);
  return {
    year: parts.era === 'BC' || parts.era === 'B' ? 1 - year : year,
    month: Number(parts.month), day: Number(parts.day),
    hour: Number(parts.hour), minute: Number(parts.minute), second: Number(parts.second),
  };
}

/** The zone's offset from UTC at instant `ms`, in ms (Warsaw: +3,600,000 in winter). */
export function offsetAt(ms: number, timeZone: string): number {
  const wholeSeconds = Math.floor(ms / 1000) * 1000;
  return wallAsUtc(wallTimeAt(wholeSeconds, timeZone)) - wholeSeconds;
}

/** The instant (ms) a wall-clock time in `timeZone` stands for (see the module comment for gaps and overlaps). */
export function wallTimeToInstant(wall: WallTime, timeZone: string): number {
  const local = wallAsUtc(wall);
  // Offsets a day either side cover any transition near this time (zones never change twice a day).
  const before = offsetAt(local - DAY_MS, timeZone);
  const after = offsetAt(local + DAY_MS, timeZone);
  const candidates = [local - before, local - after]
    .filter((instant) => instant + offsetAt(instant, timeZone) === local)
    .sort((a, b) => a - b);
  return candidates[0] ?? local - before;
}

const pad = (n: number, width = 2): string => String(Math.abs(n)).padStart(width, '0');

/** ISO 8601 with the zone's offset and whole seconds, e.g. `2026-11-22T11:00:00+01:00`. */
export function formatIsoInZone(ms: number, timeZone: string): string {
  const wall = wallTimeAt(ms, timeZone);
  const offsetMinutes = Math.round(offsetAt(ms, timeZone) / 60_000);
  const sign = offsetMinutes < 0 ? '-' : '+';
  const year = wall.year < 0 ? `-${pad(wall.year, 6)}` : pad(wall.year, 4);
  return `${year}-${pad(wall.month)}-${pad(wall.day)}T${pad(wall.hour)}:${pad(wall.minute)}:${pad(wall.second)}` +
    `${sign}${pad(Math.floor(Math.abs(offsetMinutes) / 60))}:${pad(Math.abs(offsetMinutes) % 60)}`;
}

/** An upstream date-time as ISO 8601 with the school's offset; null when it is not a valid date-time. */
export function upstreamDateTimeToIso(value: unknown, timeZone: string): string | null {
  const wall = parseWallTime(value);
  return wall ? formatIsoInZone(wallTimeToInstant(wall, timeZone), timeZone) : null;
}

/** When the local day of instant `ms` began in `timeZone`: its 00:00, or the first instant after it when a move of the clocks skipped it. */
export function dayStartInZone(ms: number, timeZone: string): number {
  return wallTimeToInstant({ ...wallTimeAt(ms, timeZone), hour: 0, minute: 0, second: 0 }, timeZone);
}

/** `YYYY-MM-DD` of instant `ms` in `timeZone` (the ledger file of a record). */
export function dateInZone(ms: number, timeZone: string): string {
  const wall = wallTimeAt(ms, timeZone);
  return `${pad(wall.year, 4)}-${pad(wall.month)}-${pad(wall.day)}`;
}
