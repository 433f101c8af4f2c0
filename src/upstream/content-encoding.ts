import { pipeline, type Transform } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { BridgeError } from '../errors.js';
import type { BodyStream } from './http.js';

/**
 * An answer's body as the service wrote it. The daemon asks for no encoding (it sends no
 * Accept-Encoding), but a proxy in front of the service may compress anyway: a gzip, deflate or
 * brotli body is decoded here rather than read as JSON that is not UTF-8. Several codings are undone
 * last first, as the header lists them in the order they were applied. Any other coding is refused
 * by name before a byte is read.
 */
export function decodedBody(body: BodyStream, header: string | string[] | undefined): BodyStream {
  const codings = [header].flat().filter((value): value is string => value !== undefined)
    .flatMap((value) => value.split(','))
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== '' && coding !== 'identity');
  if (codings.length === 0) return body;
  const decoders = codings.reverse().map((coding) => decoderFor(coding));
  // pipeline destroys every stage with the first error: a body that stops (a timeout, a reset)
  // ends the reader's iteration with its own error, as an undecoded body does.
  return pipeline([body, ...decoders], () => {}) as Transform;
}

function decoderFor(coding: string): Transform {
  const decoder = coding === 'gzip' || coding === 'x-gzip' ? createGunzip()
    : coding === 'deflate' ? createInflate()
      : coding === 'br' ? createBrotliDecompress()
        : undefined;
  if (!decoder) {
    throw new BridgeError('upstream.invalid_response', `upstream answered with Content-Encoding ${coding.slice(0, 40)}, which the daemon cannot decode (it asks for none; gzip, deflate and br are decoded)`);
  }
  return decoder;
}

/** Whether `error` is a decoder's: the body says it is compressed and is not, or is cut short. */
export function isDecodingError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code.startsWith('Z_') || (code.startsWith('ERR_') && (error as Error).message === 'Decompression failed'));
}
