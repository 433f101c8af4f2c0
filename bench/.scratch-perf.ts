import { createServer } from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Agent, fetch } from 'undici';
import { createUpstreamClient } from '../src/upstream/index.js';

const N = Number(process.argv[2] ?? 100000);
const person = (id: number, role: string, parent: unknown) => ({
  id, login: `login${id}`, name: `Name ${id}`, firstName: 'Zażółć', lastName: `Kowalski${id}`, fullname: `Zażółć Kowalski${id}`,
  systemRole: role, isArchived: 0, photo: null, language: 'pl_PL', tosAccepted: 1, type: 0, typeName: 'normal',
  createdAt: '2024-01-01 10:00:00', updatedAt: '2024-02-01 10:00:00',
  additionalData: { id, phone: '+48 600 000 000', mobile: null, email: `s${id}@example.com`, skype: null, street: 'Kwiatowa 4/5 ', zipCode: '01-123 ', city: 'Warszawa',
    country: null, post: null, province: null, pesel: null, nipNumber: null, birthDate: null, birthPlace: null, description: null,
    billingName: null, billingStreet: null, billingCity: null, billingZipCode: null, billingNipNumber: null, billingPesel: null, billingEmail: null,
    createdAt: '2024-01-01 10:00:00', updatedAt: '2024-01-01 10:00:00' },
  parentUser: parent,
});
const parts: Buffer[] = [Buffer.from('{"data":{"students":[')];
for (let i = 1; i <= N; i++) {
  const s = { id: i, isAdult: 0, isActive: 1, createdAt: '2024-01-01 10:00:00', updatedAt: '2024-01-01 10:00:00', user: person(i * 2, 'student', person(i * 2 + 1, 'parent', null)) };
  parts.push(Buffer.from((i > 1 ? ',' : '') + JSON.stringify(s)));
}
parts.push(Buffer.from(']}}'));
const body = Buffer.concat(parts);
console.log('bytes', body.length);
const server = createServer((req, res) => { res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length }); res.end(body); });
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const url = `http://127.0.0.1:${(server.address() as any).port}`;
const agent = new Agent();
const h = monitorEventLoopDelay({ resolution: 1 });
async function phase(name: string, run: () => Promise<number>) {
  h.reset(); h.enable();
  const t = performance.now();
  const n = await run();
  h.disable();
  console.log(name, n, 'ms', (performance.now() - t).toFixed(0), 'maxStall', (h.max / 1e6).toFixed(1), 'rss', (process.memoryUsage().rss / 1e6).toFixed(0));
}
const client = createUpstreamClient({ baseUrl: url, auth: { token: 'x' }, dispatcher: agent, timeoutMs: 120000 });
for (let k = 0; k < 2; k++) {
  await phase('baseline', async () => { const r = await fetch(`${url}/api/v2/students`, { dispatcher: agent }); return JSON.parse(await r.text()).data.students.length; });
  await phase('client', async () => (await client.listStudents()).length);
}
server.close(); await agent.close();
