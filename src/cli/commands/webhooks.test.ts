import { describe, expect, it } from 'vitest';
import { describeHook } from './webhooks.js';

describe('webhooks list', () => {
  it('shows the upstream\'s control characters as escapes: a registration cannot draw a row of its own', () => {
    const line = describeHook({ id: 7, event: 'invoice.created\r\n   999  ours     invoice.updated', callbackUrl: 'http://x/\u001b[2Jhook' }, 'http://bridge/webhooks/v2');
    expect(line).toBe('     7  foreign  invoice.created\\u000d\\u000a   999  ours     invoice.updated  http://x/\\u001b[2Jhook');
    // eslint-disable-next-line no-control-regex
    expect(line).not.toMatch(/[\u0000-\u001f]/);
  });
});
