import { Agent, request } from 'undici';
import { createSandbox } from '/work/main/src/sandbox/index.ts';
import { createUpstreamClient } from '/work/main/src/upstream/index.ts';
import { ListScanner } from '/work/main/src/upstream/list-scanner.ts';
const sandbox = createSandbox({ students: 100000, staticToken: 't' });
await sandbox.start();
const agent = new Agent();
const res = await request(`${sandbox.url}/api/v2/students`, { dispatcher: agent, headers: { authorization: 'Bearer t' } });
const buf = Buffer.from(await res.body.arrayBuffer());
console.log('bytes', buf.length);
for (let r = 0; r < 2; r++) {
  let t = performance.now(); JSON.parse(buf.toString()); console.log('JSON.parse whole', (performance.now() - t).toFixed(0));
  t = performance.now(); const sc = new ListScanner(['data', 'students']); let n = 0; for (let o = 0; o < buf.length; o += 262144) n += sc.push(buf.subarray(o, o + 262144)).length; sc.end(); console.log('scanner+parse', (performance.now() - t).toFixed(0), n);
  const client = createUpstreamClient({ baseUrl: sandbox.url, auth: { token: 't' }, dispatcher: agent, timeoutMs: 600_000 });
  t = performance.now(); let m = 0; await client.scanStudents(() => (s) => { m++; JSON.stringify(s); }); console.log('client scan + stringify', (performance.now() - t).toFixed(0), m);
}
await sandbox.stop(); await agent.close();
