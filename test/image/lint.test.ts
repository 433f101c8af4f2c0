import { validate } from 'dockerfile-utils';
import { describe, expect, it } from 'vitest';
import { daemonNodeFlags } from '../support/daemon-flags.js';
import { readImageSpec, type ImageSpec } from './dockerfile.js';

/**
 * The Dockerfile linted without Docker: dockerfile-utils (the parser and validator behind the VS Code
 * Docker extension) for what Docker would refuse or warn about, and the rules of hadolint that apply
 * to this file (Debian has no hadolint package), each named by its hadolint code.
 */
const spec = readImageSpec();

/** Lines a `# hadolint ignore=DLxxxx` comment right above exempts, as hadolint does. */
function ignored(text: string, rule: string, instructionLine: number): boolean {
  const lines = text.split('\n');
  for (let i = instructionLine - 1; i >= 0 && lines[i]!.startsWith('#'); i--) {
    if (new RegExp(`hadolint ignore=.*\\b${rule}\\b`).test(lines[i]!)) return true;
  }
  return false;
}

type Rule = [code: string, what: string, check: (spec: ImageSpec) => string[]];

const runs = (spec: ImageSpec) =>
  spec.stages.flatMap((stage) => stage.instructions.filter((i) => i.getKeyword() === 'RUN').map((i) => ({ line: i.getRange().start.line, command: i.getArguments().map((a) => a.getValue()).join(' ') })));

const RULES: Rule[] = [
  ['DL3006', 'every base image has an explicit tag', (s) => s.stages.filter((stage) => !stage.tag).map((stage) => stage.image)],
  ['DL3007', 'no base image is :latest', (s) => s.stages.filter((stage) => stage.tag === 'latest').map((stage) => stage.image)],
  ['DL3002', 'the image does not run as root', (s) => (['root', '0'].includes(s.user) ? [s.user] : [])],
  ['DL3025', 'ENTRYPOINT, CMD and HEALTHCHECK are in JSON form', (s) => [s.entrypoint, s.cmd, s.healthcheck].filter((argv) => argv.length === 0).map(() => 'not JSON')],
  ['DL3020', 'files are copied with COPY, never ADD', (s) => s.stages.flatMap((stage) => stage.instructions.filter((i) => i.getKeyword() === 'ADD').map((i) => i.getArgumentsContent() ?? ''))],
  ['DL3000', 'WORKDIR is absolute', (s) => s.stages.flatMap((stage) => stage.instructions.filter((i) => i.getKeyword() === 'WORKDIR').map((i) => i.getArgumentsContent() ?? '')).filter((dir) => !dir.startsWith('/'))],
  ['DL3003', 'no cd in RUN (use WORKDIR)', (s) => runs(s).filter((r) => /(^|&&|;)\s*cd\s/.test(r.command)).map((r) => r.command)],
  ['DL3014', 'apt-get install says -y', (s) => runs(s).filter((r) => /apt-get install/.test(r.command) && !/apt-get install[^&;]*\s-y\b/.test(r.command)).map((r) => r.command)],
  ['DL3015', 'apt-get install says --no-install-recommends', (s) => runs(s).filter((r) => /apt-get install/.test(r.command) && !/--no-install-recommends/.test(r.command)).map((r) => r.command)],
  ['DL3009', 'apt lists are removed in the RUN that made them', (s) => runs(s).filter((r) => /apt-get update/.test(r.command) && !/rm -rf \/var\/lib\/apt\/lists/.test(r.command)).map((r) => r.command)],
  ['DL3016-like', 'npm installs what the lock file says (npm ci)', (s) => runs(s).filter((r) => /\bnpm (install|i)\b/.test(r.command)).map((r) => r.command)],
  ['DL4006', 'no pipe in a RUN without pipefail', (s) => runs(s).filter((r) => / \| /.test(r.command) && !/pipefail/.test(r.command)).map((r) => r.command)],
  ['DL3008', 'apt packages are pinned, or the exemption is written down', (s) => runs(s).filter((r) => /apt-get install/.test(r.command) && !ignored(s.text, 'DL3008', r.line)).map((r) => r.command)],
];

describe('the Dockerfile', () => {
  it('has nothing Docker would refuse or warn about', () => {
    expect(validate(spec.text).map((d) => `line ${d.range.start.line + 1}: ${d.message}`)).toEqual([]);
  });

  it.each(RULES)('%s: %s', (_code, _what, check) => {
    expect(check(spec)).toEqual([]);
  });

  it('runs its daemon under an init (tini) as PID 1, with the volume, port and healthcheck it documents', () => {
    expect(spec.entrypoint.slice(0, 2)).toEqual(['/usr/bin/tini', '--']);
    // Node.js as `npm start` runs it (package.json), which is what the benches measure.
    expect(spec.entrypoint.slice(2)).toEqual(['node', ...daemonNodeFlags(), '/app/bin/schoolbridge.js']);
    expect(spec.cmd).toEqual(['start']);
    expect(spec.volumes).toEqual(['/data']);
    expect(spec.exposed).toEqual([8080]);
    expect(spec.healthcheck).toEqual(['node', '/app/bin/healthcheck.js']);
    expect(spec.stages.every((stage) => stage.image === 'node' && /^24-/.test(stage.tag ?? ''))).toBe(true);
  });
});
