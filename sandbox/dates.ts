/**
 * Date-times in the upstream's format, `YYYY-MM-DD HH:MM:SS` (docs/upstream.md). The real service is Polish,
 * so live timestamps are wall-clock time in Europe/Warsaw; seeded ones are synthetic and formatted
 * directly (fast enough for 300,000 records).
 */
const pad = (n: number): string => (n < 10 ? `0${n}` : String(n));

export function formatUtcDateTime(ms: number): string {
  const d = new Date(ms);
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

export function formatDateTime(ms: number, timeZone = 'Europe/Warsaw'): string {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-GB', {
      timeZone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit',
      hour: '2-digit', minute: '2-digit', second: '2-digit',
    });
    formatters.set(timeZone, formatter);
  }
  const parts: Record<string, string> = {};
  for (const part of formatter.formatToParts(new Date(ms))) parts[part.type] = part.value;
  return `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute}:${parts.second}`;
}

export const DATE_TIME_PATTERN = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;
