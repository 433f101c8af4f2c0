import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signatureHeader } from '../../src/signature/index.js';

type IsGenuine = (secret: string, header: string, rawBody: Buffer, toleranceSeconds?: number, nowSeconds?: number) => boolean;

/** The README's receiver snippet, run as written: documentation that cannot drift from the signer. */
describe('README: the ten-line receiver verification', () => {
  let dir: string;
  let isGenuine: IsGenuine;
  beforeAll(async () => {
    const readme = await readFile(new URL('./README.md', import.meta.url), 'utf8');
    const snippet = /```js\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(snippet).toBeDefined();
    expect(snippet!.trim().split('\n').length).toBeLessThanOrEqual(11);
    dir = await mkdtemp(join(tmpdir(), 'readme-'));
    await writeFile(join(dir, 'verify.mjs'), snippet!);
    ({ isGenuine } = (await import(pathToFileURL(join(dir, 'verify.mjs')).href)) as { isGenuine: IsGenuine });
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const SECRET = 'books-secret';
  const BODY = Buffer.from('{"schemaVersion":1,"invoice":{"place":"Łódź, \\"Rynek\\""}}');
  const NOW = 1_795_259_702;

  it.each([
    ['our signature', () => isGenuine(SECRET, signatureHeader(SECRET, BODY, NOW), BODY, 300, NOW), true],
    ['another secret', () => isGenuine('other', signatureHeader(SECRET, BODY, NOW), BODY, 300, NOW), false],
    ['a changed body', () => isGenuine(SECRET, signatureHeader(SECRET, BODY, NOW), Buffer.concat([BODY, Buffer.from(' ')]), 300, NOW), false],
    ['an old timestamp', () => isGenuine(SECRET, signatureHeader(SECRET, BODY, NOW - 301), BODY, 300, NOW), false],
    ['a header that is not JSON', () => isGenuine(SECRET, 'garbage', BODY, 300, NOW), false],
    ['a JSON null header', () => isGenuine(SECRET, 'null', BODY, 300, NOW), false],
    ['a short signature', () => isGenuine(SECRET, JSON.stringify({ timestamp: NOW, signature: 'ab' }), BODY, 300, NOW), false],
  ])('%s → %s', (_name, run, expected) => {
    expect(run()).toBe(expected);
  });
});
