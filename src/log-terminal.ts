/**
 * How a log line reads on a terminal (pino-pretty's messageFormat, with the objects hidden): the
 * component and the message, which say what happened; an error's message and code; and for warnings
 * and errors the other fields on the same line, as compact JSON (they say which and why). Information
 * lines are one line each: a poll cycle's message carries its counts, not thirty lines of JSON.
 * With --verbose the logger shows every field instead (log.ts).
 */
const HIDDEN = new Set(['msg', 'level', 'time', 'pid', 'hostname', 'component', 'err', 'error']);
const WARN = 40;
const DETAIL_LIMIT = 400;

function problemOf(value: unknown): string | undefined {
  if (!value || typeof value !== 'object') return typeof value === 'string' ? value : undefined;
  const { message, code } = value as { message?: unknown; code?: unknown };
  const text = typeof message === 'string' ? message : JSON.stringify(value);
  return typeof code === 'string' && !text.startsWith(code) ? `${code}: ${text}` : text;
}

export function terminalLine(log: Record<string, unknown>): string {
  const component = typeof log.component === 'string' ? `${log.component}: ` : '';
  const parts = [`${component}${String(log.msg ?? '')}`];
  const problem = problemOf(log.err ?? log.error);
  if (problem) parts.push(`(${problem})`);
  if (typeof log.level === 'number' && log.level >= WARN) {
    const fields = Object.fromEntries(Object.entries(log).filter(([key]) => !HIDDEN.has(key)));
    if (Object.keys(fields).length > 0) {
      const detail = JSON.stringify(fields);
      parts.push(detail.length > DETAIL_LIMIT ? `${detail.slice(0, DETAIL_LIMIT)}…` : detail);
    }
  }
  return parts.join(' ');
}
