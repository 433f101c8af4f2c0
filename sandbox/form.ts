/**
 * Form bodies of write requests: the service takes multipart *or* urlencoded fields (docs/upstream.md).
 * Fastify parses neither multipart nor (without a plugin) urlencoded, and the fields are few and
 * small, so a strict little parser is enough. File parts are read as text like any other field.
 */
export type FormFields = Record<string, string>;

export function parseUrlEncoded(body: string): FormFields {
  const fields: FormFields = {};
  for (const [key, value] of new URLSearchParams(body)) fields[key] = value;
  return fields;
}

/** Throws on a body that is not multipart with the boundary of `contentType`. */
export function parseMultipart(body: Buffer, contentType: string): FormFields {
  const match = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  const boundary = match?.[1] ?? match?.[2];
  if (!boundary) throw new Error('multipart body without a boundary');
  const delimiter = Buffer.from(`--${boundary}`);
  const fields: FormFields = {};
  let start = body.indexOf(delimiter);
  if (start < 0) throw new Error('multipart body without its boundary');
  for (;;) {
    start += delimiter.length;
    // "--" after a delimiter closes the body.
    if (body.subarray(start, start + 2).toString() === '--') return fields;
    const next = body.indexOf(delimiter, start);
    if (next < 0) throw new Error('multipart body is not closed');
    readPart(body.subarray(start, next), fields);
    start = next;
  }
}

function readPart(part: Buffer, fields: FormFields): void {
  // A part is CRLF, headers, CRLF CRLF, content, CRLF.
  const headerEnd = part.indexOf('\r\n\r\n');
  if (headerEnd < 0) throw new Error('multipart part without headers');
  const headers = part.subarray(0, headerEnd).toString('utf8');
  const name = /content-disposition:[^\r\n]*\bname="([^"]*)"/i.exec(headers)?.[1];
  if (name === undefined) throw new Error('multipart part without a name');
  let content = part.subarray(headerEnd + 4);
  if (content.subarray(-2).toString() === '\r\n') content = content.subarray(0, -2);
  fields[name] = content.toString('utf8');
}
