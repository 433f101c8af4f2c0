import { describe, expect, it } from 'vitest';
import { terminalLine } from './log-terminal.js';

describe('a log line on a terminal', () => {
  it('is the component and the message for information, whatever fields it has', () => {
    expect(terminalLine({ level: 30, time: 1, pid: 7, component: 'poll', msg: 'poll cycle done in 1.0 s', streams: { students: { fetched: 40 } } })).toBe('poll: poll cycle done in 1.0 s');
    expect(terminalLine({ level: 30, msg: 'stopping', signal: 'SIGTERM' })).toBe('stopping');
  });

  it('says why for warnings and errors: the error, then the other fields as compact JSON', () => {
    expect(terminalLine({ level: 40, component: 'outbox', msg: 'delivery dead', id: 'files:x', error: 'file.write_failed: EACCES' })).toBe('outbox: delivery dead (file.write_failed: EACCES) {"id":"files:x"}');
    expect(terminalLine({ level: 50, msg: 'start failed', err: { type: 'Error', message: 'listen EADDRINUSE', code: 'EADDRINUSE' } })).toBe('start failed (EADDRINUSE: listen EADDRINUSE)');
    expect(terminalLine({ level: 40, msg: 'long', detail: 'x'.repeat(1000) })).toMatch(/^long \{"detail":"x+…$/);
  });
});
