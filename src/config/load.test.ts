import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BridgeError } from '../errors.js';
import { loadConfig, parseConfig, resolveConfigPath } from './load.js';
import { maskSecrets, secretValues } from './mask.js';

function problems(text: string, env: Record<string, string> = {}): string[] {
  try {
    parseConfig(text, 'test.yaml', env);
  } catch (error) {
    expect(error).toBeInstanceOf(BridgeError);
    expect((error as BridgeError).code).toBe('config.invalid');
    expect((error as BridgeError).message).toContain('test.yaml');
    return (error as BridgeError).context!.problems as string[];
  }
  throw new Error('expected the config to be invalid');
}

describe('parseConfig', () => {
  it('gives every default for an empty document', () => {
    const config = parseConfig('', 'empty.yaml', {});
    expect(config.upstream).toMatchObject({ baseUrl: 'sandbox', timeoutMs: 30000 });
    expect(config.server).toMatchObject({ host: '127.0.0.1', port: 8080 });
    expect(config.webhooks).toMatchObject({
      events: ['invoice.created', 'invoice.updated'],
      toleranceSeconds: 300,
      previousSecrets: [],
      bodyLimitBytes: 1048576,
      prune: true,
    });
    expect(config.poll).toMatchObject({ schedule: '*/5 * * * *', timezone: 'Europe/Warsaw', initial: 'emit', maxDeleteRatio: 0.2 });
    expect(config.export.schedule).toBe('0 2 * * *');
    expect(config.store.dir).toBe('./data');
    expect(config.delivery).toMatchObject({ maxAgeHours: 72, backoff: { baseMs: 1000, maxMs: 3600000 } });
    expect(config.connectors).toEqual([]);
  });

  it('names a misspelled key by its path and suggests the right one', () => {
    expect(problems('server:\n  prot: 8080\n')).toEqual(['server.prot: unknown key (did you mean "port"?)']);
    expect(problems('pol:\n  schedule: "* * * * *"\n')).toEqual(['pol: unknown key (did you mean "poll"?)']);
  });

  it('checks the store: postgres needs a URL, and a pool a poll cycle can stage with', () => {
    expect(problems('store:\n  driver: postgres\n')).toEqual(['store.url: required with store.driver: postgres: a postgres://user:password@host:5432/database URL']);
    // A URL of another scheme gets a message of its own, which does not repeat it (it may hold a password).
    expect(problems('store:\n  driver: postgres\n  url: mysql://app:s3cret@db/school\n')).toEqual(['store.url: must start with postgres:// or postgresql:// (postgres://user:password@host:5432/database)']);
    expect(problems('store:\n  driver: postgres\n  url: postgres://app:s3cret@db/school?sslmode=bogus\n')).toEqual(['store.url: sslmode=bogus is not one of disable, allow, prefer, require, verify-ca, verify-full, no-verify']);
    expect(problems('store:\n  driver: postgres\n  url: postgres://app:s3cret@db/school?sslmode=verify-ca\n')).toEqual(['store.url: sslmode=verify-ca checks the certificate against a CA of your own: add sslrootcert=<its file>, or use sslmode=verify-full']);
    expect(parseConfig('store:\n  driver: postgres\n  url: postgres://app:s3cret@db/school?sslmode=verify-ca&sslrootcert=/etc/ca.pem\n', 'test.yaml', {}).store.url).toContain('verify-ca');
    const [pool] = problems('store:\n  driver: postgres\n  url: postgres://u:p@db:5432/sb\n  poolSize: 2\n');
    expect(pool).toMatch(/^store\.poolSize: /);
    expect(pool).toMatch(/4/);
    expect(parseConfig('store:\n  driver: postgres\n  url: postgres://u:p@db:5432/sb\n', 'x.yaml', {}).store).toMatchObject({ driver: 'postgres', poolSize: 10 });
  });

  it('names unknown keys inside a connector', () => {
    const text = 'connectors:\n  - { name: a, type: file, streams: [students] }\n  - { name: b, type: file, streams: [users], dir: users, dri: x }\n';
    expect(problems(text)).toEqual(['connectors[1].dri: unknown key (did you mean "dir"?)']);
  });

  it('names a missing required connector option by its path', () => {
    const text = 'connectors:\n  - { name: a, type: file, streams: [students] }\n  - { name: hook, type: webhook, streams: [invoices], secret: s }\n';
    expect(problems(text)).toEqual(['connectors[1].url: required']);
  });

  it('refuses extra request headers that schoolbridge or the HTTP client set, or that no request can carry', () => {
    const text = 'connectors:\n  - { name: hook, type: webhook, streams: [students], url: "http://h/x", secret: s, headers: { X-Api-Key: k, Idempotency-Key: i, user-agent: u, Content-Length: "5", Host: h, "Bad Name": x, X-Two: "a\\nb" } }\n';
    expect(problems(text)).toEqual([
      'connectors[0].headers.Idempotency-Key: schoolbridge sets Idempotency-Key on every request itself; remove it',
      'connectors[0].headers.user-agent: schoolbridge sets user-agent on every request itself; remove it',
      'connectors[0].headers.Content-Length: the HTTP client sets Content-Length for each request; remove it',
      'connectors[0].headers.Host: the HTTP client sets Host for each request; remove it',
      'connectors[0].headers.Bad Name: not a valid header name (letters, digits and -, no spaces or colons)',
      'connectors[0].headers.X-Two: a header value cannot hold a line break',
    ]);
    expect(problems('connectors:\n  - { name: books, type: accounting, url: "http://h/x", secret: s, headers: { Webhook-Signature: x } }\n'))
      .toEqual(['connectors[0].headers.Webhook-Signature: schoolbridge sets Webhook-Signature on every request itself; remove it']);
  });

  it('names a number out of its range with the value, its variable and the bound', () => {
    expect(problems('server:\n  port: 70000\n')).toEqual(['server.port: 70000 is too big; at most 65535']);
    expect(problems('server:\n  port: ${PORT}\n', { PORT: '70000' })).toEqual(['server.port: 70000 is too big (from ${PORT}); at most 65535']);
    expect(problems('delivery:\n  concurrency: 0\n')).toEqual(['delivery.concurrency: 0 is too small; at least 1']);
  });

  it('names a value of the wrong type as written, with its variable and the usual fix, not as missing', () => {
    expect(problems('server:\n  port: "80a"\n')).toEqual(['server.port: expected a number, got the text "80a"']);
    expect(problems('server:\n  port: 80.5\n')).toEqual(['server.port: expected a whole number, got the number 80.5']);
    expect(problems('server:\n  port: ${PORT:-8080}\n', { PORT: '80a' })).toEqual(['server.port: expected a number, got the text "80a" (from ${PORT})']);
    expect(problems('upstream:\n  clientId: 0123\n  clientSecret: s\n')).toEqual(['upstream.clientId: expected text, got the number 123: quote it as written (in "…")']);
    // A secret's value is not shown: the line goes to logs.
    expect(problems('upstream:\n  clientId: c\n  clientSecret: 98765432123\nserver:\n  adminToken: 5551234567\n')).toEqual([
      'upstream.clientSecret: expected text, got a number: quote it as written (in "…")',
      'server.adminToken: expected text, got a number: quote it as written (in "…")',
    ]);
    expect(problems('webhooks:\n  events: invoice.created\n')).toEqual(['webhooks.events: expected a list, got the text "invoice.created": write it as a list, [invoice.created]']);
    expect(problems('sandbox:\n  activity: yes\n')).toEqual(['sandbox.activity: expected true or false, got the text "yes"']);
    // A switch from a variable is text: every switch takes "true" and "false" so.
    expect(parseConfig('server:\n  consolePublic: ${SB_PUBLIC:-false}\n', 'test.yaml', {}).server.consolePublic).toBe(false);
    expect(parseConfig('server:\n  consolePublic: ${SB_PUBLIC}\n', 'test.yaml', { SB_PUBLIC: 'true' }).server.consolePublic).toBe(true);
    expect(problems('connectors:\n  files:\n    type: file\n')).toEqual(['connectors: expected a list, got keys under it']);
    expect(problems('- a\n- b\n')).toEqual(['(top level): expected keys under it, got a list']);
    // A key left empty (its keys commented out, or its value forgotten) is named so.
    expect(problems('server:\n')).toEqual(['server: expected keys under it, got nothing (the key is empty: give it a value, or remove it)']);
    expect(problems('upstream:\n  baseUrl:\n')).toEqual(['upstream.baseUrl: nothing (the key is empty: give it a value, or remove it)']);
  });

  it('refuses a timer longer than Node.js can wait, which would fire at once', () => {
    const line = 'at most 2147483647 ms (about 24 days): a longer timer would fire at once';
    expect(problems('upstream:\n  timeoutMs: 3000000000\n')).toEqual([`upstream.timeoutMs: ${line}`]);
    expect(problems('sandbox:\n  activityIntervalMs: 2147483648\n')).toEqual([`sandbox.activityIntervalMs: ${line}`]);
    expect(problems('connectors:\n  - { name: hook, type: webhook, streams: [invoices], url: "http://127.0.0.1:1/x", secret: s, timeoutMs: 3000000000 }\n'))
      .toEqual([`connectors[0].timeoutMs: ${line}`]);
    expect(parseConfig('upstream:\n  timeoutMs: 2147483647\n', 'x.yaml', {}).upstream.timeoutMs).toBe(2147483647);
  });

  it('refuses an upstream token with a line break: every call would fail as if the network had', () => {
    expect(problems('upstream:\n  token: "abc\\n"\n')).toEqual(['upstream.token: a token cannot hold a line break or a NUL (a secret file that ends with a newline?): it is sent in a header']);
    expect(parseConfig('upstream:\n  token: "abc def"\n', 'x.yaml', {}).upstream.token).toBe('abc def');
  });

  it('bounds a full list at 1 GiB by default, and at no less than 1 MiB', () => {
    expect(parseConfig('', 'x.yaml', {}).upstream.maxListBytes).toBe(1024 ** 3);
    expect(parseConfig('upstream:\n  maxListBytes: 4294967296\n', 'x.yaml', {}).upstream.maxListBytes).toBe(4 * 1024 ** 3);
    expect(problems('upstream:\n  maxListBytes: 1000\n')).toEqual([expect.stringMatching(/^upstream\.maxListBytes: .*1048576/)]);
  });

  it('refuses two connectors of one type writing one directory', () => {
    const text = 'connectors:\n  - { name: a, type: file, streams: [students], dir: out/same }\n  - { name: b, type: file, streams: [users], dir: ./out/same/ }\n'
      + '  - { name: c, type: file, streams: [users], dir: out/other }\n';
    expect(problems(text)).toEqual(['connectors[1].dir: the same directory as connectors[0]: two file connectors would write the same files; give each its own']);
  });

  it('checks the listen address and the public URL as start would need them', () => {
    const host = (value: string) => problems(`server:\n  host: ${JSON.stringify(value)}\n`);
    expect(host('')).toEqual(['server.host: empty: write an address to listen on (127.0.0.1 for this machine only, 0.0.0.0 for every interface)']);
    expect(host('999.1.1.1')).toEqual(['server.host: "999.1.1.1" is not an IPv4 address (each part is 0-255)']);
    expect(host('http://127.0.0.1')).toEqual(['server.host: "http://127.0.0.1" is a URL: write the address alone (server.publicUrl takes the URL the upstream calls)']);
    expect(host('127.0.0.1:8080')).toEqual(['server.host: "127.0.0.1:8080" has a port: write it in server.port']);
    expect(host('a\nb')).toEqual(['server.host: "a\\nb" is not an IP address or host name']);
    for (const good of ['0.0.0.0', '::', '::1', 'localhost', 'bridge.example.com', 'sb_daemon']) {
      expect(parseConfig(`server:\n  host: "${good}"\n`, 'x.yaml', {}).server.host).toBe(good);
    }
    const url = (value: string) => problems(`server:\n  publicUrl: "${value}"\n`);
    expect(url('https://bridge.example.com/webhooks/v2')).toEqual(['server.publicUrl: ends in /webhooks/v2, which is added to it: write the URL before it']);
    expect(url('https://bridge.example.com?x=1')).toEqual(['server.publicUrl: has a query or fragment: /webhooks/v2 is added after its path']);
    expect(url('https://user:pw@bridge.example.com')).toEqual(['server.publicUrl: holds credentials: the upstream would be sent them with every callback, and logs would show them']);
    expect(parseConfig('server:\n  publicUrl: https://bridge.example.com/sb/\n', 'x.yaml', {}).server.publicUrl).toBe('https://bridge.example.com/sb/');
  });

  it('refuses a back-off whose longest wait is shorter than its first', () => {
    expect(problems('delivery:\n  backoff: { baseMs: 60000, maxMs: 1000 }\n')).toEqual([
      'delivery.backoff.maxMs: 1000 is less than delivery.backoff.baseMs (60000): the longest wait between tries cannot be shorter than the first',
    ]);
  });

  it('refuses the embedded sandbox on the server\'s own port', () => {
    expect(problems('server:\n  port: 8181\nsandbox:\n  port: 8181\n')).toEqual([
      'sandbox.port: the same port as server.port (8181): the embedded sandbox listens on one of its own (0 picks a free one)',
    ]);
  });

  it('names a missing environment variable, once', () => {
    const lines = problems('upstream:\n  baseUrl: https://school.example\n  token: ${SCHOOL_TOKEN}\n  clientSecret: s\n');
    expect(lines).toEqual(['upstream.token: environment variable SCHOOL_TOKEN is not set (set it, or write ${SCHOOL_TOKEN:-default})']);
  });

  it("suggests a connector's keys from its own type, down to its nested keys", () => {
    const lines = problems(
      'connectors:\n' +
        '  - { name: f, type: file, dir: /tmp/x, streams: [students], ledgerdir: /x, secret: s }\n' +
        '  - { name: a, type: accounting, url: "https://books.example/feed", secret: s, ledgerdir: /x }\n' +
        '  - { name: s, type: google-sheets, spreadsheetId: x, accessToken: t, streams: [students], tabs: { studnets: X } }\n',
    );
    expect(lines).toEqual([
      'connectors[0].ledgerdir: unknown key',
      'connectors[0].secret: unknown key',
      'connectors[1].ledgerdir: unknown key (did you mean "ledgerDir"?)',
      'connectors[2].tabs.studnets: unknown key (did you mean "students"?)',
    ]);
  });

  it('names a value a key does not take, with the values it does and the nearest', () => {
    const lines = problems(
      'poll:\n  initial: baselin\nlog:\n  level: verbose\nstore:\n  dir: ${DATA_DIR:-}\n' +
        'connectors:\n  - { name: f, type: file, dir: /tmp/x, streams: [students, invoice] }\n',
    );
    expect(lines).toEqual([
      'poll.initial: unknown value "baselin" (did you mean "baseline"?); one of: emit, baseline',
      'store.dir: empty (from ${DATA_DIR}): give it a value, or remove the key',
      'log.level: unknown value "verbose"; one of: fatal, error, warn, info, debug, trace, silent',
      'connectors[0].streams[1]: unknown value "invoice" (did you mean "invoices"?); one of: students, users, groups, invoices, events, roster',
    ]);
  });

  it('refuses a file that is not UTF-8, naming the line and the byte, rather than reading U+FFFD into a value', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'sb-config-utf8-'));
    try {
      const file = path.join(dir, 'latin1.yaml');
      writeFileSync(file, Buffer.concat([Buffer.from('store:\n  dir: /srv/caf'), Buffer.from([0xe9]), Buffer.from('\n')]));
      expect(() => loadConfig(file, {})).toThrow(expect.objectContaining({
        code: 'config.invalid',
        message: `${file}: invalid configuration:\n  line 2: not UTF-8 text (byte 0xe9 at offset 22): save the file as UTF-8`,
      }));
      writeFileSync(file, 'store:\n  dir: /srv/café\n');
      expect(loadConfig(file, {}).config.store.dir).toBe('/srv/café');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reads merge keys, as a Docker Compose file does', () => {
    const config = parseConfig(
      'x-files: &files { type: file, streams: [students] }\nconnectors:\n  - { <<: *files, name: a, dir: /tmp/a }\n  - <<: *files\n    name: b\n    dir: /tmp/b\n',
      'x.yaml',
      {},
    );
    expect(config.connectors.map((c) => [c.name, c.type, (c as { dir: string }).dir])).toEqual([['a', 'file', '/tmp/a'], ['b', 'file', '/tmp/b']]);
  });

  it('refuses, as an invalid config, YAML whose aliases expand without bound', () => {
    const bomb = ['a: &a [x, x, x, x, x, x, x, x, x, x]', 'b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]', 'c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]', 'd: [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]'].join('\n');
    expect(() => parseConfig(bomb, 'bomb.yaml', {})).toThrow(expect.objectContaining({ code: 'config.invalid', message: expect.stringMatching(/^bomb\.yaml: invalid configuration:\n {2}cannot read it as YAML: /) }));
  });

  it('names every variable of a chain of defaults none of which is set', () => {
    expect(problems('store:\n  dir: ${DATA_DIR:-${STATE_DIR}}\n')).toEqual([
      'store.dir: neither DATA_DIR nor its default STATE_DIR is set (set one, or write ${STATE_DIR:-default})',
    ]);
  });

  it('refuses a reference that is not whole, quoting it unless its key holds a secret', () => {
    const lines = problems('store:\n  dir: ${DATA_DIR:-${STATE_DIR:-/var/lib/x}\nupstream:\n  baseUrl: https://school.example\n  clientId: c\n  clientSecret: ${SECRET:?set it}\n');
    expect(lines).toEqual([
      'store.dir: "${DATA_DIR:-${STATE_DIR:-/var/lib/x}" is not a whole reference to a variable: write ${NAME} or ${NAME:-default} (a default may hold one: ${A:-${B}})',
      'upstream.clientSecret: its value is not a whole reference to a variable: write ${NAME} or ${NAME:-default} (a default may hold one: ${A:-${B}})',
    ]);
  });

  it('expands variables, with defaults, and reads numbers from them', () => {
    const config = parseConfig('server:\n  port: ${PORT:-9090}\n  adminToken: ${ADMIN:-}\n', 'x.yaml', { PORT: '8181' });
    expect(config.server.port).toBe(8181);
    expect(config.server.adminToken).toBeUndefined();
  });

  it('refuses an admin token shorter than 24 characters, naming the key', () => {
    const admin = (token: string) => `server:\n  adminToken: "${token}"\n`;
    expect(problems(admin('x'.repeat(23)))).toEqual([
      'server.adminToken: at least 24 characters (e.g. `openssl rand -hex 24`), or leave it empty to disable /admin',
    ]);
    expect(parseConfig(admin('x'.repeat(24)), 'x.yaml', {}).server.adminToken).toBe('x'.repeat(24));
    expect(parseConfig(admin(''), 'x.yaml', {}).server.adminToken).toBeUndefined();
  });

  it('rejects a bad cron expression, timezone and url', () => {
    const text = 'poll:\n  schedule: "every minute"\n  timezone: Mars/Olympus\nupstream:\n  baseUrl: ftp://x\n  token: t\n';
    const lines = problems(text);
    expect(lines).toContain('poll.schedule: not a valid cron expression (5 fields, or 6 with seconds)');
    expect(lines).toContain('poll.timezone: not a known IANA timezone (e.g. Europe/Warsaw)');
    expect(lines).toContain('upstream.baseUrl: must be an http(s) URL');
  });

  it('accepts 6-field cron expressions', () => {
    expect(parseConfig('poll:\n  schedule: "*/30 * * * * *"\n', 'x.yaml', {}).poll.schedule).toBe('*/30 * * * * *');
  });

  it('needs credentials for a real upstream', () => {
    expect(problems('upstream:\n  baseUrl: https://school.example\n')).toEqual([
      'upstream.token: required: set upstream.token, or upstream.clientId and upstream.clientSecret',
      'upstream.clientSecret: required: webhook deliveries are verified with the client secret (or set webhooks.events: [])',
    ]);
    // A client id without its secret: the secret is named, once, and the variable that left it empty.
    const pair = 'upstream:\n  baseUrl: https://school.example\n  clientId: ${ID}\n  clientSecret: ${SECRET}\n';
    expect(problems(pair, { ID: 'id', SECRET: '' })).toEqual(['upstream.clientSecret: required with upstream.clientId (or set upstream.token) (from ${SECRET}, which is set but empty)']);
    expect(problems(pair.replace('${SECRET}', '""'), { ID: 'id' })).toEqual(['upstream.clientSecret: required with upstream.clientId (or set upstream.token)']);
    // An empty default is no variable set but empty: nothing is claimed of it.
    expect(problems('upstream:\n  baseUrl: https://school.example\n  token: ${TOKEN:-}\n', {})).toEqual([
      'upstream.token: required: set upstream.token, or upstream.clientId and upstream.clientSecret',
      'upstream.clientSecret: required: webhook deliveries are verified with the client secret (or set webhooks.events: [])',
    ]);
  });

  it('rejects duplicate connector names', () => {
    const text = 'connectors:\n  - { name: a, type: file, streams: [students] }\n  - { name: a, type: file, streams: [users], dir: users }\n';
    expect(problems(text)).toEqual(['connectors[1].name: duplicate name (also connectors[0])']);
  });

  it('masks secrets on the lines a YAML error shows, as config check does', () => {
    const shown = (text: string) => problems(text).join('\n');
    const lines = shown('upstream:\n  clientSecret: hunter2-SECRET\n  token: tok-SECRET\n   x: 1\n');
    expect(lines).toContain('2 |   clientSecret: ***');
    expect(lines).toContain('3 |   token: ***');
    expect(shown('server:\n  adminToken: "abcdefghijklmnop\n  port: 1\n')).toContain('adminToken: "***');
    const flow = shown('connectors:\n  - { name: h, type: webhook, url: "https://hooks.example/abc/def", secret: s3cr3tvalue }\n  - [\n');
    expect(flow).toContain('url: "https://hooks.example/***", secret: ***');
    expect(shown('connectors:\n  - name: h\n    headers:\n      X-Api-Key: verysecret\n    bad: [\n')).toContain('X-Api-Key: ***');
    expect(shown('store:\n  url: postgres://app:pa55word@db/x\n  dir: [\n')).toContain('url: postgres://app:***@db/x');
    expect(shown('upstream:\n  clientSecret: hunter2-SECRET\n  token: tok-SECRET\n   x: 1\n')).not.toMatch(/hunter2|tok-SECRET/);
    // The first key of a flow map, a value on the next line, a list's items, a value holding # or a comma.
    for (const [text, secret] of [
      ['upstream: {clientSecret: TOPSECRET}\n  x: [\n', 'TOPSECRET'],
      ['store: { url: "postgres://u:PGPASS@h/db" }\n  x: [\n', 'PGPASS'],
      ['upstream:\n  clientSecret:\n    NEXTLINE\n  x: [\n', 'NEXTLINE'],
      ['webhooks:\n  previousSecrets:\n  - OLDSECRET2\n  x: [\n', 'OLDSECRET2'],
      ['webhooks:\n  previousSecrets:\n    - OLDSECRET3\n  x: [\n', 'OLDSECRET3'],
      ['store:\n  url: postgres://u:PG/PA#SS@h/db\n  x: [\n', 'PA#SS'],
      ['upstream:\n  clientSecret: abc,defgh #c\n  x: [\n', 'defgh'],
    ] as const) {
      expect(shown(text), text).not.toContain(secret);
      expect(shown(text), text).toContain('***');
    }
  });

  it('reports a YAML syntax error once, with its line and a caret under the spot', () => {
    expect(problems('server:\n  port: 8080\n  host: [unclosed\nstore:\n  dir: ./d\n')).toEqual([
      'not valid YAML at line 4, column 1: Flow sequence in block collection must be sufficiently indented and end with a ]',
      '  2 |   port: 8080',
      '  3 |   host: [unclosed',
      '  4 | store:',
      '    | ^',
    ]);
    const [first, ...snippet] = problems('a: 1\n b: 2\nc:\n\t- x\n');
    expect(first).toMatch(/^not valid YAML at line 1, column 4: .* \(2 more after it; fix this one first\)$/);
    expect(snippet).toEqual(['  1 | a: 1', '    |    ^']);
  });

  it("says that a second document begins, not which of the library's functions would read it", () => {
    expect(problems('store: { dir: ./d }\n---\nlog: { level: info }\n')[0]).toBe(
      'not valid YAML at line 2, column 1: a second document begins here (a line "---"): a config is one document; join them, or remove the "---"',
    );
  });

  it('names a mistyped connector type and suggests the right one', () => {
    expect(problems('connectors:\n  - { name: f, type: fiel, streams: [students] }\n')).toEqual([
      'connectors[0].type: unknown value "fiel" (did you mean "file"?); one of: file, webhook, google-sheets, accounting',
    ]);
    expect(problems('connectors:\n  - { name: f, type: ftp, streams: [students] }\n')).toEqual([
      'connectors[0].type: unknown value "ftp"; one of: file, webhook, google-sheets, accounting',
    ]);
  });

  it('validates the shipped configs', () => {
    for (const file of ['config/default.yaml', 'config/example.production.yaml', 'config/replicas.yaml']) {
      const env = {
        SCHOOLBRIDGE_CLIENT_ID: 'id', SCHOOLBRIDGE_CLIENT_SECRET: 'secret', SCHOOLBRIDGE_ACCOUNTING_SECRET: 'a', SCHOOLBRIDGE_SPREADSHEET_ID: 'sheet',
        SCHOOLBRIDGE_UPSTREAM_URL: 'https://school.example', SCHOOLBRIDGE_PUBLIC_URL: 'https://bridge.example', DATABASE_URL: 'postgres://u:p@db:5432/sb',
      };
      expect(() => parseConfig(readFileSync(file, 'utf8'), file, env)).not.toThrow();
    }
  });
});

