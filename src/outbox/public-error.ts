/**
 * What public endpoints (/status.json, the status page) show of a delivery's `lastError`: our error
 * code and the receiver's HTTP status, nothing else. The full text can hold the start of a
 * receiver's answer, and receivers echo what they were sent (an invoice's buyer, e-mail, PESEL), so it
 * stays behind the admin API and the CLI (`deliveries list`).
 *
 * `lastError` is written as `<code>: <message>` (describeError), with `expired after N attempts; last
 * error: ` before it when the retry window ran out, and a receiver's status as `answered <status>`
 * (classifyResponse, the Sheets connector). Pure.
 */
export function publicError(lastError: string): string {
  const expired = /^expired after (\d+) attempts?(?: \([^;]*\))?; last error: /.exec(lastError);
  const rest = expired ? lastError.slice(expired[0].length) : lastError;
  const code = /^([A-Za-z][A-Za-z0-9_.-]{0,63}): /.exec(rest)?.[1];
  const status = code ? /\banswered (\d{3})\b/.exec(rest)?.[1] : undefined;
  const what = code ? `${code}${status ? ` (HTTP ${status})` : ''}` : rest === '' ? '' : 'error';
  return expired ? `${what}; expired after ${expired[1]} ${expired[1] === '1' ? 'attempt' : 'attempts'}` : what;
}

/**
 * The console's group of a dead delivery's error: publicError without the number of attempts, so
 * that deliveries failing the same way are one group however often each was tried.
 */
export function errorGroup(lastError: string): string {
  return publicError(lastError).replace(/; expired after \d+ attempts?$/, '; gave up after retrying');
}
