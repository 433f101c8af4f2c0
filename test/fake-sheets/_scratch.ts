import { sheets } from '@googleapis/sheets';
import { OAuth2Client, JWT } from 'google-auth-library';
import { generateKeyPairSync } from 'node:crypto';
import { startFakeSheets } from './index.js';

const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const fake = await startFakeSheets({ tokens: ['tok'], serviceAccounts: [{ email: 'sa@x.iam', publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }) as string }] });
fake.createSpreadsheet('abc');
const auth = new OAuth2Client();
auth.setCredentials({ access_token: 'tok' });
const api = sheets({ version: 'v4', auth, rootUrl: fake.rootUrl + 'ignored/path/', retry: false } as any);
const r = await api.spreadsheets.get({ spreadsheetId: 'abc' });
console.log(r.status, JSON.stringify(r.data), r.config.url);
await api.spreadsheets.values.update({ spreadsheetId: 'abc', range: "'Sheet1'!A1:C1", valueInputOption: 'RAW', requestBody: { values: [['00123', '=1+1', 5]] } });
console.log(JSON.stringify((await api.spreadsheets.values.batchGet({ spreadsheetId: 'abc', ranges: ["'Sheet1'!1:1", "'Sheet1'!B:B"], valueRenderOption: 'UNFORMATTED_VALUE' })).data));
fake.failNext(429, { retryAfter: '7' });
try { await api.spreadsheets.values.get({ spreadsheetId: 'abc', range: 'Sheet1' }); } catch (e: any) { console.log('ERR', e.constructor.name, e.message, e.status, e.code, e.response?.headers?.get?.('retry-after'), JSON.stringify(e.response?.data)); }
try { await api.spreadsheets.values.get({ spreadsheetId: 'abc', range: 'Nope!A1' }); } catch (e: any) { console.log('ERR', e.message, e.status, e.code); }
const jwt = new JWT({ email: 'sa@x.iam', key: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string, scopes: ['https://www.googleapis.com/auth/spreadsheets'], useJWTAccessWithScope: true }); jwt.useJWTAccessWithScope = true;
const api2 = sheets({ version: 'v4', auth: jwt, rootUrl: fake.rootUrl, retry: false } as any);
const r2 = await api2.spreadsheets.get({ spreadsheetId: 'abc' });
console.log('jwt', r2.status);
const h = await jwt.getRequestHeaders('https://sheets.googleapis.com/');
console.log(JSON.parse(Buffer.from(h.get('authorization')!.split('.')[1]!, 'base64url').toString()));
const bad = new JWT({ email: 'sa@x.iam', key: 'garbage', scopes: ['https://www.googleapis.com/auth/spreadsheets'], useJWTAccessWithScope: true }); bad.useJWTAccessWithScope = true;
try { await sheets({ version: 'v4', auth: bad, rootUrl: fake.rootUrl } as any).spreadsheets.get({ spreadsheetId: 'abc' }); } catch (e: any) { console.log('BADKEY', e.constructor.name, e.message, e.code); }
console.log(fake.calls);
await fake.close();
