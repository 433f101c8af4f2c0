/**
 * Builds the Google client. Auth is a ready access token, or a service-account key signed locally
 * as a self-signed JWT with the spreadsheets scope (`useJWTAccessWithScope`), so no token endpoint
 * is ever called: the key file's `token_uri` would be ignored anyway (gtoken has Google's URL
 * built in). HTTP goes through undici with the daemon's dispatcher instead of gaxios' node-fetch,
 * and gaxios' own retry is off: it never retries POST and ignores Retry-After, the outbox does better.
 * The Google client library is loaded with the first client: a daemon without a Sheets connector,
 * and every command, start without it.
 */
import { readFile } from 'node:fs/promises';
import type { auth as GoogleAuth, sheets_v4 } from '@googleapis/sheets';
import { fetch as undiciFetch, type Dispatcher } from 'undici';
import { BridgeError } from '../../src/errors.js';

export const SHEETS_SCOPE = 'https://www.googleapis.com/auth/spreadsheets';

export interface ClientOptions {
  credentialsFile?: string | undefined;
  accessToken?: string | undefined;
  rootUrl?: string | undefined;
  timeoutMs: number;
  dispatcher: Dispatcher;
}

export interface SheetsClient {
  api: sheets_v4.Sheets;
  /** The service account's e-mail (what the spreadsheet must be shared with), when there is one. */
  email: string | undefined;
}

// google-auth-library is not our direct dependency; its classes come through @googleapis/sheets.
type JWT = InstanceType<typeof GoogleAuth.JWT>;
type OAuth2Client = InstanceType<typeof GoogleAuth.OAuth2>;

async function serviceAccount(googleAuth: typeof GoogleAuth, file: string): Promise<JWT> {
  let key: { type?: unknown; client_email?: unknown; private_key?: unknown; private_key_id?: unknown };
  try {
    key = JSON.parse(await readFile(file, 'utf8')) as typeof key;
  } catch (error) {
    // Retried, as a write of the file connector is: the file is read again at each try, and a key
    // mounted late (a secret volume) or put in place after the start is then found.
    throw new BridgeError('sheets.credentials', `cannot read the service-account key ${file}: ${(error as Error).message}`, { cause: error, retryable: true });
  }
  if (key.type !== 'service_account' || typeof key.client_email !== 'string' || typeof key.private_key !== 'string') {
    throw new BridgeError('sheets.credentials', `${file} is not a service-account JSON key (needs type "service_account", client_email, private_key)`, { retryable: true });
  }
  const jwt = new googleAuth.JWT({
    email: key.client_email,
    key: key.private_key,
    keyId: typeof key.private_key_id === 'string' ? key.private_key_id : undefined,
    scopes: [SHEETS_SCOPE],
  });
  // Not a constructor option in google-auth-library 10: it must be set on the instance.
  jwt.useJWTAccessWithScope = true;
  return jwt;
}

export async function createSheetsClient(options: ClientOptions): Promise<SheetsClient> {
  const { auth: googleAuth, sheets } = await import('@googleapis/sheets');
  let auth: OAuth2Client;
  let email: string | undefined;
  if (options.credentialsFile) {
    const jwt = await serviceAccount(googleAuth, options.credentialsFile);
    auth = jwt;
    email = jwt.email;
  } else if (options.accessToken) {
    auth = new googleAuth.OAuth2();
    auth.setCredentials({ access_token: options.accessToken });
  } else {
    throw new BridgeError('sheets.credentials', 'set credentialsFile or accessToken');
  }
  const dispatcher = options.dispatcher;
  const fetchImplementation = ((input: string | URL, init?: RequestInit) =>
    undiciFetch(input, { method: init?.method, headers: init?.headers as never, body: init?.body as never, signal: init?.signal ?? null, dispatcher })) as unknown as typeof fetch;
  const api = sheets({
    version: 'v4',
    auth,
    ...(options.rootUrl ? { rootUrl: options.rootUrl } : {}),
    retry: false,
    timeout: options.timeoutMs,
    fetchImplementation,
  });
  return { api, email };
}
