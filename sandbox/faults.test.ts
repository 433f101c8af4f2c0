import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createFaultBook, routeMatches } from './faults.js';

describe('routeMatches', () => {
  it.each([
    [undefined, 'GET', '/api/v2/students', true],
    ['GET /api/v2/students', 'GET', '/api/v2/students', true],
    ['get /api/v2/students', 'GET', '/api/v2/students', true],
    ['POST /api/v2/students', 'GET', '/api/v2/students', false],
    ['/api/v2/students', 'DELETE', '/api/v2/students', true],
    ['/api/v2/users', 'GET', '/api/v2/students', false],
  ])('%s vs %s %s → %s', (route, method, path, expected) => {
    expect(routeMatches(route, method, path)).toBe(expected);
  });
});

describe('FaultBook', () => {
  it('applies a fault to exactly the next N matching requests', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 20 }), fc.integer({ min: 0, max: 40 }), (times, requests) => {
        const book = createFaultBook();
        book.add({ kind: 'status', status: 503, route: 'GET /api/v2/students', times });
        let hits = 0;
        for (let i = 0; i < requests; i++) {
          expect(book.take('GET', '/api/v2/users').fault).toBeUndefined();
          if (book.take('GET', '/api/v2/students').fault) hits++;
        }
        expect(hits).toBe(Math.min(times, requests));
      }),
    );
  });

  it('combines one latency with one other fault, in injection order', () => {
    const book = createFaultBook();
    book.add({ kind: 'latency', ms: 50, times: 'always' });
    book.add({ kind: 'reset' });
    book.add({ kind: 'emptyList' });
    expect(book.take('GET', '/api/v2/students')).toEqual({ latencyMs: 50, fault: { kind: 'reset' } });
    expect(book.take('GET', '/api/v2/students')).toEqual({ latencyMs: 50, fault: { kind: 'emptyList' } });
    expect(book.take('GET', '/api/v2/students')).toEqual({ latencyMs: 50, fault: undefined });
    book.clear();
    expect(book.take('GET', '/api/v2/students')).toEqual({ latencyMs: 0, fault: undefined });
  });

  it('never faults the control API and rejects a zero count', () => {
    const book = createFaultBook();
    book.add({ kind: 'reset', times: 'always' });
    expect(book.take('GET', '/_sandbox/faults').fault).toBeUndefined();
    expect(() => book.add({ kind: 'reset', times: 0 })).toThrow(RangeError);
  });
});
