import { runNodeScript } from './node-script.js';

/**
 * The baseline bench:poll compares each cycle with: GET both lists and JSON.parse them, as a client with
 * no streaming would. It runs in a process of its own: in the daemon's process it would leave its parsed
 * lists for the daemon's garbage collector to reclaim during the very cycle it is compared with, and in a
 * worker thread its heap would count in the daemon's peak RSS. Timed in that process, from the first
 * request to the last parse, with undici's `request`; `token` is the sandbox's static bearer token.
 */
export function baseline(url: string, token: string): Promise<number> {
  const code = `
    const { Agent, request } = require('undici');
    (async () => {
      const dispatcher = new Agent();
      const started = performance.now();
      for (const route of ['/api/v2/students', '/api/v2/users']) {
        // A fresh connection each time (keep-alive sockets idle through a long cycle may close).
        const response = await request(process.argv[1] + route, { dispatcher, headers: { authorization: 'Bearer ' + process.argv[2], connection: 'close' } });
        JSON.parse(await response.body.text());
      }
      process.stdout.write(String(performance.now() - started));
      await dispatcher.close();
    })().catch((error) => { console.error(error); process.exit(1); });`;
  return runNodeScript(code, [url, token]).then(Number);
}

/**
 * The baseline of a phase: the median of `count` fetch-and-parse runs right before it. A single run
 * varies from one phase to the next on a shared machine, and each ratio would vary with it.
 */
export async function baselines(url: string, token: string, count: number): Promise<{ median: number; runs: number[] }> {
  const runs: number[] = [];
  for (let i = 0; i < count; i++) runs.push(await baseline(url, token));
  return { median: [...runs].sort((a, b) => a - b)[Math.floor(count / 2)]!, runs };
}
