import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, on, server, useUpstreamStub } from './support/upstream-server.js';
import { tempDir } from './support/temp.js';

/** `webhooks delete` believes the upstream's answer only once its list agrees. */
useUpstreamStub();
const BIN = path.join(import.meta.dirname, '..', 'bin', 'schoolbridge.js');
let dir: { dir: string; cleanup(): Promise<void> };

beforeAll(async () => {
  dir = await tempDir('schoolbridge-webhooks-delete-');
});
afterAll(async () => {
  await dir.cleanup();
});

async function deleteCommand(id: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const port = (server.address() as { port: number }).port;
  const config = path.join(dir.dir, 'config.yaml');
  await writeFile(config, [`upstream: { baseUrl: "http://127.0.0.1:${port}", token: t0k3n, clientSecret: s }`, `store: { dir: ${JSON.stringify(path.join(dir.dir, 'data'))} }`].join('\n'));
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, '-c', config, 'webhooks', 'delete', id], { env: { ...process.env, NODE_NO_WARNINGS: '1' } }, (error, stdout, stderr) =>
      resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const registration = { id: 2, event: 'invoice.created', callbackUrl: 'http://h/webhooks/v2' };

describe('webhooks delete', () => {
  it('says deleted once the list agrees', async () => {
    on('DELETE', '/api/v2/webhook', json(200, { data: { webhook: { id: 2, isDeleted: true } } }));
    on('GET', '/api/v2/webhooks', json(200, { data: { webhooks: [] } }));
    expect(await deleteCommand('2')).toMatchObject({ code: 0, stdout: 'deleted registration 2\n' });
  });

  it('fails when the upstream answers "deleted" and still lists it, or answers "not deleted"', async () => {
    on('DELETE', '/api/v2/webhook', json(200, { data: { webhook: { id: 2, isDeleted: true } } }), json(200, { data: { webhook: { id: 2, isDeleted: false } } }));
    on('GET', '/api/v2/webhooks', json(200, { data: { webhooks: [registration] } }));
    expect(await deleteCommand('2')).toMatchObject({ code: 1, stdout: '', stderr: 'the upstream answered that it deleted registration 2 but still lists it\n' });
    expect(await deleteCommand('2')).toMatchObject({ code: 1, stdout: '', stderr: 'the upstream answered that registration #2 was not deleted (isDeleted: false)\n' });
  });
});
