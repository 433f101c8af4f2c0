import { describe, expect, it } from 'vitest';
import { parseConfig } from './load.js';
import { configWarnings } from './warnings.js';

const warnings = (text: string) => configWarnings(parseConfig(text, 'x.yaml', {}));
const FILES = 'connectors:\n  - { name: f, type: file, streams: [students] }\n';
const UPSTREAM = 'upstream: { baseUrl: "https://school.example", token: t, clientSecret: s }\n';

describe('configWarnings', () => {
  it('warns of a config with no connector: what it finds goes nowhere', () => {
    expect(warnings('')).toEqual([expect.stringMatching(/^connectors: none: polls and webhooks are recorded as seen but delivered nowhere/)]);
    expect(warnings(FILES)).toEqual([]);
  });

  it('warns of a callback URL on every interface the upstream cannot call', () => {
    expect(warnings(`${UPSTREAM}server: { host: 0.0.0.0, port: 8181 }\n${FILES}`)).toEqual([
      'server.publicUrl: not set, so the upstream is told to call http://0.0.0.0:8181/webhooks/v2, an address only this machine reaches; set the URL the upstream reaches this daemon at',
    ]);
    expect(warnings(`${UPSTREAM}${FILES}`)).toEqual([
      'server.publicUrl: not set, so the upstream is told to call http://127.0.0.1:8080/webhooks/v2, an address only this machine reaches; set the URL the upstream reaches this daemon at',
    ]);
    // With a public URL, the embedded sandbox or an upstream on this machine, or no webhooks, there is nothing to say.
    expect(warnings(`upstream: { baseUrl: "http://127.0.0.1:8090", token: t, clientSecret: s }\n${FILES}`)).toEqual([]);
    expect(warnings(`${UPSTREAM}server: { host: 0.0.0.0, publicUrl: "https://bridge.example" }\n${FILES}`)).toEqual([]);
    expect(warnings(`server: { host: 0.0.0.0 }\n${FILES}`)).toEqual([]);
    expect(warnings(`${UPSTREAM}webhooks: { events: [] }\nserver: { host: 0.0.0.0 }\n${FILES}`)).toEqual([]);
  });
});
