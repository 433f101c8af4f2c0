import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { Command } from 'commander';
import { afterEach, describe, expect, it } from 'vitest';
import { registerSandboxCommand } from '../src/cli/commands/sandbox.js';
import { CONTROL_ENDPOINTS } from '../sandbox/control-endpoints.js';

/** `schoolbridge sandbox`: its --help tells an integrator everything, and it runs until SIGTERM. */
function helpText(): string {
  const program = new Command('schoolbridge').exitOverride();
  let out = '';
  program.configureOutput({ writeOut: (text) => (out += text), writeErr: (text) => (out += text) });
  registerSandboxCommand(program);
  expect(() => program.parse(['node', 'schoolbridge', 'sandbox', '--help'])).toThrow();
  return out;
}

describe('schoolbridge sandbox --help', () => {
  const help = helpText();

  it.each([
    '--client-id', '--client-secret', 'SANDBOX_CLIENT_ID', 'SANDBOX_CLIENT_SECRET', 'sandbox-client', 'sandbox-secret',
    '--retry-time-scale', '--students', '--port', '--activity', '--activity-interval', '--seed', 'Webhook-Signature',
  ])('mentions %s', (text) => {
    expect(help).toContain(text);
  });

  it('documents every control endpoint with its method and body', () => {
    for (const endpoint of CONTROL_ENDPOINTS) {
      expect(help).toMatch(new RegExp(`${endpoint.method}\\s+${endpoint.path.replace(/[/:]/g, '\\$&')}\\n`));
      if (endpoint.body) expect(help).toContain(endpoint.body);
    }
  });
});

describe('schoolbridge sandbox (process)', () => {
  let child: ChildProcess | undefined;
  afterEach(() => {
    if (child && child.exitCode === null) child.kill('SIGKILL');
  });

  it('serves the API until SIGTERM, then exits 0', async () => {
    const script = [
      "import { Command } from 'commander';",
      "import { registerSandboxCommand } from './src/cli/commands/sandbox.ts';",
      'const program = new Command(); registerSandboxCommand(program);',
      // With -e there is no script path in argv: everything after node is the user's.
      "await program.parseAsync(process.argv.slice(1), { from: 'user' });",
    ].join('\n');
    child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script, 'sandbox', '--port', '0', '--students', '3', '--static-token', 'cli-token'], {
      cwd: process.cwd(),
      env: { ...process.env, SANDBOX_CLIENT_SECRET: 'from-env' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const url = await new Promise<string>((resolve, reject) => {
      child!.stdout!.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        const match = /listening on (http:\/\/\S+)/.exec(stdout);
        if (match?.[1]) resolve(match[1]);
      });
      child!.once('exit', (code) => reject(new Error(`exited ${code} before listening: ${stdout} ${stderr}`)));
    });
    const students = await fetch(`${url}/api/v2/students`, { headers: { authorization: 'Bearer cli-token' } });
    expect(((await students.json()) as { data: { students: unknown[] } }).data.students).toHaveLength(3);
    const basic = `Basic ${Buffer.from('sandbox-client:from-env').toString('base64')}`;
    const authorized = await fetch(`${url}/api/v2/authorize`, { method: 'POST', headers: { authorization: basic }, body: new URLSearchParams({ grant_type: 'client_credentials' }) });
    expect(authorized.status).toBe(200);
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    const [code] = await exited;
    expect(code).toBe(0);
  });
});
