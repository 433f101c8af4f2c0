import { describe, expect, it } from 'vitest';
import { LeaseTable } from './leases.js';

describe('LeaseTable by seq', () => {
  it('holds a delivery claimed with its seq until the lease ends, runs out or is dropped', () => {
    const leases = new LeaseTable();
    const lease = leases.take('files:a', 'r1', 100, { seq: 7 });
    expect(leases.heldSeq(7, 50)).toBe(true);
    expect(leases.heldSeq(7, 100)).toBe(false); // past its time
    expect(leases.heldSeq(8, 50)).toBe(false);
    expect(leases.end('files:a', lease.fence, 'r1')).toBe(lease);
    expect(leases.heldSeq(7, 50)).toBe(false);

    leases.take('files:b', 'r1', 100, { seq: 9 });
    leases.drop('files:b');
    expect(leases.heldSeq(9, 50)).toBe(false);

    leases.take('files:c', 'r2', 100, { seq: 10 });
    expect(leases.reclaim(50, (owner) => owner !== 'r2')).toBe(1);
    expect(leases.heldSeq(10, 50)).toBe(false);
  });

  it('takes back what a rolled-back transaction did to the leases by seq', () => {
    const leases = new LeaseTable();
    const kept = leases.take('files:a', 'r1', 100, { seq: 1 });
    leases.begin();
    leases.end('files:a', kept.fence, 'r1');
    leases.take('files:b', 'r1', 100, { seq: 2 });
    leases.rollbackTo();
    leases.commit();
    expect(leases.heldSeq(1, 50)).toBe(true);
    expect(leases.heldSeq(2, 50)).toBe(false);
    expect(leases.held('files:b', 50)).toBe(false);
  });

  it('moves a delivery to its new lease when it is claimed again', () => {
    const leases = new LeaseTable();
    leases.take('files:a', 'r1', 100, { seq: 3 });
    const again = leases.take('files:a', 'r1', 300, { seq: 3 });
    expect(leases.heldSeq(3, 200)).toBe(true);
    leases.end('files:a', again.fence, 'r1');
    expect(leases.heldSeq(3, 50)).toBe(false);
  });
});
