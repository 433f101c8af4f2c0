import { describe, expect, it } from 'vitest';
import { createHealth } from './health.js';

describe('store health', () => {
  it('keeps the reason of the first failure and its time, says a later one, and heals on a success', () => {
    const health = createHealth();
    const seen: unknown[] = [];
    health.on((state) => seen.push(state));
    health.failed('SQLITE_FULL: database or disk is full', 1000);
    health.failed('SQLITE_FULL: database or disk is full', 2000);
    health.failed('SQLITE_IOERR: disk I/O error', 3000);
    expect(health.current()).toEqual({ ok: false, reason: 'SQLITE_IOERR: disk I/O error', since: 1000 });
    health.succeeded();
    expect(health.current()).toEqual({ ok: true });
    expect(seen).toHaveLength(3);
  });

  it('does not let a reason that tells less replace one that tells more during one outage', () => {
    const rank = (reason: string) => (reason.includes('full') ? 1 : 0);
    const health = createHealth({ rank });
    health.failed('disk I/O error', 1000);
    health.failed('the disk is full', 2000);
    health.failed('disk I/O error', 3000);
    expect(health.current()).toEqual({ ok: false, reason: 'the disk is full', since: 1000 });
    // A new outage starts from nothing.
    health.succeeded();
    health.failed('disk I/O error', 4000);
    expect(health.current()).toEqual({ ok: false, reason: 'disk I/O error', since: 4000 });
  });
});