describe('resolveConfigPath', () => {
  it('refuses an empty --config rather than taking the embedded default', () => {
    expect(() => resolveConfigPath('', {}, '/srv')).toThrow(expect.objectContaining({ code: 'config.unreadable', message: expect.stringContaining('--config names no file') }));
    expect(() => resolveConfigPath('  ', {}, '/srv')).toThrow(/--config names no file/);
    expect(resolveConfigPath('sb.yaml', {}, '/srv')).toBe('/srv/sb.yaml');
  });
});

describe('maskSecrets', () => {
  it('masks every secret, keeps everything else', () => {
    const config = parseConfig(
      'upstream:\n  baseUrl: https://s.example\n  clientId: id\n  clientSecret: cs-123\n  token: tok-456\nserver:\n  adminToken: adm-789-adm-789-adm-789-adm\nwebhooks:\n  previousSecrets: [old-1]\nconnectors:\n  - { name: h, type: webhook, streams: [invoices], url: "https://h.example", secret: hook-000, headers: { x-api-key: key-111 } }\n',
      'x.yaml',
      {},
    );
    const text = JSON.stringify(maskSecrets(config));
    for (const secret of ['cs-123', 'tok-456', 'adm-789-adm-789-adm-789-adm', 'old-1', 'hook-000', 'key-111']) expect(text).not.toContain(secret);
    expect(text).toContain('https://s.example');
    expect(text).toContain('"clientId":"id"');
    expect(text).toContain('"x-api-key":"***"');
  });

  it('masks a URL password the URL parser gives up on (not percent-encoded)', () => {
    for (const url of ['postgres://spec:Secr/t99@127.0.0.1:5432/sb', 'postgres://spec:Secr#t99@db/sb', 'postgres://spec:p@ss:w/rd#%?&x@db:5432/sb', 'postgres://spec:Se@c/ret@db/sb']) {
      const masked = maskSecrets({ store: { driver: 'postgres', url } }) as { store: { url: string } };
      expect(masked.store.url).toMatch(/^postgres:\/\/spec:\*\*\*@db|^postgres:\/\/spec:\*\*\*@127\.0\.0\.1/);
      expect(masked.store.url).not.toMatch(/Secr|ss:w/);
      expect([...secretValues({ url })].some((secret) => url.includes(`:${secret}@`))).toBe(true);
    }
    // As store.url it is refused, with the fix, and not shown.
    const lines = problems('store:\n  driver: postgres\n  url: "postgres://spec:Secr/t99@db/sb"\n');
    expect(lines).toEqual(['store.url: cannot be read as a URL: percent-encode the special characters of the user name and password (/ as %2F, # as %23, ? as %3F, @ as %40, : as %3A)']);
    // An @ in it is read as the end of the password, and what follows as the host: refused too.
    expect(problems('store:\n  driver: postgres\n  url: "postgres://spec:Se@c/ret@db/sb"\n')).toEqual(lines);
  });

  it('masks a password given in a URL\'s query, which the PostgreSQL client reads as the password', () => {
    const url = 'postgres://u:pw-in-userinfo@h:5432/db?sslmode=disable&password=pw%2Fin-query&application_name=sb';
    const masked = maskSecrets({ store: { driver: 'postgres', url } }) as { store: { url: string } };
    expect(masked.store.url).toBe('postgres://u:***@h:5432/db?sslmode=disable&password=***&application_name=sb');
    // A user with no password in the user info, and the parameter's name written in capitals.
    expect(maskSecrets('postgres://u@h/db?PASSWORD=s3cret-q#f')).toBe('postgres://u@h/db?PASSWORD=***#f');
    // Texts that quote the URL (an error naming it) mask the value as written and as decoded.
    expect([...secretValues({ url })]).toEqual(expect.arrayContaining(['pw-in-userinfo', 'pw%2Fin-query', 'pw/in-query']));
    // Other parameters and URLs without secrets stay as written.
    expect(maskSecrets('postgres://u@h/db?sslmode=require')).toBe('postgres://u@h/db?sslmode=require');
  });

  it('masks the path and query of a connector URL, which can be its credential', () => {
    const config = parseConfig(
      'connectors:\n  - { name: zap, type: webhook, streams: [invoices], url: "https://u:pw-s3cr3t@hooks.zapier.com/hooks/catch/123/abc-s3cr3t/?k=q-s3cr3t", secret: s }\n  - { name: plain, type: webhook, streams: [invoices], url: "https://plain.example", secret: s }\n',
      'x.yaml',
      {},
    );
    const [zap, plain] = (maskSecrets(config) as { connectors: { url: string }[] }).connectors;
    expect(zap!.url).toBe('https://u:***@hooks.zapier.com/***');
    expect(plain!.url).toBe('https://plain.example');
  });
});
