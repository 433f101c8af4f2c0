/**
 * A URL's `user:password@`, sent as HTTP Basic authentication, as curl and browsers do: undici
 * sends neither the URL's credentials nor an error about them, so a receiver that needs them
 * would answer 401 to every delivery. An `Authorization` header configured for the connector
 * wins. The URL is returned without them.
 */
export function withUrlCredentials(url: string, headers: Record<string, string> = {}): { url: string; headers: Record<string, string> } {
  if (!URL.canParse(url)) return { url, headers };
  const parsed = new URL(url);
  if (parsed.username === '' && parsed.password === '') return { url, headers };
  const credentials = `${decodeURIComponent(parsed.username)}:${decodeURIComponent(parsed.password)}`;
  parsed.username = '';
  parsed.password = '';
  const configured = Object.keys(headers).some((name) => name.toLowerCase() === 'authorization');
  return { url: parsed.href, headers: configured ? headers : { ...headers, authorization: `Basic ${Buffer.from(credentials, 'utf8').toString('base64')}` } };
}
