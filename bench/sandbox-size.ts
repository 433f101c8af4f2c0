/**
 * How big and how fast the sandbox's lists are at benchmark size: starts a sandbox with
 * 100,000 students (200,000 users) and times GET /api/v2/students and /api/v2/users right after
 * start and again (cached chunks). Run: npx tsx bench/sandbox-size.ts [students]
 */
import { performance } from 'node:perf_hooks';
import { request } from 'undici';
import { createSandbox } from '../sandbox/index.js';

const students = Number(process.argv[2] ?? 100_000);

async function timeGet(url: string, token: string): Promise<{ bytes: number; ms: number; status: number }> {
  const started = performance.now();
  const response = await request(url, { headers: { authorization: `Bearer ${token}` } });
  let bytes = 0;
  for await (const chunk of response.body) bytes += (chunk as Buffer).length;
  return { bytes, ms: performance.now() - started, status: response.statusCode };
}

async function main(): Promise<void> {
  const generation = performance.now();
  const sandbox = createSandbox({ students, staticToken: 'bench' });
  const generatedMs = performance.now() - generation;
  await sandbox.start();
  const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
  console.log(`generated ${students} students in ${generatedMs.toFixed(0)} ms; rss ${mb(process.memoryUsage().rss)}`);
  try {
    for (const path of ['/api/v2/students', '/api/v2/users']) {
      // The first request races the start-up warm-up of the list caches; the second is served from them.
      for (const run of ['first', 'second']) {
        const { bytes, ms, status } = await timeGet(`${sandbox.url}${path}`, 'bench');
        console.log(`GET ${path} (${run}): ${status}, ${bytes} bytes (${mb(bytes)}) in ${ms.toFixed(0)} ms`);
      }
    }
    sandbox.control.updateStudent(sandbox.control.students()[500]?.id ?? 1, { lastName: 'Zmieniona' });
    const after = await timeGet(`${sandbox.url}/api/v2/students`, 'bench');
    console.log(`GET /api/v2/students after one change: ${after.bytes} bytes in ${after.ms.toFixed(0)} ms`);
    console.log(`rss ${mb(process.memoryUsage().rss)}`);
  } finally {
    await sandbox.stop();
  }
}

await main();
